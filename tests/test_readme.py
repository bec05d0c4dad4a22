"""The README's "What we found", docs/FINDINGS.md's result blocks and the timings the README quotes are the
committed result files, rendered (bench/readme.py): they cannot drift."""

import json
import re
from pathlib import Path

from bench import readme
from bench.readme import FINDINGS, SWEEP, fit_lines, found_lines, read_fits, read_tune, sweep_lines, tune_lines
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def block(name: str, text: str | None = None) -> list[str]:
    text = FINDINGS.read_text() if text is None else text
    match = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", text, re.S)
    assert match, f"no {name} block"
    return match.group(1).split("\n")


def test_the_readme_opens_its_findings_with_the_answer_in_ten_lines_at_most():
    found = block("found", README)
    document = SweepDocument.from_dict(json.loads(SWEEP.read_text()))
    assert found == found_lines(document, read_tune())
    assert len(found) <= 10 and found[0].startswith("![") and "(assets/screenshots/decomposition.png)" in found[0]
    assert README.index("## What we found") < README.index("## What am I looking at")  # near the top
    assert "The interpolation does the recovery, not the temperature." in found[2]  # corpus first, then one text


def test_the_context_length_block_is_the_committed_sweep():
    assert block("sweep") == sweep_lines(SweepDocument.from_dict(json.loads(SWEEP.read_text())))


def test_the_corpus_block_is_the_committed_tune():
    assert block("tune") == tune_lines(read_tune())


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
    assert bullets[0].startswith("- Past the trained length the loss rises")  # the answer first
    assert bullets[1].startswith("- Cross-fit on one text (one model, one text): ")
    assert "| view | what it is | saves past the trained length (95% interval) | untrained-distance mass past it |" \
        in lines
    own = "| yarn (s=2) + T=1 vs yarn-rope (s=2) + T=1 | YaRN's own temperature"
    assert any(line.startswith(own) for line in lines)
    assert "saves = NLL at T = 1 minus NLL" in " ".join(line for line in lines if line.startswith("Per bucket"))


def test_the_corpus_block_leads_with_the_answer_then_the_gain_held_out_over_documents(summary_file):
    lines = tune_lines(TuneSummary.from_dict(json.loads(summary_file.read_text())))
    bullets = [line for line in lines if line.startswith("- ")]
    assert bullets[0].startswith("- The loss does not rise past the trained length")  # this tiny corpus's answer
    assert bullets[1].startswith("- Held out over documents (one model, 2 documents): the best T per bucket, "
                                 "chosen on the other "
                                 "documents and scored on the one left out")
    header = next(line for line in lines if line.startswith("| positions"))
    assert "yarn (scale=2) saves" in header and "logn (base=1024) saves" in header


def test_the_recipe_families_are_compared_only_where_the_results_hold_them():
    """With a distance remapping in the sweep, "What we found" gains one line comparing the families, from the
    verdict's numbers; the committed results, without one, say nothing about remappings."""
    from model_utils.core.rope import Rope
    from model_utils.core.views import View
    from model_utils.verdicts.context import context_verdict
    from tests.verdicts.synthetic import document, plain, yarn_rope

    far = {"untrained_mass": [0] * 4 + [0.5] * 4}
    written, _ = document([(1.0, plain([3.4, 3.6, 3.8, 4.0]), far), (1.25, plain([3.35, 3.55, 3.75, 3.95]), far),
                           (yarn_rope(1.0), plain([3.0, 3.2, 3.3, 3.4]), {"untrained_mass": [0] * 4 + [0.02] * 4}),
                           (View(1.0, Rope("self-extend", group=2, window=512)), plain([2.5] * 4),
                            far | {"effective_untrained_mass": [0.0] * 8})])
    lines = found_lines(written, None)
    verdict = context_verdict(written)
    (line,) = [line for line in lines if line.startswith("- **Frequency changes, distance remappings")]
    assert line.endswith(verdict.families_sentence())
    assert lines.index(line) == lines.index(f"- **On one text, cross-fit:** {verdict.answer()}") + 1
    said = verdict.families_sentence()
    assert said.index("frequency change (interpolation), yarn-rope (s=2) + T=1: +") < said.index(
        "distance remapping, self-extend (G=2, W=512) + T=1: +")
    assert "[0.000 on the remapped distances, goes away; 0.500 on the distances in the text]" in said
    assert said in verdict.sentences() and len(lines) <= 10
    committed = found_lines(SweepDocument.from_dict(json.loads(SWEEP.read_text())), read_tune())
    assert not any("remapping" in line or "recipe families" in line for line in committed)
