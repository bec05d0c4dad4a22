"""The README's result blocks and the timings its text quotes are the committed result files, rendered
(bench/readme.py): they cannot drift."""

import json
import re
from pathlib import Path

from bench.readme import SWEEP, TUNE, figure_values, sweep_lines, tune_lines

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def block(name: str) -> list[str]:
    match = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", README, re.S)
    assert match, f"README.md has no {name} block"
    return match.group(1).split("\n")


def test_the_context_length_block_is_the_committed_sweep():
    assert block("sweep") == sweep_lines(json.loads(SWEEP.read_text()))


def test_the_corpus_block_is_the_committed_tune():
    assert block("tune") == tune_lines(json.loads(TUNE.read_text()))


def test_the_timings_in_the_text_are_the_committed_benchmarks():
    """The cold start, the warm start and the warm-up, as bench/RESULTS.md and bench/PAGES.md measured them."""
    quoted = re.findall(r"<!-- figure:([a-z-]+) -->(.*?)<!-- /figure -->", README)
    values = figure_values()
    assert {name for name, _ in quoted} == set(values)
    assert all(value == values[name] for name, value in quoted), quoted
    assert "about 25 s" not in README and "a minute and a half" not in README
