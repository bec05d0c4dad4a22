"""The corpus verdict: the temperature is chosen on some documents and scored on the one left out, against an
independent computation, with an interval over documents; the committed summary's verdict reads back as stored."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import ContextVerdict, MassMove, RowKind, Scoring
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.verdicts.corpus import best_schedule, corpus_verdict
from model_utils.verdicts.past import ViewInfo
from tests.verdicts.synthetic import leave_one_out_by_hand

COMMITTED = Path(__file__).resolve().parents[2] / "assets" / "tune" / "bundled-builtin" / "summary.json"
TRAINED = 1024
BUCKETS = [(1, 256), (256, 512), (512, 768), (768, 1024), (1024, 1280), (1280, 1536), (1536, 1792)]
PAST = [4, 5, 6]
VIEWS = [ViewInfo(view=View(0.8)), ViewInfo(view=View(1.0)), ViewInfo(view=View(1.25)),
         ViewInfo(view=View(1.0, Rope("yarn-rope", 2.0)))]
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


def verdict_of(documents: int) -> tuple[ContextVerdict, np.ndarray, np.ndarray]:
    sums, counts = corpus(documents)
    ones = np.ones((4, 7))
    statistics = {"entropy": 3 * ones, "normalized_entropy": 0.4 * ones, "sink_mass": 0.2 * ones,
                  "untrained_mass": np.array([[0] * 4 + [0.2, 0.4, 0.5]] * 3 + [[0] * 4 + [0.01] * 3])}
    found = corpus_verdict(views=VIEWS, sums=sums, counts=counts, buckets=BUCKETS, trained_length=TRAINED,
                           statistics=statistics, reported_best={})
    return found, sums, counts


def test_the_corpus_gain_is_chosen_on_the_other_documents_and_scored_on_the_one_left_out():
    found, sums, counts = verdict_of(5)
    held = found.gains.held_out
    assert found.documents == 5 and found.scoring is Scoring.HELD_OUT_DOCUMENTS and found.block is None
    assert held.scoring is Scoring.HELD_OUT_DOCUMENTS
    assert held.saved == pytest.approx(leave_one_out_by_hand(sums, counts, 1, [0, 1, 2], PAST), abs=1e-9)
    assert held.interval[0] <= held.saved <= held.interval[1]
    assert found.gains.constant.held_out.saved == pytest.approx(
        leave_one_out_by_hand(sums, counts, 1, [0, 1, 2], PAST, per_bucket=False), abs=1e-9)
    pooled = sums.sum(axis=0) / counts.sum(axis=0)
    oracle = np.average(pooled[1, PAST] - pooled[:3, PAST].min(axis=0), weights=counts.sum(axis=0)[PAST])
    assert found.gains.oracle.saved == pytest.approx(oracle)
    assert found.decomposition.row_of(View(1.0, Rope("yarn-rope", 2.0))).untrained is MassMove.GOES_AWAY
    assert ContextVerdict.from_dict(json.loads(json.dumps(found.to_dict(), allow_nan=False))) == found


def test_rows_without_a_statistic_give_a_verdict_without_it_and_valid_json():
    sums, counts = corpus(3)
    statistics = {"normalized_entropy": np.full((4, 7), 0.4), "untrained_mass": np.full((4, 7), np.nan)}
    found = corpus_verdict(views=VIEWS, sums=sums, counts=counts, buckets=BUCKETS, trained_length=TRAINED,
                           statistics=statistics, reported_best={})
    assert all(row.untrained_mass_past is None for row in found.decomposition.rows)
    assert found.entropy_trend is None and found.attention.untrained is None
    assert ContextVerdict.from_dict(json.loads(json.dumps(found.to_dict(), allow_nan=False))) == found


def test_one_document_has_no_held_out_gain():
    found, _, _ = verdict_of(1)
    assert found.gains.held_out is None and found.gains.oracle.saved > 0
    assert found.gains.constant.held_out is None
    assert not [row for row in found.decomposition.table if row.kind is RowKind.ON_TOP]


def test_the_committed_summarys_verdict_reads_back_as_stored():
    summary = committed_summary()
    verdict = summary.verdict
    assert verdict.documents == summary.corpus.documents == 8
    assert verdict.rise_against_earlier == pytest.approx(2.26, abs=0.005)  # against earlier positions, as before
    assert verdict.rise == verdict.same_token_rise.rise == pytest.approx(2.30, abs=0.005)  # on the same tokens
    assert verdict.gains.held_out.scoring is Scoring.HELD_OUT_DOCUMENTS
    assert verdict.decomposition.row_of(View(1.0, Rope("yarn-rope", 2.0))) is not None
    assert TuneSummary.from_dict(json.loads(json.dumps(summary.to_dict(), allow_nan=False))) == summary


def test_a_break_after_past_buckets_already_above_the_range_keeps_them_apart():
    """The committed corpus breaks at 11,264 while a past bucket before it is already above every in-context bucket
    in its mean: the record keeps both, so the words can say the loss leaves the range before the break."""
    found = committed_summary().verdict.loss_break
    assert found.at == 11264 and found.earlier[1] > found.in_context[1]  # 2.43 against 2.42


def test_the_best_schedule_of_a_bucket_saves_the_most_there():
    summary = TuneSummary.from_dict(json.loads(COMMITTED.read_text()))
    assert summary.schedules, "the committed tune compares schedules"
    for index in range(len(summary.best)):
        label, saved = best_schedule(summary, index)
        savings = {entry.label: entry.buckets[index].saved for entry in summary.schedules}
        assert savings[label] == saved == max(savings.values())
    assert best_schedule(replace(summary, schedules=()), 0) is None
