"""The retrieval records on every committed probe: a format-1 document (its reaches read between points) reads as
this format, each reach and shift judged again from its points by brackets and each view whole where it was named by
its label, and writes back as it reads; a damaged one names what is missing; every committed pass of the pass cache
reads as a whole-text pass."""

import copy
import json
from pathlib import Path

import pytest

from model_utils.core.reach import bracket
from model_utils.core.records import RecordError
from model_utils.core.records.retrieval import FORMAT, ReachOutcome, RetrievalDocument, RetrievalPass
from model_utils.core.views import View

ASSETS = Path(__file__).resolve().parents[3] / "assets"
COMMITTED = sorted((ASSETS / "retrieval").glob("*.json"))
PASSES = sorted((ASSETS / "passes").glob("retrieval-*/*.json"))


def _label(view) -> str:
    """A view's label as a file holds it: a label (formats 1 and 2) or the whole view (3 on)."""
    if isinstance(view, str):
        return view
    return view["label"] if "label" in view else View.from_dict(view).label


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.name)
def test_every_committed_probe_reads_as_brackets_and_round_trips(path):
    data = json.loads(path.read_text())
    document = RetrievalDocument.from_dict(data)
    again = RetrievalDocument.from_dict(json.loads(json.dumps(document.to_dict())))
    assert again.to_dict() == document.to_dict() and document.format == FORMAT
    if data["format"] == 1:  # read every text whole; judged again by brackets
        assert document.separate_views == document.views
    assert [view.label for view in document.views] == [_label(entry) for entry in data["views"]]
    assert [(p.passage, p.distance, p.view.label, p.gain) for p in document.points] == [
        (p["passage"], p["distance"], _label(p["view"]), p["unplanted"]["loss"] - p["planted"]["loss"])
        for p in data["points"]]
    names = [p.name for p in document.passages]
    for curve in document.curves:
        outcome, between = bracket(curve.distances, curve.gain)
        assert (curve.reach.outcome, curve.reach.between) == (outcome, between)
        if outcome is ReachOutcome.FOUND:
            assert between[0] in curve.distances and between[1] in curve.distances
            assert between[0] < curve.reach.value <= between[1]
        assert [p.passage for p in curve.reach.per_passage] == names
    assert document.verdict.reach == document.curve(document.verdict.reference).reach
    for shift in document.verdict.shifts:
        assert shift.between == document.curve(shift.view).reach.between


def test_a_committed_probe_missing_a_key_is_named():
    damaged = copy.deepcopy(json.loads(COMMITTED[0].read_text()))
    del damaged["points"]
    with pytest.raises(RecordError, match="'points'"):
        RetrievalDocument.from_dict(damaged)


def test_every_committed_pass_reads_as_a_whole_text_pass_or_a_continuation_of_a_longer_prefix():
    assert PASSES, "no committed retrieval passes under assets/passes"
    continued = 0
    for path in PASSES[::25]:  # a sample: the folder holds hundreds
        found = RetrievalPass.from_dict(json.loads(path.read_text()))
        assert found.n_tokens > len(found.token_nll)
        if found.prefix_tokens is not None:  # the repeat read after a prefix of the planted or the plain text
            continued += 1
            assert found.prefix_tokens >= found.n_tokens - len(found.token_nll) - 1
    assert continued, "the committed probes read their repeats as continuations (the default)"
