"""The lm-eval bridge's records: `LmEvalSample`, one sample of a task as the model answered it; `LmEvalScore`, a task
at one length under one view; `LmEvalDocument`, the JSON `python -m model_utils lmeval` writes; `PromptTokenizer`,
what sized the tasks' prompts."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from model_utils.core.records import RecordError, check_format, field
from model_utils.core.records.base import Record, old_view, read
from model_utils.core.records.run import RunInfo
from model_utils.core.views import View

FORMAT = 4  # 2: each score has its Wilson interval; 3: views stored whole (before: by their labels); 4: the
# tokenizer as a fact (before: its sentence)
KIND = "lm-eval document"


class PromptTokenizer(Enum):
    """What sized the tasks' prompts (the words say it: verdicts.words.lmeval_tokenizer)."""

    MODEL = "model"  # the model's own tokenizer, saved to a temporary folder, so that nothing is fetched


# formats 1 to 3 stored the tokenizer's sentence, as those versions wrote it:
OLD_TOKENIZERS = {"the model's own tokenizer, saved to a temporary folder": PromptTokenizer.MODEL}


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


@dataclass(frozen=True, kw_only=True)
class LmEvalScore(Record):
    """A task at one length under one view: the mean of its samples' scores (RULER's own aggregation), with its
    Wilson 95% interval over the samples (experiments.lmeval.wilson_interval)."""

    task: str
    length: int
    view: View
    score: float
    interval: tuple[float, float]
    samples: tuple[LmEvalSample, ...]
    seconds: float  # the whole evaluation: the task's samples built, then answered

    @property
    def seconds_per_sample(self) -> float:
        return sum(sample.seconds for sample in self.samples) / len(self.samples)


@dataclass(frozen=True, kw_only=True)
class LmEvalDocument(Record):
    """A run of lm-eval tasks on the explorer: every task at every length under every view."""

    format: int
    model: str
    trained_length: int
    tasks: tuple[str, ...]
    lengths: tuple[int, ...]
    limit: int  # the first `limit` samples of each task at each length
    views: tuple[View, ...]
    scores: tuple[LmEvalScore, ...]
    lm_eval_version: str
    tokenizer: PromptTokenizer  # what sized the tasks' prompts
    run: RunInfo | None

    @classmethod
    def from_dict(cls, data: dict, kind: str | None = None) -> LmEvalDocument:
        """A document of this format, or of format 1, 2 or 3 (upgraded first, one format at a time)."""
        found = check_format(data, KIND, FORMAT, (1, 2, 3))
        if found == 1:
            data = _from_format_1(data)
        if found in (1, 2):
            data = _from_format_2(data)
        if found in (1, 2, 3):
            data = _from_format_3(data)
        return read(cls, data, KIND)

    def score(self, task: str, length: int, view: View) -> LmEvalScore:
        return next(score for score in self.scores if (score.task, score.length, score.view) == (task, length, view))


def _from_format_1(data: dict) -> dict:
    """Format 1 had no interval on a score: computed from its samples, as format 2 stores it."""
    from model_utils.core.lmeval import wilson_interval

    scores = []
    for score in field(data, "scores", KIND):
        samples = field(score, "samples", KIND)
        successes = sum(field(sample, "score", KIND) for sample in samples)
        scores.append(score | {"interval": list(wilson_interval(successes, len(samples)))})
    return data | {"format": 2, "scores": scores}


def _from_format_2(data: dict) -> dict:
    """Format 2 (and 1) stored each view as its label, temperature, schedule label and recipe, and named a score's
    view by its label: each label is the view it was written from."""
    views = {field(entry, "label", KIND): old_view(entry, field(data, "lengths", KIND),
                                                    field(data, "trained_length", KIND), KIND)
             for entry in field(data, "views", KIND)}
    scores = []
    for score in field(data, "scores", KIND):
        if field(score, "view", KIND) not in views:
            raise RecordError(f"this {KIND} scores {score['view']}, a view it does not list: it is damaged; "
                              "regenerate it with the command that made it")
        scores.append(score | {"view": views[score["view"]]})
    return data | {"format": 3, "views": list(views.values()), "scores": scores}


def _from_format_3(data: dict) -> dict:
    """Formats 3 to 1 stored the tokenizer's sentence."""
    sentence = field(data, "tokenizer", KIND)
    if sentence not in OLD_TOKENIZERS:
        raise RecordError(f"this {KIND} sized its prompts with {sentence!r}, a tokenizer this version does not "
                          "know: regenerate it with the command that made it")
    return data | {"format": FORMAT, "tokenizer": OLD_TOKENIZERS[sentence].value}
