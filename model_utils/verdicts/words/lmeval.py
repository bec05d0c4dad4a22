"""An lm-evaluation-harness run's words (LmEvalDocument): FINDINGS' table of scores by length per view, and which
views score differently from T = 1, by how many samples."""

from __future__ import annotations

from statistics import median_low

from model_utils.core.names import model_name
from model_utils.core.records.lmeval import LmEvalDocument, LmEvalScore, PromptTokenizer
from model_utils.core.views import View
from model_utils.verdicts.words.rows import plain_view_name

__all__ = ["lmeval_findings", "lmeval_heading", "lmeval_sentence", "lmeval_tokenizer", "past_trained_sentence"]


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
    past = [sentence for task in document.tasks if (sentence := past_trained_sentence(document, task))]
    said = [line for sentence in past for line in (sentence, "")]
    if past and min(document.lengths) > document.trained_length:
        return [*lines, "", *said[:-1]]  # every length is past the trained length: the past sentences say it all
    return [*lines, "", *said, lmeval_sentence(document)]


def lmeval_heading(document: LmEvalDocument) -> str:
    """A run's heading: the model and its lengths against the trained length ('SmolLM2-135M, 12,288 tokens: past
    its trained length')."""
    lengths = f"{min(document.lengths):,}" + ("" if len(document.lengths) == 1 else f" to {max(document.lengths):,}")
    where = ("past its trained length" if min(document.lengths) > document.trained_length else
             "inside its trained length" if max(document.lengths) <= document.trained_length else
             "inside and past its trained length")
    return f"{model_name(document.model)}, {lengths} tokens: {where}"


def past_trained_sentence(document: LmEvalDocument, task: str) -> str | None:
    """Past the trained length, what each view gets right out of the samples, with its Wilson 95% interval, and
    which views the samples tell apart from T = 1 (only where the two intervals do not overlap); None where no
    length of the run is past the trained length, or T = 1 was not run."""
    reference = View(1.0)
    past = [length for length in document.lengths if length > document.trained_length]
    if not past or reference not in document.views:
        return None
    verb = "finds the needle in" if task.startswith("niah") else "gets right"
    said = []
    for length in past:
        scores = [(view, document.score(task, length, view)) for view in document.views]
        counts = ", ".join(f"{plain_view_name(view)} in {_right(score)}" if index else
                           f"{plain_view_name(view)} {verb} {_right(score)}" for index, (view, score) in
                           enumerate(sorted(scores, key=lambda pair: pair[0] != reference)))
        said.append(f"At {length:,} tokens, past the trained length of {document.trained_length:,} (in brackets, "
                    f"the Wilson 95% interval of each share), {counts}. {_told_apart(scores, reference)}")
    return " ".join(said)


def _right(score: LmEvalScore) -> str:
    """'14/20 (0.48 to 0.85)': the samples a view got right, of those run, with the interval of the share."""
    low, high = score.interval
    return f"{round(score.score * len(score.samples))}/{len(score.samples)} ({low:.2f} to {high:.2f})"


def _told_apart(scores: list[tuple[View, LmEvalScore]], reference: View) -> str:
    """Which views the samples tell apart from T = 1: those whose interval does not overlap T = 1's."""
    base = dict(scores)[reference].interval
    more = [plain_view_name(view) for view, score in scores if score.interval[0] > base[1]]
    fewer = [plain_view_name(view) for view, score in scores if score.interval[1] < base[0]]
    if not more and not fewer:
        return "Every interval overlaps T = 1's: these samples cannot tell the views apart."
    said = [f"{', '.join(more)} {'finds' if len(more) == 1 else 'find'} more than T = 1"] if more else []
    said += [f"{', '.join(fewer)} {'finds' if len(fewer) == 1 else 'find'} fewer"] if fewer else []
    return "; ".join(said) + ": their intervals do not overlap T = 1's."


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

