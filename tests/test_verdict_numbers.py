"""Every number a committed verdict sentence quotes is in its JSON: the sentences of the committed sweep, corpus
and fits, and the README's "What we found", are walked, and each number they say is found among the files' own
numbers (or one step from them: a share of the rise, a difference of two gains, a bucket's last position), at the
precision the sentence gives ("about 5,100 tokens": to the hundred)."""

import json
import re
from itertools import combinations
from pathlib import Path

import pytest

from bench.readme import corpora
from model_utils.core.names import MODEL_NAMES
from model_utils.core.records.retrieval import RetrievalDocument
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.experiments.committed import FITS, PROBES, SWEEPS, TUNES
from model_utils.verdicts import words
from model_utils.verdicts.fit import judge_fit

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
    """(value, decimals) of every number the sentence says, skipping those inside a label such as 's=2' and the
    models' names; a whole number after "about" is rounded to its trailing zeros (negative decimals)."""
    for name in MODEL_NAMES.values():
        sentence = sentence.replace(name, "the model")
    said = []
    for match in NUMBER.finditer(sentence):
        start = match.start()
        if sentence[max(0, start - 2):start] in ("s=", "T=") or sentence[max(0, start - 1):start] in ("=", "^"):
            continue  # a view's label: its own name, not a measured number
        token = match.group(0).replace(",", "")
        decimals = len(token.split(".")[1]) if "." in token else 0
        if decimals == 0 and sentence[max(0, start - 6):start] == "about ":
            decimals = -(len(token) - len(token.rstrip("0")))
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
        data = json.loads(SWEEPS.first.read_text())
        verdict = SweepDocument.from_dict(data).verdict
    else:
        data = json.loads(TUNES.first.read_text())
        verdict = TuneSummary.from_dict(data).verdict
    scope = {"verdict": data["verdict"], "trained_length": data["trained_length"], "buckets": data["buckets"]}
    assert unmatched(words.sentences(verdict), scope) == []
    headlines = [f"{item.label}: {words.headline_text(item)}. {item.help}" for item in words.headlines(verdict)]
    assert unmatched(headlines, scope) == []


def test_every_number_of_a_committed_fit_is_in_its_json():
    for fit in FITS.read():
        assert unmatched(words.fit_sentences(judge_fit(fit)), fit.to_dict()) == []


def test_the_walk_finds_a_number_the_json_does_not_hold():
    data = {"verdict": {"saved": 0.174, "rise": 1.95}}
    assert unmatched(["It saves +0.174 of a rise of 1.95 (8.9% of it)."], data) == []
    assert unmatched(["It saves +0.175."], data) == ["0.175 in: It saves +0.175."]


def found_sentences() -> list[str]:
    """The README's "What we found" as its sentences are written: the conclusion and the bullets (a link reduced to
    its words)."""
    lines = (Path(__file__).resolve().parent.parent / "README.md").read_text().split("<!-- found:start -->")[1]
    lines = lines.split("<!-- found:end -->")[0].strip().split("\n")
    said = [line.removeprefix("- ") for line in lines if line and not line.startswith(("![", "["))]
    return [re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", sentence) for sentence in said]


def test_every_number_of_what_we_found_is_in_the_committed_tunes_and_probes():
    summaries, probes = TUNES.read(), PROBES.read()
    said = found_sentences()
    found = corpora(summaries)
    assert said[0] == words.found_conclusion(found) and len(said) <= 4
    data = {"tunes": [{"verdict": summary.to_dict()["verdict"]} for summary in summaries],
            "probes": [probe.to_dict()["verdict"] for probe in probes]}
    assert unmatched(said, data) == []


def test_the_probes_bullet_says_only_the_probes_numbers(tiny_retrieval_file):
    """Until a probe is committed, the tiny model's stands for it: its bullet's numbers are in its verdict."""
    probe = RetrievalDocument.from_dict(json.loads(tiny_retrieval_file.read_text()))
    bullet = words.found_bullets(corpora(TUNES.read()), [probe])[-1]
    assert unmatched([bullet], probe.to_dict()["verdict"]) == []
    assert unmatched(["It reads about 5,100 tokens back."], {"reach": 5137.0}) == []  # rounded to the hundred
    assert unmatched(["It reads about 5,200 tokens back."], {"reach": 5137.0}) != []
