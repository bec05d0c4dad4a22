"""The README's "What we found", docs/FINDINGS.md's result blocks and the timings the README quotes are the
committed result files, rendered (bench/readme.py): they cannot drift."""

import json
import re
from pathlib import Path

from bench import readme
from bench.readme import (
    FINDINGS,
    SWEEP,
    SWEEPS,
    fit_lines,
    found_lines,
    other_sweep_lines,
    other_tune_lines,
    read_fits,
    read_sweeps,
    read_tune,
    read_tunes,
    sweep_lines,
    sweeps_lines,
    tune_lines,
    write_found,
)
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.verdicts import words

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def block(name: str, text: str | None = None) -> list[str]:
    text = FINDINGS.read_text() if text is None else text
    match = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", text, re.S)
    assert match, f"no {name} block"
    return match.group(1).split("\n")


def test_the_readme_opens_its_findings_with_the_answer_in_ten_lines_at_most():
    found = block("found", README)
    sweeps = read_sweeps()
    assert found == found_lines(sweeps[0], read_tune(), sweeps[1:], read_tunes()[1:])
    assert len(found) <= 10 and found[0].startswith("![") and "(assets/screenshots/decomposition.png)" in found[0]
    assert README.index("## What we found") < README.index("## What am I looking at")  # near the top
    assert found[2].endswith(f" documents, held out over documents:** {words.answer(read_tune().verdict)}")
    assert found[3].startswith("- ") and found[4].startswith("- **On ")  # the corpus first, then one text


def test_the_context_length_block_is_the_committed_sweep():
    assert block("sweep") == sweep_lines(SweepDocument.from_dict(json.loads(SWEEP.read_text())))


def test_the_readme_sets_every_committed_sweep_side_by_side_one_row_each():
    sweeps = read_sweeps()
    assert sweeps[0] == SweepDocument.from_dict(json.loads(SWEEP.read_text()))  # the bundled model's first
    assert len(sweeps) == len(list(SWEEPS.glob("*.json")))
    lines = block("sweeps", README)
    assert lines == sweeps_lines(sweeps)
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| model |")]
    assert [row.split(" | ")[0] for row in rows] == [f"| {readme.model_name(sweep.model)}" for sweep in sweeps]
    assert README.index("<!-- found:end -->") < README.index("<!-- sweeps:start -->") < README.index(
        "## What am I looking at")


def test_the_findings_give_every_other_models_sweep_in_full():
    assert block("other-sweeps") == other_sweep_lines(read_sweeps()[1:])


def test_with_a_second_model_every_line_names_the_model_it_was_measured_on(other_sweeps, tmp_path):
    """A second model's sweep in the folder (the tiny Gemma 3's under Gemma 3 270M's name) and no corpus tune of it:
    "What we found" names the model in each line and in its scope, the table gains its row, the rest of the README
    stays as it is."""
    copy = tmp_path / "README.md"
    copy.write_text(README)
    write_found(other_sweeps, SWEEP, copy, tunes=tmp_path / "no-other-tunes")  # the committed tunes left out
    written = copy.read_text()
    found, sweeps = block("found", written), read_sweeps(other_sweeps, SWEEP)
    assert [sweep.model for sweep in sweeps] == ["bundled", "gemma3-270m"]
    said = [line for line in found if line.startswith("- **On ")]
    assert [line.split(",")[0] for line in said] == ["- **On SmolLM2-135M"] * 2 + ["- **On Gemma 3 270M"]
    assert said[-1] == f"- **On Gemma 3 270M, one text, cross-fit:** {words.answer(sweeps[1].verdict)}"
    assert "Best on SmolLM2-135M: " in next(line for line in found if line.startswith("- **Published schedules"))
    assert found[-1].startswith("- 2 small models (SmolLM2-135M, Gemma 3 270M), each on texts that ship with Python")
    assert len(found) <= 10 and found[:2] == block("found", README)[:2]
    table = block("sweeps", written)
    assert table == sweeps_lines(sweeps) and table[-2].startswith("| SmolLM2-135M | 8,192 |")
    assert table[-1].startswith("| Gemma 3 270M | 64 |") and "| sliding 8: 0.000; global: 0." in table[-1]
    outside = re.compile(r"<!-- (found|sweeps):start -->.*?<!-- \1:end -->", re.S)
    assert outside.sub("", written) == outside.sub("", README)
    lines = other_sweep_lines(sweeps[1:])
    assert lines[0] == "### Gemma 3 270M" and lines[2:] == sweep_lines(sweeps[1])


def test_a_second_models_corpus_tune_leads_its_lines_in_what_we_found(other_sweeps, tmp_path):
    """With a corpus tune of the second model committed (the bundled summary under Gemma 3 270M's name), its
    held-out answer comes before the same model's one-text line, named by model and document count."""
    from dataclasses import replace

    from model_utils.core.names import GEMMA

    gemma = replace(read_tune(), model=GEMMA)
    (tmp_path / "tunes" / "gemma").mkdir(parents=True)
    (tmp_path / "tunes" / "gemma" / "summary.json").write_text(json.dumps(gemma.to_dict(), allow_nan=False))
    copy = tmp_path / "README.md"
    copy.write_text(README)
    write_found(other_sweeps, SWEEP, copy, tunes=tmp_path / "tunes")
    said = [line for line in block("found", copy.read_text()) if line.startswith("- **On ")]
    assert [line.split(",")[0] for line in said] == ["- **On SmolLM2-135M"] * 2 + ["- **On Gemma 3 270M"] * 2
    documents = gemma.corpus.documents
    assert said[2] == (f"- **On Gemma 3 270M, {documents} documents, held out over documents:** "
                       f"{words.answer(gemma.verdict)}")
    assert said[3].startswith("- **On Gemma 3 270M, one text, cross-fit:** ")


def test_the_corpus_block_is_the_committed_tune():
    assert block("tune") == tune_lines(read_tune())


def test_the_findings_give_every_other_models_corpus_in_full():
    assert block("other-tunes") == other_tune_lines(read_tunes()[1:])


def test_a_second_models_corpus_answer_comes_before_its_one_text(other_sweeps, summary_file, tmp_path):
    """A second model's corpus tune under assets/tune/*/summary.json (the tiny model's under Gemma 3 270M's name):
    "What we found" gives its held-out answer, named by its model, just before its one-text answer, and the
    FINDINGS block gives it in full under the model's name."""
    from dataclasses import replace

    from model_utils.core.names import GEMMA

    gemma = replace(TuneSummary.from_dict(json.loads(summary_file.read_text())), model=GEMMA)
    (tmp_path / "tune" / "gemma").mkdir(parents=True)
    (tmp_path / "tune" / "gemma" / "summary.json").write_text(json.dumps(gemma.to_dict(), allow_nan=False))
    copy = tmp_path / "README.md"
    copy.write_text(README)
    write_found(other_sweeps, SWEEP, copy, tunes=tmp_path / "tune")
    said = [line for line in block("found", copy.read_text()) if line.startswith("- **On ")]
    assert said[-2] == f"- **On Gemma 3 270M, 2 documents, held out over documents:** {words.answer(gemma.verdict)}"
    assert said[-1].startswith("- **On Gemma 3 270M, one text, cross-fit:** ")
    assert len(block("found", copy.read_text())) <= 10
    summaries = read_tunes(tmp_path / "tune")
    assert [summary.model for summary in summaries] == ["bundled", GEMMA]
    lines = other_tune_lines(summaries[1:])
    assert lines[0] == "### Gemma 3 270M" and lines[2:] == tune_lines(gemma)


def test_the_fit_block_is_the_committed_fits():
    fits = read_fits()
    assert fits, "no committed fit under assets/fit"
    assert block("fit") == fit_lines(fits)


def test_the_timings_in_the_text_are_the_committed_benchmarks():
    """The cold start, the warm start and the warm-up, as bench/RESULTS.md and bench/PAGES.md measured them."""
    quoted = re.findall(r"<!-- figure:([a-z-]+) -->(.*?)<!-- /figure -->", README)
    values = readme.figure_values()
    assert {name for name, _ in quoted} == set(values)
    assert all(value == values[name] for name, value in quoted), quoted
    assert "about 25 s" not in README and "a minute and a half" not in README


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
    assert "| " + " | ".join(words.DECOMPOSITION_COLUMNS) + " |" in lines
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
    """With a distance remapping in the sweep, "What we found" gains one line comparing the families, from the
    verdict's numbers; the committed results compare them exactly when they hold a remapping."""
    from model_utils.core.records.verdict import Family
    from model_utils.core.rope import Rope
    from model_utils.core.views import View
    from tests.verdicts.synthetic import document, plain, yarn_rope

    far = {"untrained_mass": [0] * 4 + [0.5] * 4}
    written, _ = document([(1.0, plain([3.4, 3.6, 3.8, 4.0]), far), (1.25, plain([3.35, 3.55, 3.75, 3.95]), far),
                           (yarn_rope(1.0), plain([3.0, 3.2, 3.3, 3.4]), {"untrained_mass": [0] * 4 + [0.02] * 4}),
                           (View(1.0, Rope("self-extend", group=2, window=512)), plain([2.5] * 4),
                            far | {"effective_untrained_mass": [0.0] * 8})])
    lines = found_lines(written, None)
    verdict = written.verdict
    (line,) = [line for line in lines if line.startswith("- **Frequency changes, distance remappings")]
    said = words.families_sentence(verdict)
    assert line.endswith(said) and said in words.sentences(verdict)
    assert lines.index(line) == lines.index(f"- **On one text, cross-fit:** {words.answer(verdict)}") + 1
    assert verdict.decomposition.families() == [Family.FREQUENCY, Family.REMAP] and len(lines) <= 10
    committed = SweepDocument.from_dict(json.loads(SWEEP.read_text()))
    has_remaps = any(result.rope is not None and result.rope.remaps for result in committed.results)
    compared = [line for line in found_lines(committed, read_tune()) if "recipe families" in line]
    assert bool(compared) == has_remaps  # the committed sweep says what it holds, no more
