"""The README and docs/: their generated blocks are the committed result files, rendered (bench/readme.py), so they
cannot drift; the README keeps to its budgets (1,500 words, a screenshot in its first 30 lines, "Start here" for
three readers, "What we found" in 120 words opening on its conclusion); every link leads somewhere; and nothing the
README held at 44eb4d0 (main before it was cut down, issue 51) was lost on the way to docs/."""

import json
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from bench import readme
from bench.readme import (
    FINDINGS,
    conclusion_lines,
    corpora,
    fit_lines,
    found_lines,
    models_of,
    other_sweep_lines,
    other_tune_lines,
    rises_lines,
    sweep_lines,
    sweeps_lines,
    thresholds_lines,
    tune_lines,
    write_found,
)
from components.pages import PAGES
from model_utils.core.names import GEMMA, model_as_run, model_name
from model_utils.core.records.retrieval import RetrievalDocument
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import Dominant, LeverKind
from model_utils.experiments.committed import FITS, LMEVALS, PROBES, SWEEPS, TUNES
from model_utils.verdicts import words

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOCS = sorted((ROOT / "docs").glob("*.md"))


def block(name: str, text: str | None = None) -> list[str]:
    text = FINDINGS.read_text() if text is None else text
    match = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", text, re.S)
    assert match, f"no {name} block"
    return match.group(1).split("\n")


def section(heading: str, text: str = README) -> str:
    """The text under a `## ` heading, up to the next one."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"no section {heading!r}"
    return match.group(1)


def wc_words(text: str) -> int:
    """Words as `wc -w` counts them: runs of non-space characters."""
    return len(text.split())


# === The blocks are the committed files, rendered ====================================================================


def test_what_we_found_is_the_committed_tunes_and_probes_rendered():
    found = block("found", README)
    assert found == found_lines(corpora(TUNES.read()), PROBES.read())
    assert found[0] == words.found_conclusion(corpora(TUNES.read()))
    assert f"({readme.CHART})" in "\n".join(found) and "(docs/FINDINGS.md)" in found[-1]
    said = [line for line in found if line.startswith("- ")]
    assert 1 <= len(said) <= 3
    assert said[:2] == [f"- {bullet}" for bullet in words.found_bullets(corpora(TUNES.read()), PROBES.read())][:2]


def test_without_a_committed_probe_the_third_line_only_says_where_it_will_show(tmp_path):
    none = replace(PROBES, folder=tmp_path, first=tmp_path / "bundled.json").read()
    said = [line for line in found_lines(corpora(TUNES.read()), none) if line.startswith("- ")]
    assert f"({readme.PROBE_LINK})" in said[-1] and not re.search(r"\d", said[-1])  # no number, no finding
    committed = [line for line in block("found", README) if line.startswith("- ")]
    assert committed[-1] == f"- {words.found_bullets(corpora(TUNES.read()), PROBES.read())[-1]}" \
        if PROBES.read() else committed[-1] == said[-1]


def test_a_committed_probe_gives_the_third_bullet(tiny_retrieval_file, tmp_path):
    probes = tmp_path / "retrieval"
    probes.mkdir()
    probe = RetrievalDocument.from_dict(json.loads(tiny_retrieval_file.read_text()))
    (probes / "bundled.json").write_text(json.dumps(probe.to_dict(), allow_nan=False))
    found = corpora(TUNES.read())
    lines = found_lines(found, replace(PROBES, folder=probes, first=probes / "bundled.json").read())
    said = [line for line in lines if line.startswith("- ")]
    assert said == [f"- {bullet}" for bullet in words.found_bullets(found, [probe])]
    assert len(said) == 3 and readme.PROBE_LINK not in "\n".join(lines)


def found_in_copies(tmp_path, **folders) -> str:
    """FINDINGS as readme.write_found writes it into copies of the committed README and FINDINGS, reading the result
    folders given (probes=, lmevals=) instead of the committed ones."""
    findings, readme_file = tmp_path / "FINDINGS.md", tmp_path / "README.md"
    findings.write_text(FINDINGS.read_text())
    readme_file.write_text(README)
    readme.write_found(readme=readme_file, findings_file=findings, **folders)
    return findings.read_text()


def test_findings_set_each_committed_probe_out_in_full_or_say_there_is_none(tiny_retrieval_file, tmp_path):
    """FINDINGS' retrieval block is the committed probes' words.retrieval_findings under each model's name, or the
    line that none is committed; the file as committed is what the committed probes give."""
    assert block("retrieval") == readme.per_model(PROBES.read(), words.retrieval_findings, readme.NO_PROBE)
    probes = tmp_path / "retrieval"
    probes.mkdir()
    probe = RetrievalDocument.from_dict(json.loads(tiny_retrieval_file.read_text()))
    (probes / "bundled.json").write_text(json.dumps(probe.to_dict(), allow_nan=False))
    written = block("retrieval", found_in_copies(tmp_path, probes=probes))
    assert written[0] == f"### {model_name(probe.model)}" and readme.NO_PROBE not in written
    assert f"- {words.reach_sentence(probe.model, probe.verdict)}" in written
    assert sum(line.startswith("| ") for line in written) == 1 + len(probe.curves)  # the header, a row per view


def test_findings_open_on_the_same_conclusion_and_what_it_rests_on():
    sweeps, summaries = SWEEPS.read(), TUNES.read()
    opening = FINDINGS.read_text().split("\n## ")[0]
    assert block("conclusion") == conclusion_lines(corpora(summaries), models_of(sweeps, summaries))
    assert block("conclusion")[0].startswith(f"**{words.found_conclusion(corpora(summaries))}**")
    assert "<!-- conclusion:start -->" in opening  # before any section
    scope = words.scope_sentence(models_of(sweeps, summaries))
    assert "with Python or numpy" in scope and all(name in scope for name in models_of(sweeps, summaries))
    assert "One model" not in FINDINGS.read_text() and "ship with Python:" not in FINDINGS.read_text()


def test_how_to_read_this_gives_both_rises_of_every_committed_verdict():
    sweeps, summaries = SWEEPS.read(), TUNES.read()
    rows = block("rises")
    assert rows == rises_lines(sweeps, summaries)
    assert len(rows) == 2 + sum(result.verdict is not None for result in (*sweeps, *summaries))
    text = section("How to read this", FINDINGS.read_text())
    assert "same words" in text and "earlier positions" in text and "(#thresholds)" in text
    bundled = TUNES.read_first().verdict
    assert f"{bundled.same_token_rise.rise:+.2f}" in rows[2] and f"{bundled.rise_against_earlier:+.2f}" in rows[2]


def test_the_thresholds_are_read_from_the_code():
    from model_utils.core import bootstrap, reach
    from model_utils.verdicts import decomposition, findings, layers, past
    from model_utils.verdicts.words import common, found

    rows = block("thresholds")
    assert rows == thresholds_lines()
    for module, name in ((past, "GONE"), (decomposition, "RECOVERS"), (reach, "REACH_SHARE"),
                         (bootstrap, "MIN_FOR_INTERVAL"), (common, "ALL_OF_IT"), (found, "HARDLY_HELPS"),
                         (layers, "ABOVE_UNIFORM"), (findings, "NEAR_UNIFORM"), (findings, "NEAR_ONE_HOT")):
        assert any(row.startswith(f"| `{name}` | {getattr(module, name):g} | `{module.__name__.replace('.', '/')}.py`")
                   for row in rows), name
    assert any(row.startswith("| `uniform_share()` |") for row in rows)


def test_the_context_length_block_is_the_committed_sweep():
    assert block("sweep") == sweep_lines(SweepDocument.from_dict(json.loads(SWEEPS.first.read_text())))


def test_findings_set_every_committed_sweep_side_by_side_one_row_each():
    sweeps = SWEEPS.read()
    assert sweeps[0] == SweepDocument.from_dict(json.loads(SWEEPS.first.read_text()))  # the bundled model's first
    assert len(sweeps) == len(list(SWEEPS.folder.glob("*.json")))
    lines = block("sweeps")
    assert lines == sweeps_lines(sweeps)
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| model |")]
    assert [row.split(" | ")[0] for row in rows] == [f"| {readme.model_name(sweep.model)}" for sweep in sweeps]


def test_the_findings_give_every_other_models_sweep_in_full():
    assert block("other-sweeps") == other_sweep_lines(SWEEPS.read()[1:])


def copies(tmp_path: Path) -> tuple[Path, Path]:
    """The README and FINDINGS as they are, in `tmp_path`, for write_found to rewrite."""
    (tmp_path / "README.md").write_text(README)
    (tmp_path / "FINDINGS.md").write_text(FINDINGS.read_text())
    return tmp_path / "README.md", tmp_path / "FINDINGS.md"


def test_with_a_second_model_findings_name_it_and_set_its_sweep_beside(other_sweeps, tmp_path):
    """A second model's sweep in the folder (the tiny Gemma 3's under Gemma 3 270M's name) and no corpus tune of it:
    the side-by-side table gains its row, the rises table its line, the scope names it; What we found stays the
    corpus's, and nothing outside the blocks changes."""
    readme_copy, findings_copy = copies(tmp_path)
    write_found(other_sweeps, SWEEPS.first, readme_copy, tunes=tmp_path / "no-tunes", probes=tmp_path / "no-probes",
                findings_file=findings_copy)
    written, sweeps = findings_copy.read_text(), replace(SWEEPS, folder=other_sweeps).read()
    assert [sweep.model for sweep in sweeps] == ["bundled", GEMMA]
    table = block("sweeps", written)
    assert table == sweeps_lines(sweeps) and table[-2].startswith("| SmolLM2-135M | 8,192 |")
    assert table[-1].startswith("| Gemma 3 270M | 64 |") and "| sliding 8: 0.000; global: 0." in table[-1]
    assert block("rises", written)[-1].startswith("| Gemma 3 270M | one text, ")
    assert (f"2 small models ({model_as_run('bundled', in_full=True)}; {model_as_run(GEMMA, in_full=True)}), each "
            "on texts that ship with Python or numpy") in block("conclusion", written)[0]
    assert "SmolLM2-135M-Instruct, a 4-bit (Q4_1) GGUF dequantized to float" in block("conclusion", written)[0]
    outside = re.compile(r"<!-- (\w+):start -->.*?<!-- \1:end -->", re.S)
    assert outside.sub("", written) == outside.sub("", FINDINGS.read_text())
    assert outside.sub("", readme_copy.read_text()) == outside.sub("", README)


def test_a_second_models_corpus_joins_the_conclusion(tmp_path):
    """With a corpus tune of a second model committed (the bundled summary under Gemma 3 270M's name), the
    conclusion judges both corpora and names both models."""
    gemma = replace(TUNES.read_first(), model=GEMMA)
    (tmp_path / "tunes" / "gemma").mkdir(parents=True)
    (tmp_path / "tunes" / "gemma" / "summary.json").write_text(json.dumps(gemma.to_dict(), allow_nan=False))
    readme_copy, findings_copy = copies(tmp_path)
    write_found(SWEEPS.folder, SWEEPS.first, readme_copy, tunes=tmp_path / "tunes", probes=tmp_path / "no-probes",
                findings_file=findings_copy)
    summaries = replace(TUNES, folder=tmp_path / "tunes").read()  # the committed bundled tune, then the folder's
    assert [summary.model for summary in summaries] == ["bundled", GEMMA]
    conclusion = block("found", readme_copy.read_text())[0]
    assert conclusion == words.found_conclusion(corpora(summaries))
    assert "SmolLM2-135M-Instruct (4-bit) and Gemma 3 270M base (4-bit) predict" in conclusion  # as they run


def test_the_corpus_block_is_the_committed_tune():
    assert block("tune") == tune_lines(TUNES.read_first(), SWEEPS.read())


def test_the_findings_give_every_other_models_corpus_in_full():
    assert block("other-tunes") == other_tune_lines(TUNES.read()[1:], SWEEPS.read())


def test_the_fit_block_is_the_committed_fits():
    fits = FITS.read()
    assert fits, "no committed fit under assets/fit"
    assert block("fit") == fit_lines(fits)


def test_the_timings_in_the_text_are_the_committed_benchmarks():
    """The cold start, the warm start and the warm-up, as the benchmarks wrote them into bench/timings.json,
    wherever README.md and docs/ quote them."""
    values = readme.figure_values()
    quoted = [found for path in readme.figure_files()
              for found in re.findall(r"<!-- figure:([a-z-]+) -->(.*?)<!-- /figure -->", path.read_text())]
    assert {name for name, _ in quoted} == set(values)
    assert all(value == values[name] for name, value in quoted), quoted


def test_a_benchmark_writes_its_own_timings_and_keeps_the_others(tmp_path):
    from bench.pages import server_warm_up_seconds
    from bench.timings import read_timings, record_timings

    timings = tmp_path / "timings.json"
    record_timings({"cold-start": 31.4, "warm-start": 0.44}, "make bench", timings)
    line = "warm-up done: 3 of 3 default views ready in 98.6 s; 4 model passes so far"
    record_timings({"warm-up": server_warm_up_seconds(line)}, "make bench-pages", timings)
    assert {name: entry["seconds"] for name, entry in read_timings(timings).items()} == {
        "cold-start": 31.4, "warm-start": 0.44, "warm-up": 98.6}
    assert read_timings(timings)["warm-up"]["command"] == "make bench-pages"
    assert readme.figure_values(timings) == {"cold-start": "about 31 s", "warm-start": "about 0.4 s",
                                             "warm-up": "about 99 s"}
    timings.write_text("{}")
    with pytest.raises(SystemExit, match="cold-start"):
        readme.figure_values(timings)


def test_the_sweep_block_says_saves_everywhere_and_names_every_schedule_with_its_parameter():
    from model_utils.core.rope import Rope
    from model_utils.core.views import View
    from tests.verdicts.synthetic import SCHEDULE, document, plain, yarn_rope

    written, _ = document([(1.0, plain([2.2, 2.5, 3.4, 4.0])), (1.25, plain([2.3, 2.6, 3.2, 3.7])),
                           (SCHEDULE, plain([2.1, 2.4, 3.3, 3.9])), (yarn_rope(1.0), plain([2.2, 2.3, 2.4, 2.5])),
                           (View(1.0, Rope("yarn", 2.0)), plain([2.1, 2.2, 2.3, 2.4]))])
    lines = sweep_lines(written)
    assert not any("NLL - T = 1" in line for line in lines)
    header = next(line for line in lines if line.startswith("| positions"))
    assert "| best T saves (95% interval) | yarn (scale=2) saves | yarn-rope (s=2) + T=1 saves | yarn (s=2) + T=1 " \
           "saves |" in header
    last = next(line for line in lines if line.startswith("| 1,792-2,047 (past)"))
    assert last.endswith("| +0.100 | +1.500 | +1.600 |")  # better than T = 1: positive
    bullets = [line for line in lines if line.startswith("- ")]
    assert bullets == [f"- {sentence}" for sentence in words.sentences(written.verdict)]  # the answer first
    assert bullets[0] == f"- {words.answer(written.verdict)}"
    assert "| " + " | ".join(words.decomposition_columns(written.verdict)) + " |" in lines
    own = next(row for row in written.verdict.decomposition.table if row.kind.value == "own_temperature")
    assert any(line.startswith(f"| {words.row_label(own)} | {words.row_what(own, written.verdict)} |")
               for line in lines)
    assert "saves = NLL at T = 1 minus NLL" in " ".join(line for line in lines if line.startswith("Per bucket"))


def test_the_corpus_block_leads_with_the_answer_then_the_gain_held_out_over_documents(summary_file):
    summary = TuneSummary.from_dict(json.loads(summary_file.read_text()))
    lines = tune_lines(summary)
    bullets = [line for line in lines if line.startswith("- ")]
    assert bullets == [f"- {sentence}" for sentence in words.sentences(summary.verdict)]
    assert bullets[1] == f"- {words.held_out_sentence(summary.verdict)}"  # held out over the 2 documents
    header = next(line for line in lines if line.startswith("| positions"))
    assert "yarn (scale=2) saves" in header and "logn (base=1024) saves" in header


def test_the_recipe_families_are_compared_only_where_the_results_hold_them():
    """The sweep block compares the recipe families (words.families_sentence) exactly when the committed sweep holds
    a distance remapping: it says what it holds, no more."""
    committed = SweepDocument.from_dict(json.loads(SWEEPS.first.read_text()))
    has_remaps = any(result.rope is not None and result.rope.remaps for result in committed.results)
    said = words.families_sentence(committed.verdict)
    assert (said is not None) == has_remaps
    assert said is None or f"- {said}" in block("sweep")


# === The README's budgets ============================================================================================


def test_the_readme_is_at_most_1500_words():
    assert wc_words(README) <= 1500, wc_words(README)


def test_a_screenshot_of_the_app_is_in_the_first_30_lines():
    pictures = re.findall(r"!\[[^\]]*\]\((assets/screenshots/[^)]+\.png)\)", "\n".join(README.split("\n")[:30]))
    assert pictures and all((ROOT / picture).is_file() for picture in pictures)


def test_the_readme_opens_on_what_the_tool_is_then_the_two_commands():
    opening = README.split("\n## ")[0]
    assert "temperature" in opening.split("![")[0] and "make run" in opening and "make test" in opening
    assert 2 <= len(re.findall(r"[.!?](?:\s|$)", opening.split("![")[0].split("\n", 1)[1])) <= 3  # 2-3 sentences


def test_start_here_has_a_path_for_each_of_three_readers():
    start = section("Start here")
    paths = re.split(r"^\*\*A ", start, flags=re.M)[1:]
    assert [path.split(" ")[0] for path in paths] == ["teacher", "researcher", "student"]
    teacher, researcher, student = paths
    assert all(what in teacher for what in ("make run", "Softmax lab", "Attention maps", "token view"))
    assert all(what in researcher for what in ("Context length", "model_utils sweep", "Retrieval"))
    assert "model_utils analyze" in student and "seconds" in student
    assert student.count("model_utils analyze") == 1 and "```\nbundled: " in student  # one command and its output


def test_what_we_found_is_at_most_120_words_and_opens_on_its_conclusion():
    found = section("What we found")
    said = re.sub(r"<!--.*?-->", "", found).strip()
    assert wc_words(said) <= 120, wc_words(said)
    assert said.startswith(words.found_conclusion(corpora(TUNES.read())))
    assert README.index("## Start here") < README.index("## What we found")


def test_one_line_per_page_and_one_line_per_document():
    pages = section("The pages")
    for page in PAGES:
        assert len([line for line in pages.split("\n") if line.startswith(f"- **{page.title}**")]) == 1, page.title
    more = section("More")
    for name in ("FINDINGS", "PAGES", "COMMAND_LINE", "MODELS", "TUNING", "PERFORMANCE", "DEPLOYING", "ARCHITECTURE"):
        assert len([line for line in more.split("\n") if line.startswith(f"- [docs/{name}.md](docs/{name}.md)")]) == 1


def test_the_readme_names_the_libraries_it_is_built_on():
    built_on = section("Built on").lower()
    for library in ("streamlit", "torch", "transformers", "plotly", "numpy", "pyarrow", "ray", "scipy",
                    "lm-evaluation-harness"):
        assert library in built_on, library


def test_the_commands_the_readme_gives_are_ones_the_command_line_takes():
    from model_utils.cli.parser import build_parser

    commands = re.findall(r"^\.venv/bin/python -m model_utils (.+?)(?<!\\)$", README.replace("\\\n    ", " "), re.M)
    assert len(commands) == 2
    for command in commands:
        build_parser().parse_args(command.split())


@pytest.mark.slow
def test_the_students_command_prints_what_the_readme_shows(bundled, capsys):
    """The analyze table in "Start here" is what the command prints (all but the seconds it took)."""
    from model_utils.__main__ import main

    student = section("Start here").split("**A student")[1]
    command = re.search(r"model_utils (analyze .+)", student).group(1)
    shown = re.search(r"```\n(bundled: .*?)\n```", student, re.S).group(1).split("\n")
    assert main(command.split()) == 0
    printed = capsys.readouterr().out.strip().split("\n")
    assert printed[1:] == shown[1:]
    assert printed[0].rsplit(",", 1)[0] == shown[0].rsplit(",", 1)[0]  # the header but its time


# === Every link leads somewhere ======================================================================================

# Files of the same issue that another branch brings (the pages' glossary): a link to them is checked once they are
# here.
ARRIVING = {ROOT / "docs" / "GLOSSARY.md"}


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings."""
    headings = re.findall(r"^#{1,6} (.+)$", re.sub(r"```.*?```", "", path.read_text(), flags=re.S), re.M)
    return {re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-") for heading in headings}


def test_every_relative_link_of_the_readme_and_docs_leads_somewhere():
    broken = []
    for path in [ROOT / "README.md", *DOCS]:
        text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            goes = (path.parent / file).resolve() if file else path
            if goes in ARRIVING and not goes.exists():
                continue
            if not goes.exists() or (anchor and goes.suffix == ".md" and anchor not in anchors(goes)):
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert not broken, broken


# === Nothing the README held at 44eb4d0 was lost =====================================================================

BEFORE = ROOT / "tests" / "support" / "readme_44eb4d0.json"  # its numbers and tables, by section (snapshot below)
# Where each section of the README went; the README keeps a short form of some.
MOVED = {
    "(opening)": ["README.md", "docs/PAGES.md"],
    "What we found": ["docs/FINDINGS.md"],
    "What am I looking at": ["docs/PAGES.md"],
    "Supported models": ["docs/MODELS.md"],
    "Gemma 3 270M, an optional second model": ["docs/MODELS.md"],
    "The command line and the Python API": ["docs/COMMAND_LINE.md"],
    "Past the trained length: what the bundled model does": ["docs/TUNING.md"],
    "Tuning on a corpus": ["docs/TUNING.md"],
    "Fitting a temperature": ["docs/TUNING.md"],
    "How it works, and what it is built on": ["docs/ARCHITECTURE.md"],
    "Performance": ["docs/PERFORMANCE.md"],
    "Deploying": ["docs/DEPLOYING.md"],
    "Tests": ["README.md", "docs/ARCHITECTURE.md"],
}
GENERATED = re.compile(r"<!-- (found|sweeps|bench):start -->.*?<!-- \1:end -->", re.S)
FIGURE = re.compile(r"<!-- figure:([a-z-]+) -->.*?<!-- /figure -->")
DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
OPENING = "(opening)"


def split_sections(text: str) -> dict[str, str]:
    """The README's text by `##` / `###` heading; what comes before the first, under OPENING."""
    sections, heading, fence = {OPENING: []}, OPENING, False
    for line in text.split("\n"):
        fence ^= line.startswith("```")
        if not fence and re.match(r"#{2,3} ", line):
            heading = line.lstrip("#").strip()
            sections[heading] = []
        sections[heading].append(line)
    return {name: "\n".join(lines) for name, lines in sections.items()}


def table_rows(text: str) -> list[list[str]]:
    """The cells of every table row (header rows included, separator rows not)."""
    rows = []
    for line in text.split("\n"):
        line = line.strip()
        if line.startswith("|") and not re.fullmatch(r"\|[-:| ]+\|", line):
            rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


def snapshot(text: str) -> dict:
    """What a README holds that must not be lost: per section, its numbers and its tables' cells, outside the
    blocks a generator rewrites (found, sweeps, bench: checked as regenerated); the figures it quotes; the token
    counts of its performance table."""
    bench = re.search(r"<!-- bench:start -->(.*?)<!-- bench:end -->", text, re.S).group(1)
    kept = FIGURE.sub(lambda m: f"<!-- figure:{m[1]} -->", GENERATED.sub("", text))
    sections = {name: {"numbers": sorted(set(DIGITS.findall(body)), key=lambda n: (len(n), n)),
                       "tables": table_rows(body)} for name, body in split_sections(kept).items()}
    return {"commit": "44eb4d0", "figures": sorted(set(FIGURE.findall(text))),
            "bench_rows": [row[0] for row in table_rows(bench)[1:]], "sections": sections}


def plain(text: str) -> str:
    """Text with every Markdown link reduced to its words and white space to single spaces: a sentence moved into
    docs/ keeps its words while its links are rewritten."""
    return " ".join(re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text).split())


def test_the_stored_snapshot_is_the_readme_at_44eb4d0():
    shown = subprocess.run(["git", "show", "44eb4d0:README.md"], cwd=ROOT, capture_output=True, text=True)
    if shown.returncode != 0:
        pytest.skip("commit 44eb4d0 is not in this clone (a shallow one): the stored snapshot stands for it")
    assert json.loads(BEFORE.read_text()) == snapshot(shown.stdout)


# numbers of the old README that were wrong, and what now stands in their place
CORRECTED = {("Performance", "0.1"): "up to 0.2",  # "the ratio moves by about 0.1": it read 0.90x and 1.09x
             # "layer 15 (mean of heads)": the maps page now opens on the head it picks for the word (issue 56)
             ("What am I looking at", "15"): "the head picked for it"}
# cells of the old README's tables that are no longer true, and the true text that stands in their place
CORRECTED_CELLS = {  # the words left one module (words.py) for a package, a module per kind of result (issue 59)
    ("How it works, and what it is built on",
     "numpy: the only place that judges a result, as typed records (`model_utils/core/records/verdict.py`), and the "
     "one module that puts them into words (`words.py`, pinned by `tests/golden/`, `make golden`)"):
    "numpy: the only place that judges a result, as typed records (`model_utils/core/records/verdict.py`), and the "
    "one package that puts them into words (`words/`, a module per kind of result, pinned by `tests/golden/`, "
    "`make golden`)"}


def test_every_number_of_the_old_readme_is_still_in_the_readme_or_the_document_its_section_went_to():
    before = json.loads(BEFORE.read_text())
    assert set(before["sections"]) == set(MOVED)
    lost = []
    for name, kept in before["sections"].items():
        text = "\n".join((ROOT / path).read_text() for path in ["README.md", *MOVED[name]])
        found = set(DIGITS.findall(text))
        lost += [f"{name}: {number}" for number in kept["numbers"] if number not in found
                 and CORRECTED.get((name, number), "\0") not in text]
    assert not lost, lost


def test_every_table_of_the_old_readme_is_still_there_cell_by_cell():
    """Each cell of each table, its links aside, in the document its section went to; the one exception is the
    pages' table, now a section per page in docs/PAGES.md (its numbers are checked above)."""
    before = json.loads(BEFORE.read_text())
    missing = []
    for name, kept in before["sections"].items():
        text = plain("\n".join((ROOT / path).read_text() for path in ["README.md", *MOVED[name]]))
        for row in kept["tables"]:
            if row[0] == "page":
                break  # the pages' table: its rows follow its header
            cells = [CORRECTED_CELLS.get((name, cell), cell) for cell in row]
            missing += [f"{name}: {cell[:60]}" for cell in cells if plain(cell) not in text]
    assert not missing, missing
    pages = (ROOT / "docs" / "PAGES.md").read_text()
    assert all(f"\n## {page.title}\n" in pages for page in PAGES)


def test_the_old_readmes_generated_blocks_are_in_docs_as_regenerated():
    """What the old "What we found", its side-by-side table, its performance table and its figures said, from the
    committed files as they are now: every verdict's answer, the recipe families and the domains in FINDINGS; the
    schedules' numbers there too; the side-by-side table (above); the performance table in docs/PERFORMANCE.md with
    the same lengths; each figure quoted somewhere (test_the_timings_in_the_text_are_the_committed_benchmarks)."""
    before, findings = json.loads(BEFORE.read_text()), FINDINGS.read_text()
    for result in (*SWEEPS.read(), *TUNES.read()):
        if result.verdict is not None:
            assert words.answer(result.verdict) in findings
    one = SWEEPS.read()[0].verdict
    assert words.families_sentence(one) is None or words.families_sentence(one) in findings
    corpus = TUNES.read_first()
    said = words.domain_sentence(corpus, corpus.verdict.decomposition.lever(Dominant.RECIPE).view)
    assert said is None or said in findings
    numbers = set(DIGITS.findall(findings))
    assert set(DIGITS.findall(words.schedules_line(one) or "")) <= numbers
    performance = block("bench", (ROOT / "docs" / "PERFORMANCE.md").read_text())
    assert [row[0] for row in table_rows("\n".join(performance))[1:]] == before["bench_rows"]
    figures = "\n".join(path.read_text() for path in readme.figure_files())
    assert all(f"<!-- figure:{name} -->" in figures for name in before["figures"])


def test_findings_set_each_committed_lmeval_run_out_as_a_table_and_say_which_views_move(tmp_path):
    """FINDINGS' lmeval block is the committed runs' words.lmeval_findings, or the line that none is committed; a run
    gives one row per view with its score at each length, and the sentence counts the samples a view gets right
    beyond T = 1's."""
    from dataclasses import replace

    from tests.core.records.test_lmeval_record import document

    assert block("lmeval") == readme.per_model(LMEVALS.read(), words.lmeval_findings, readme.NO_LMEVAL,
                                               words.lmeval_heading)
    run = document()
    run = replace(run, scores=(run.scores[0], replace(run.scores[1], score=1.0)))  # the recipe gets both right
    runs = tmp_path / "lmeval"
    runs.mkdir()
    (runs / "bundled.json").write_text(json.dumps(run.to_dict(), allow_nan=False))
    written = block("lmeval", found_in_copies(tmp_path, lmevals=runs))
    assert written[0] == f"### {model_name(run.model)}, 2,048 tokens: inside its trained length"
    assert readme.NO_LMEVAL not in written
    low, high = run.scores[0].interval  # each score with its Wilson interval; each length with its prompts' size
    assert f"| niah_single_1 | T=1 | 0.50 ({low:.2f} to {high:.2f}) |" in written
    assert f"| niah_single_1 | yarn-rope (s=2) + T=1 | 1.00 ({low:.2f} to {high:.2f}) |" in written
    prompts = sorted(sample.prompt_tokens for score in run.scores for sample in score.samples)
    assert f"| task | view | length 2,048 (prompts of about {prompts[(len(prompts) - 1) // 2]:,} tokens) |" in written
    assert written[-1].startswith("yarn-rope (s=2) + T=1 scores 1 sample more right at 2,048 tokens")
    assert words.lmeval_sentence(replace(run, scores=(run.scores[0], replace(run.scores[1], score=0.5)))).startswith(
        "yarn-rope (s=2) + T=1 scores as T = 1 at every length")


def test_past_the_trained_length_the_findings_count_the_needles_each_view_finds_and_part_them_by_interval():
    """A run past the trained length says, per view, how many samples it got right of how many, with the Wilson
    interval, and tells a view apart from T = 1 only where the two intervals do not overlap."""
    from dataclasses import replace

    from model_utils.core.lmeval import wilson_interval
    from tests.core.records.test_lmeval_record import document, sample

    run = document()
    twenty = [sample(index, 1.0, 10.0) for index in range(20)]
    none_right, all_right = ([replace(s, score=value) for s in twenty] for value in (0.0, 1.0))
    scores = (replace(run.scores[0], length=12288, score=0.0, interval=wilson_interval(0, 20),
                      samples=tuple(none_right)),
              replace(run.scores[1], length=12288, score=1.0, interval=wilson_interval(20, 20),
                      samples=tuple(all_right)))
    past = replace(run, lengths=(12288,), limit=20, scores=scores)
    low, high = wilson_interval(20, 20)
    sentence = words.past_trained_sentence(past, "niah_single_1")
    assert sentence.startswith("At 12,288 tokens, past the trained length of 8,192 (in brackets, the Wilson 95% "
                               "interval of each share), T = 1 finds the needle in 0/20 "
                               f"(0.00 to {wilson_interval(0, 20)[1]:.2f}), YaRN's stretch (s = 2) in 20/20 "
                               f"({low:.2f} to {high:.2f}).")
    assert sentence.endswith("YaRN's stretch (s = 2) finds more than T = 1: their intervals do not overlap T = 1's.")
    assert words.lmeval_heading(past) == "SmolLM2-135M, 12,288 tokens: past its trained length"
    lines = words.lmeval_findings(past)
    assert lines[-1] == sentence and not any("samples a length" in line for line in lines)  # said once
    close = replace(past, scores=(replace(scores[0], score=0.9, interval=wilson_interval(18, 20)), scores[1]))
    assert words.past_trained_sentence(close, "niah_single_1").endswith(
        "Every interval overlaps T = 1's: these samples cannot tell the views apart.")
    assert words.past_trained_sentence(run, "niah_single_1") is None  # 2,048 is inside the trained length


def test_a_corpus_whose_windows_read_less_than_its_models_sweep_says_it_is_not_remeasured():
    """The note follows the records: a corpus of Gemma whose windows read no BOS, next to a sweep of Gemma whose
    windows read it, says so; with the same lead, or without a sweep of its model, nothing is said."""
    gemma_sweep = next(sweep for sweep in SWEEPS.read() if sweep.model == GEMMA)
    gemma_tune = next(summary for summary in TUNES.read() if summary.model == GEMMA)
    raw = replace(gemma_tune, cut_context=tuple(replace(cut, lead=0) for cut in gemma_tune.cut_context))
    fresh = replace(gemma_tune, cut_context=tuple(replace(cut, lead=1) for cut in gemma_tune.cut_context))
    assert gemma_sweep.cut_context.lead == 1
    assert readme.lead_note(raw, [gemma_sweep]) == ["", words.stale_reference_note(1)]
    assert readme.lead_note(fresh, [gemma_sweep]) == [] and readme.lead_note(raw, []) == []
    assert words.stale_reference_note(1) in readme.tune_lines(raw, [gemma_sweep])


def test_the_conclusion_says_hardly_helps_only_below_its_threshold_and_speaks_of_one_model_as_one():
    """HARDLY_HELPS decides "hardly helps": the bundled corpus's best temperature alone brings back 7% of the rise;
    with the rise made a tenth as large (the same lever then brings back 66%), the sentence gives the share."""
    bundled = corpora(TUNES.read())[:1]
    said = words.found_conclusion(bundled)
    assert said.startswith("Past the length it was trained on, SmolLM2-135M-Instruct (4-bit) predicts text worse")
    share = bundled[0][1].decomposition.share_of_rise(bundled[0][1].decomposition.best(LeverKind.TEMPERATURE))
    assert share < words.HARDLY_HELPS and said.endswith("a softmax temperature hardly helps.")
    model, verdict = bundled[0]
    smaller = replace(verdict, decomposition=replace(verdict.decomposition, rise=verdict.decomposition.rise / 10))
    assert words.found_conclusion([(model, smaller)]).endswith(
        f"a softmax temperature alone brings back at most {share * 10:.0%} of the rise.")
