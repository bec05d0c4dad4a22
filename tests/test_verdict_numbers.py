"""Every number a committed verdict sentence quotes is in its JSON: the sentences of the committed sweep, corpus
and fits are walked, and each number they say is found among the file's own numbers (or one step from them: a
share of the rise, a difference of two gains, a bucket's last position), at the precision the sentence gives."""

import json
import re
from itertools import combinations
from pathlib import Path

import pytest

from bench.readme import SWEEP, TUNE, read_fits
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.verdicts import words

NUMBER = re.compile(r"(?<![\w.])[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.])[+-]?\d+(?:\.\d+)?")
# numbers a sentence's own wording carries: a 95% interval, YaRN's law's 0.1 and 1 in "(0.1 ln s + 1)^2", and the
# years of the papers the entropy argument cites
WORDING = {95.0, 0.1, 1.0, 2.0, 2022.0, 2025.0}


def numbers_in(data) -> list[float]:
    found = []
    if isinstance(data, dict):
        for value in data.values():
            found += numbers_in(value)
    elif isinstance(data, (list, tuple)):
        for value in data:
            found += numbers_in(value)
    elif isinstance(data, bool) or data is None:
        pass
    elif isinstance(data, (int, float)):
        found.append(float(data))
    elif isinstance(data, str):
        found += [float(token.replace(",", "")) for token in NUMBER.findall(data)]
    return found


def candidates(data) -> set[float]:
    """The file's numbers, and one step from them: negated, as a percentage, a bucket's last position, and the
    difference and ratio of two of them (a share of the rise, a fit against T = 1 minus the temperature's share)."""
    values = sorted(set(numbers_in(data)))
    found = set(values) | {-v for v in values} | {100 * v for v in values} | {v - 1 for v in values}
    for a, b in combinations(values, 2):
        found |= {a - b, b - a}
        if b:
            found |= {a / b, 100 * a / b}
        if a:
            found |= {b / a, 100 * b / a}
    return found


def quoted(sentence: str) -> list[tuple[float, int]]:
    """(value, decimals) of every number the sentence says, skipping those inside a label such as 's=2'."""
    said = []
    for match in NUMBER.finditer(sentence):
        start = match.start()
        if sentence[max(0, start - 2):start] in ("s=", "T=") or sentence[max(0, start - 1):start] in ("=", "^"):
            continue  # a view's label: its own name, not a measured number
        token = match.group(0).replace(",", "")
        decimals = len(token.split(".")[1]) if "." in token else 0
        said.append((float(token), decimals))
    return said


def unmatched(sentences: list[str], data) -> list[str]:
    pool = candidates(data)
    missing = []
    for sentence in sentences:
        for value, decimals in quoted(sentence):
            if value in WORDING:
                continue
            step = 0.5 * 10 ** -decimals + 1e-9
            if not any(abs(value - c) <= step for c in pool):
                missing.append(f"{value} in: {sentence[:160]}")
    return missing


@pytest.mark.parametrize("which", ["sweep", "corpus"])
def test_every_number_of_a_committed_verdict_is_in_its_json(which):
    if which == "sweep":
        data = json.loads(Path(SWEEP).read_text())
        verdict = SweepDocument.from_dict(data).verdict
    else:
        data = json.loads(Path(TUNE).read_text())
        verdict = TuneSummary.from_dict(data).verdict
    scope = {"verdict": data["verdict"], "trained_length": data["trained_length"], "buckets": data["buckets"]}
    assert unmatched(words.sentences(verdict), scope) == []
    headlines = [f"{item.label}: {words.headline_text(item)}. {item.help}" for item in words.headlines(verdict)]
    assert unmatched(headlines, scope) == []


def test_every_number_of_a_committed_fit_is_in_its_json():
    for fit in read_fits():
        assert unmatched(words.fit_sentences(fit), fit.to_dict()) == []


def test_the_walk_finds_a_number_the_json_does_not_hold():
    data = {"verdict": {"saved": 0.174, "rise": 1.95}}
    assert unmatched(["It saves +0.174 of a rise of 1.95 (8.9% of it)."], data) == []
    assert unmatched(["It saves +0.175."], data) == ["0.175 in: It saves +0.175."]
