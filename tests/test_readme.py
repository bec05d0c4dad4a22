"""The README's result blocks are the committed result files, rendered (bench/readme.py): they cannot drift."""

import json
import re
from pathlib import Path

from bench.readme import SWEEP, TUNE, sweep_lines, tune_lines

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def block(name: str) -> list[str]:
    match = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", README, re.S)
    assert match, f"README.md has no {name} block"
    return match.group(1).split("\n")


def test_the_context_length_block_is_the_committed_sweep():
    assert block("sweep") == sweep_lines(json.loads(SWEEP.read_text()))


def test_the_corpus_block_is_the_committed_tune():
    assert block("tune") == tune_lines(json.loads(TUNE.read_text()))
