"""The lm-eval bridge's records: `LmEvalSample`, one sample of a task as the model answered it; `LmEvalScore`, a task
at one length under one view; `LmEvalDocument`, the JSON `python -m model_utils lmeval` writes."""

from __future__ import annotations

from dataclasses import dataclass

from model_utils.core.records import check_format
from model_utils.core.records.base import Record, numbers, read, records
from model_utils.core.records.retrieval import ViewEntry
from model_utils.core.records.run import RunInfo

FORMAT = 2  # 2: each score has its Wilson interval
KIND = "lm-eval document"


@dataclass(frozen=True, kw_only=True)
class LmEvalSample(Record):
    """One sample: what the task counts as right, what the model wrote, the task's own score for it (RULER: the
    share of the answers the response holds), and what it cost."""

    doc_id: int
    answers: tuple[str, ...]
    response: str
    score: float
    prompt_tokens: int  # as the model read them
    cut_tokens: int  # cut from the prompt's start so that max_gen_toks new ones fit in max_length (lm-eval's rule)
    new_tokens: int  # generated, up to the stop
    seconds: float

    @classmethod
    def from_dict(cls, data: dict) -> LmEvalSample:
        return read(cls, data, KIND, answers=tuple)


@dataclass(frozen=True, kw_only=True)
class LmEvalScore(Record):
    """A task at one length under one view: the mean of its samples' scores (RULER's own aggregation), with its
    Wilson 95% interval over the samples (experiments.lmeval.wilson_interval)."""

    task: str
    length: int
    view: str  # the view's label, as in the document's views
    score: float
    interval: tuple[float, float]
    samples: tuple[LmEvalSample, ...]
    seconds: float  # the whole evaluation: the task's samples built, then answered

    @property
    def seconds_per_sample(self) -> float:
        return sum(sample.seconds for sample in self.samples) / len(self.samples)

    @classmethod
    def from_dict(cls, data: dict) -> LmEvalScore:
        return read(cls, data, KIND, interval=tuple, samples=records(LmEvalSample.from_dict))


@dataclass(frozen=True, kw_only=True)
class LmEvalDocument(Record):
    """A run of lm-eval tasks on the explorer: every task at every length under every view."""

    format: int
    model: str
    trained_length: int
    tasks: tuple[str, ...]
    lengths: tuple[int, ...]
    limit: int  # the first `limit` samples of each task at each length
    views: tuple[ViewEntry, ...]
    scores: tuple[LmEvalScore, ...]
    lm_eval_version: str
    tokenizer: str  # what sized the tasks' prompts
    run: RunInfo | None

    @classmethod
    def from_dict(cls, data: dict) -> LmEvalDocument:
        if data.get("format") == 1:
            data = _from_format_1(data)
        check_format(data, KIND, FORMAT)
        return read(cls, data, KIND, tasks=tuple, lengths=numbers, views=records(ViewEntry.from_dict),
                    scores=records(LmEvalScore.from_dict), run=RunInfo.from_dict)

    def score(self, task: str, length: int, view: str) -> LmEvalScore:
        return next(score for score in self.scores if (score.task, score.length, score.view) == (task, length, view))


def _from_format_1(data: dict) -> dict:
    """Format 1 had no interval on a score: computed from its samples, as format 2 stores it."""
    from model_utils.core.lmeval import wilson_interval

    scores = [score | {"interval": list(wilson_interval(sum(sample["score"] for sample in score["samples"]),
                                                        len(score["samples"])))} for score in data["scores"]]
    return data | {"format": 2, "scores": scores}
