"""An lm-evaluation-harness run's words (LmEvalDocument): FINDINGS' table of scores by length per view, and which
views score differently from T = 1, by how many samples."""

from __future__ import annotations

from statistics import median_low

from model_utils.core.names import model_name
from model_utils.core.records.lmeval import LmEvalDocument, LmEvalScore, PromptTokenizer
from model_utils.core.views import View

__all__ = ["lmeval_findings", "lmeval_sentence", "lmeval_tokenizer"]


def lmeval_tokenizer(document: LmEvalDocument) -> str:
    """What sized the tasks' prompts (RULER built its samples with it), from the fact the document stores."""
    return {PromptTokenizer.MODEL: "the model's own tokenizer, saved to a temporary folder"}[document.tokenizer]


def lmeval_findings(document: LmEvalDocument) -> list[str]:
    """FINDINGS' block of one lm-evaluation-harness run: what ran, a table of the scores by length per view, and
    which views score other than T = 1 at some length (with so few samples, one sample is a big step)."""
    step = 1 / document.limit
    lines = [f"{model_name(document.model)}: {', '.join(document.tasks)} through lm-evaluation-harness "
             f"{document.lm_eval_version}, the first {document.limit} samples at each length (one sample is "
             f"{step:.2f} of a score; in brackets, the score's Wilson 95% interval over its samples); a length is the "
             "task's own (RULER's sequence length), the prompts the model read a little shorter; trained length "
             f"{document.trained_length:,}" + (f"; command: `{document.run.command}`" if document.run else "") + ".",
             "", "| task | view | " + " | ".join(_length_column(document, length) for length in document.lengths)
             + " |", "|---|---|" + "---:|" * len(document.lengths)]
    for task in document.tasks:
        for view in document.views:
            cells = " | ".join(_score_cell(document.score(task, length, view)) for length in document.lengths)
            lines.append(f"| {task} | {view.label} | {cells} |")
    return [*lines, "", lmeval_sentence(document)]


def _length_column(document: LmEvalDocument, length: int) -> str:
    """'length 8,192 (prompts of about 7,585 tokens)': the task's length and the median prompt the model read at
    it, over every task and view (the prompts are the same texts whatever the view)."""
    prompts = [sample.prompt_tokens for score in document.scores if score.length == length
               for sample in score.samples]
    if not prompts:
        return f"length {length:,}"
    return f"length {length:,} (prompts of about {median_low(prompts):,} tokens)"


def _score_cell(score: LmEvalScore) -> str:
    """'1.00 (0.61 to 1.00)': a score with its Wilson 95% interval over its samples."""
    low, high = score.interval
    return f"{score.score:.2f} ({low:.2f} to {high:.2f})"


def lmeval_sentence(document: LmEvalDocument) -> str:
    """Which views score differently from T = 1, task by task and length by length, by how many samples; where
    every view gets every sample right, that the task does not tell them apart there."""
    if all(score.score == 1 for score in document.scores):
        return (f"Every view gets all {document.limit} samples right at every length: at these lengths the task does "
                "not tell the views apart.")
    said = []
    reference = View(1.0)
    for view in (view for view in document.views if view != reference):
        moved = [(task, length, document.score(task, length, view).score
                  - document.score(task, length, reference).score)
                 for task in document.tasks for length in document.lengths]
        moved = [(task, length, gap) for task, length, gap in moved if round(gap * document.limit) != 0]
        if not moved:
            said.append(f"{view.label} scores as T = 1 at every length")
        else:
            said.append(f"{view.label} scores " + ", ".join(
                f"{abs(round(gap * document.limit))} sample{'s' if abs(round(gap * document.limit)) != 1 else ''} "
                f"{'more' if gap > 0 else 'fewer'} right at {length:,} tokens" for _, length, gap in moved))
    return ("; ".join(said) + f" ({document.limit} samples a length: a check, not a measurement).") if said else ""

