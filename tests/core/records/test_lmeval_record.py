"""The lm-eval bridge's record: written and read back unchanged (a recipe as a Rope, the samples as records), and a
file with a missing key or of another format refused with a RecordError that names the fix."""

import copy
import json

import pytest

from model_utils.core.lmeval import wilson_interval
from model_utils.core.records import RecordError
from model_utils.core.records.lmeval import FORMAT, LmEvalDocument, LmEvalSample, LmEvalScore
from model_utils.core.records.retrieval import ViewEntry
from model_utils.core.records.run import RunInfo
from model_utils.core.rope import Rope


def sample(doc_id: int, score: float, seconds: float) -> LmEvalSample:
    return LmEvalSample(doc_id=doc_id, answers=("6057437",), response=" 6057437." if score else " 42.", score=score,
                        prompt_tokens=1838, cut_tokens=0, new_tokens=10, seconds=seconds)


def document() -> LmEvalDocument:
    views = (ViewEntry(label="T=1", temperature=1.0, schedule=None, rope=None),
             ViewEntry(label="yarn-rope (s=2) + T=1", temperature=1.0, schedule=None, rope=Rope("yarn-rope", 2.0)))
    scores = tuple(LmEvalScore(task="niah_single_1", length=2048, view=view.label, score=0.5,
                               interval=wilson_interval(1, 2), samples=(sample(0, 1.0, 10.0), sample(1, 0.0, 20.0)),
                               seconds=50.0) for view in views)
    run = RunInfo(command="python -m model_utils lmeval --lengths 2048 --limit 2", date="2026-12-06T02:00:00",
                  wall_seconds=100.0, peak_rss_gb=2.1, machine="x86_64, 2 cores, Python 3.11.7")
    return LmEvalDocument(format=FORMAT, model="bundled", trained_length=8192, tasks=("niah_single_1",),
                          lengths=(2048,), limit=2, views=views, scores=scores, lm_eval_version="0.4.13",
                          tokenizer="the model's own tokenizer, saved to a temporary folder", run=run)


def test_a_document_round_trips_through_json():
    written = json.loads(json.dumps(document().to_dict()))
    read = LmEvalDocument.from_dict(written)
    assert read == document() and read.to_dict() == written
    assert read.views[1].rope == Rope("yarn-rope", 2.0) and written["views"][1]["rope"]["recipe"] == "yarn-rope"
    assert read.score("niah_single_1", 2048, "T=1").seconds_per_sample == 15.0


def test_a_format_1_document_gets_each_scores_interval_from_its_samples():
    old = document().to_dict() | {"format": 1}
    for score in old["scores"]:
        del score["interval"]
    read = LmEvalDocument.from_dict(old)
    assert read == document() and read.scores[0].interval == (0.0945, 0.9055)  # 1 of 2: Wilson's 95% interval


@pytest.mark.parametrize(("path", "key"), [((), "scores"), (("scores", 0), "samples"),
                                           (("scores", 1, "samples", 0), "response"), (("run",), "machine")])
def test_a_missing_key_is_named(path, key):
    damaged = copy.deepcopy(document().to_dict())
    holder = damaged
    for step in path:
        holder = holder[step]
    del holder[key]
    with pytest.raises(RecordError, match=rf"has no '{key}': it is damaged .* regenerate it"):
        LmEvalDocument.from_dict(damaged)


@pytest.mark.parametrize("found", [None, FORMAT + 1])
def test_another_format_is_refused(found):
    other = document().to_dict() | {"format": found}
    with pytest.raises(RecordError, match=rf"this lm-eval document has format {found!r}; this version reads format"):
        LmEvalDocument.from_dict(other)
