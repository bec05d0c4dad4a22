"""The corpus verdict: the temperature is chosen on some documents and scored on the one left out, against an
independent computation, with an interval over documents, and every number said with how many documents it rests
on."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from model_utils.core.records import RecordError
from model_utils.core.records.tune import TuneSummary
from model_utils.core.rope import Rope
from model_utils.verdicts.context import ContextVerdict
from model_utils.verdicts.corpus import corpus_numbers, corpus_verdict
from model_utils.verdicts.past import ViewInfo
from tests.verdicts.synthetic import leave_one_out_by_hand

COMMITTED = Path(__file__).resolve().parents[2] / "assets" / "tune" / "bundled-builtin" / "summary.json"
TRAINED = 1024
BUCKETS = [[1, 256], [256, 512], [512, 768], [768, 1024], [1024, 1280], [1280, 1536], [1536, 1792]]
PAST = [4, 5, 6]
VIEWS = [ViewInfo(label="T=0.8", temperature=0.8), ViewInfo(label="T=1", temperature=1.0),
         ViewInfo(label="T=1.25", temperature=1.25),
         ViewInfo(label="yarn-rope (s=2) + T=1", temperature=1.0, rope=Rope("yarn-rope", 2.0))]
EFFECT = np.array([[0.05] * 4 + [0.02, 0.05, 0.1],  # NLL above T = 1's, per view and bucket
                   [0.0] * 7,
                   [0.05] * 4 + [-0.02, -0.1, -0.3],
                   [0.01] * 4 + [-0.2, -0.8, -1.5]])


def corpus(documents: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """[document, view, bucket] NLL sums and [document, bucket] counts: a loss that rises past the trained length,
    what each view changes, and each document's own ups and downs (the last document stops a bucket short)."""
    rng = np.random.default_rng(seed)
    base = np.array([2.5, 2.3, 2.4, 2.3, 2.6, 3.5, 4.5])
    nll = base + EFFECT[None] + rng.normal(0, 0.3, (documents, 1, 7)) + rng.normal(0, 0.08, (documents, 4, 7))
    counts = np.full((documents, 7), 255.0)
    counts[-1, -1] = 0 if documents > 1 else 255  # every bucket reached by some document, as summarize_tune has it
    return nll * counts[:, None, :], counts


def committed_summary() -> TuneSummary:
    return TuneSummary.from_dict(json.loads(COMMITTED.read_text()))


def numbers(documents: int) -> tuple[dict, np.ndarray, np.ndarray]:
    sums, counts = corpus(documents)
    ones = np.ones((4, 7))
    statistics = {"entropy": 3 * ones, "normalized_entropy": 0.4 * ones, "sink_mass": 0.2 * ones,
                  "untrained_mass": np.array([[0] * 4 + [0.2, 0.4, 0.5]] * 3 + [[0] * 4 + [0.01] * 3])}
    found = corpus_numbers(views=VIEWS, sums=sums, counts=counts, buckets=BUCKETS, trained_length=TRAINED,
                           statistics=statistics, reported_best=[])
    return found, sums, counts


def test_the_corpus_gain_is_chosen_on_the_other_documents_and_scored_on_the_one_left_out():
    found, sums, counts = numbers(5)
    held = found["gain_held_out"]
    assert held["saved"] == pytest.approx(leave_one_out_by_hand(sums, counts, 1, [0, 1, 2], PAST), abs=1e-9)
    assert held["interval"][0] <= held["saved"] <= held["interval"][1]
    assert found["gain_constant"]["held_out"]["saved"] == pytest.approx(
        leave_one_out_by_hand(sums, counts, 1, [0, 1, 2], PAST, per_bucket=False), abs=1e-9)
    pooled = sums.sum(axis=0) / counts.sum(axis=0)
    oracle = np.average(pooled[1, PAST] - pooled[:3, PAST].min(axis=0), weights=counts.sum(axis=0)[PAST])
    assert found["gain_oracle"]["saved"] == pytest.approx(oracle)
    rows = {row["label"]: row for row in found["decomposition"]["rows"]}
    assert rows["yarn-rope (s=2) + T=1"]["untrained"] == "goes away"
    verdict = ContextVerdict.from_dict(found)
    said = verdict.sentences()
    assert said[0] == verdict.answer()
    assert said[1].startswith("Held out over documents (one model, 5 documents): the best T per bucket, chosen on "
                              "the other "
                              f"documents and scored on the one left out, saves {held['saved']:+.3f} nats per token")
    assert all("one model, 5 documents" in item.help for item in verdict.headline())
    gain = next(item for item in verdict.headline() if item.label.startswith("Best temperature alone"))
    assert gain.label == "Best temperature alone (held out over documents)"
    assert "documents resampled with replacement" in gain.help


def test_rows_without_a_statistic_give_a_verdict_without_it_and_valid_json():
    sums, counts = corpus(3)
    statistics = {"normalized_entropy": np.full((4, 7), 0.4), "untrained_mass": np.full((4, 7), np.nan)}
    found = corpus_numbers(views=VIEWS, sums=sums, counts=counts, buckets=BUCKETS, trained_length=TRAINED,
                           statistics=statistics, reported_best=[])
    assert all(row["untrained_mass_past"] is None for row in found["decomposition"]["rows"])
    assert json.loads(json.dumps(found, allow_nan=False)) == found


def test_one_document_has_no_held_out_gain_and_says_why():
    found, _, _ = numbers(1)
    assert found["gain_held_out"] is None and found["gain_oracle"]["saved"] > 0
    said = ContextVerdict.from_dict(found).sentences()[1]
    assert said.startswith("No held-out gain could be measured (one model, 1 document): a single document leaves "
                           "none to choose on")


def test_a_summary_reads_its_stored_verdict_and_refuses_one_of_another_format():
    """summarize_tune stores the verdict's numbers in the summary: read back as they were computed; a summary whose
    verdict has another format is refused with the fix, and one without a verdict (nothing past the trained length)
    has none."""
    found, _, _ = numbers(3)
    summary = replace(committed_summary(), verdict=found)
    assert corpus_verdict(summary) == ContextVerdict.from_dict(found)
    assert corpus_verdict(replace(summary, verdict=None)) is None
    with pytest.raises(RecordError, match=r"this corpus verdict has format 0; .* regenerate it"):
        corpus_verdict(replace(summary, verdict=found | {"format": 0}))


def test_the_committed_summarys_verdict_is_the_one_the_readme_states():
    verdict = corpus_verdict(committed_summary())
    assert verdict.sentences()[0].startswith("Past the trained length the loss rises 2.26 nats per token (one model, "
                                             "8 documents)")
    assert verdict.sentences()[1].startswith("Held out over documents (one model, 8 documents): ")
    assert any(row["view"] == "yarn-rope (s=2) + T=1" for row in verdict.decomposition_rows())


def test_a_break_after_past_buckets_already_above_the_range_says_so():
    """The committed corpus breaks at 11,264 while a past bucket before it is already above every in-context bucket
    in its mean: the sentence must not let the break read as where the loss first leaves the range."""
    verdict = corpus_verdict(committed_summary())
    said = next(sentence for sentence in verdict.sentences() if sentence.startswith("The loss at T = 1 breaks"))
    earlier, high = verdict.breaks["earlier"], verdict.in_context_nll[1]
    assert earlier[1] > high  # what the committed data holds: 2.43 against 2.42
    assert f"up to {earlier[1]:.2f}" in said and "the loss leaves the range before the break" in said
