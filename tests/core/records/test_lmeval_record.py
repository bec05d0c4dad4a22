"""The lm-eval bridge's record: written and read back unchanged (a view as a View, the samples as records, each
score's interval), formats 1 to 3 (the tokenizer by its sentence; 1 and 2 also views by label; 1 without intervals)
and the committed run read with the same views, and a file with a missing key or of another format refused with a
RecordError that names the fix."""

import copy
import json
from pathlib import Path

import pytest

from model_utils.core.lmeval import wilson_interval
from model_utils.core.records import RecordError
from model_utils.core.records.lmeval import FORMAT, LmEvalDocument, LmEvalSample, LmEvalScore, PromptTokenizer
from model_utils.core.records.run import RunInfo
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.verdicts.words import lmeval_tokenizer

COMMITTED = sorted((Path(__file__).resolve().parents[3] / "assets" / "lmeval").glob("*.json"))


def sample(doc_id: int, score: float, seconds: float) -> LmEvalSample:
    return LmEvalSample(doc_id=doc_id, answers=("6057437",), response=" 6057437." if score else " 42.", score=score,
                        prompt_tokens=1838, cut_tokens=0, new_tokens=10, seconds=seconds)


def document() -> LmEvalDocument:
    views = (View(1.0), View(1.0, Rope("yarn-rope", 2.0)))
    scores = tuple(LmEvalScore(task="niah_single_1", length=2048, view=view, score=0.5, interval=wilson_interval(1, 2),
                               samples=(sample(0, 1.0, 10.0), sample(1, 0.0, 20.0)), seconds=50.0) for view in views)
    run = RunInfo(command="python -m model_utils lmeval --lengths 2048 --limit 2", date="2026-12-06T02:00:00",
                  wall_seconds=100.0, peak_rss_gb=2.1, machine="x86_64, 2 cores, Python 3.11.7")
    return LmEvalDocument(format=FORMAT, model="bundled", trained_length=8192, tasks=("niah_single_1",),
                          lengths=(2048,), limit=2, views=views, scores=scores, lm_eval_version="0.4.13",
                          tokenizer=PromptTokenizer.MODEL, run=run)


def test_a_document_round_trips_through_json():
    written = json.loads(json.dumps(document().to_dict()))
    read = LmEvalDocument.from_dict(written)
    assert read == document() and read.to_dict() == written
    assert read.views[1].rope == Rope("yarn-rope", 2.0) and written["views"][1]["rope"]["recipe"] == "yarn-rope"
    assert read.score("niah_single_1", 2048, View(1.0)).seconds_per_sample == 15.0


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.name)
def test_every_committed_run_reads_its_views_whole_and_round_trips(path):
    data = json.loads(path.read_text())
    read = LmEvalDocument.from_dict(data)
    if data["format"] < 3:  # views stored by their labels: each read back as the view it was written from
        assert [view.label for view in read.views] == [entry["label"] for entry in data["views"]]
        assert [(s.task, s.length, s.view.label, s.score) for s in read.scores] == [
            (s["task"], s["length"], s["view"], s["score"]) for s in data["scores"]]
    else:
        assert list(read.views) == [View.from_dict(entry) for entry in data["views"]]
        assert [(s.task, s.length, s.view, s.score) for s in read.scores] == [
            (s["task"], s["length"], View.from_dict(s["view"]), s["score"]) for s in data["scores"]]
    written = json.loads(json.dumps(read.to_dict()))
    assert LmEvalDocument.from_dict(written) == read and written["format"] == FORMAT


def by_label(data: dict, format: int) -> dict:
    """`data` as formats 1 and 2 wrote it: each view as its label, temperature, schedule label and recipe, a score's
    view by its label, the tokenizer as its sentence; format 1 without the scores' intervals."""
    views = [View.from_dict(entry) for entry in data["views"]]
    entries = [{"label": view.label, "temperature": view.temperature, "schedule": None,
                "rope": None if view.rope is None else view.rope.to_dict()} for view in views]
    scores = [score | {"view": View.from_dict(score["view"]).label} for score in data["scores"]]
    if format == 1:
        scores = [{key: value for key, value in score.items() if key != "interval"} for score in scores]
    return data | {"format": format, "views": entries, "scores": scores, "tokenizer": TOKENIZER_SENTENCE}


TOKENIZER_SENTENCE = "the model's own tokenizer, saved to a temporary folder"  # as formats 1 to 3 stored it


def test_a_format_3_document_reads_its_tokenizers_sentence_as_the_fact():
    old = document().to_dict() | {"format": 3, "tokenizer": TOKENIZER_SENTENCE}
    assert LmEvalDocument.from_dict(old) == document()
    assert lmeval_tokenizer(document()) == TOKENIZER_SENTENCE  # the words say it when read
    with pytest.raises(RecordError, match="sized its prompts with 'gpt2', a tokenizer this version does not know"):
        LmEvalDocument.from_dict(old | {"tokenizer": "gpt2"})


def test_a_format_1_document_gets_each_scores_interval_from_its_samples_and_its_views_whole():
    read = LmEvalDocument.from_dict(by_label(document().to_dict(), 1))
    assert read == document() and read.scores[0].interval == (0.0945, 0.9055)  # 1 of 2: Wilson's 95% interval
    assert read.scores[1].view == View(1.0, Rope("yarn-rope", 2.0))


def test_a_format_2_document_keeps_its_intervals_and_gets_its_views_whole():
    old = by_label(document().to_dict(), 2)
    old["scores"][0]["interval"] = [0.25, 0.75]  # kept, not recomputed
    read = LmEvalDocument.from_dict(old)
    assert read.views == document().views and read.scores[0].interval == (0.25, 0.75)
    assert read.scores[1] == document().scores[1]


def test_a_score_of_a_view_the_document_does_not_list_is_refused():
    old = by_label(document().to_dict(), 2)
    old["scores"][1]["view"] = "T=3"
    with pytest.raises(RecordError, match="scores T=3, a view it does not list"):
        LmEvalDocument.from_dict(old)


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
