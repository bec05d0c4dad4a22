"""A sweep's words (SweepDocument): the committed sweeps side by side, one row each; the facts FINDINGS opens a
sweep's block on; why a sweep has no context-length verdict (how its spreads were made: words.corpus.spread_method)."""

from __future__ import annotations

from collections.abc import Sequence

from model_utils.core.names import model_name
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.verdict import (
    ContextVerdict,
    Dominant,
    LeverKind,
)
from model_utils.verdicts.words.common import NO_VALUE, SAVES, signed, span
from model_utils.verdicts.words.rows import layer_type_short, row_label

__all__ = ["SIDE_BY_SIDE_CAPTION", "SIDE_BY_SIDE_COLUMNS", "no_context_verdict",
           "no_verdict_without_loss", "side_by_side_row", "side_by_side_rows", "sweep_facts"]

SIDE_BY_SIDE_COLUMNS = ("model", "trained length", "text", "tokens", "loss at T = 1 breaks in", "loss rise",
                        "best T alone", "best recipe alone", "temperature on top", "untrained-distance mass at T = 1")
SIDE_BY_SIDE_CAPTION = (
    "One row per committed sweep, one model and one text each, past its trained length in nats per token "
    f"({SAVES}; 95% intervals in brackets): the loss rise is on the same words where the cut context was "
    "measured (else against the text's earlier positions), the best T alone is cross-fit on the text, the best "
    "recipe runs at T = 1, the temperature on top is what a temperature adds to a recipe, and the "
    "untrained-distance mass (sink excluded) is T = 1's, per layer type where the model has several.")


def side_by_side_row(document: SweepDocument) -> dict[str, str]:
    """One sweep's row: its model, text and length, and its verdict's numbers (NO_VALUE where it has none: a text
    that does not reach past the trained length, or a lever that did not run). Every number is the sweep's own
    verdict, said for the model it ran on; nothing is pooled across models."""
    row = {"model": model_name(document.model), "trained length": f"{document.trained_length:,}",
           "text": document.text_name, "tokens": f"{document.n_tokens:,}"}
    verdict = document.verdict
    if verdict is None:
        return row | dict.fromkeys(SIDE_BY_SIDE_COLUMNS[4:], NO_VALUE)
    decomposition, found = verdict.decomposition, verdict.loss_break
    recipe = decomposition.lever(Dominant.RECIPE)
    temperature = decomposition.best(LeverKind.TEMPERATURE)
    return row | {
        "loss at T = 1 breaks in": "does not break" if found.bucket is None else
        f"{span(found.bucket)} ({found.ratio:.3g}x)",
        "loss rise": f"{verdict.rise:+.2f}",
        "best T alone": NO_VALUE if temperature is None else signed(temperature.saved, temperature.interval),
        "best recipe alone": NO_VALUE if recipe is None else f"{row_label(recipe)}: "
                                                             f"{signed(recipe.saved, recipe.interval)}",
        "temperature on top": "; ".join(f"{row_label(lever)}: {signed(lever.saved, lever.interval)}"
                                        for lever in decomposition.on_top()) or NO_VALUE,
        "untrained-distance mass at T = 1": _untrained_at_1(verdict)}


def _untrained_at_1(verdict: ContextVerdict) -> str:
    """T = 1's untrained-distance mass past the trained length: per layer type where the model has several."""
    if verdict.layer_types:
        return "; ".join(f"{layer_type_short(kind)}: {kind.untrained_mass_past:.3f}" for kind in verdict.layer_types)
    rows = verdict.decomposition.table
    mass = rows[0].untrained_mass_past if rows else None
    return NO_VALUE if mass is None else f"{mass:.3f}"


def side_by_side_rows(documents: Sequence[SweepDocument]) -> list[dict[str, str]]:
    return [side_by_side_row(document) for document in documents]


def no_context_verdict(document: SweepDocument) -> str:
    """Why a sweep has no context-length verdict (its `verdict` is None)."""
    trained, n = document.trained_length, document.n_tokens
    if n <= trained:
        return (f"No verdict about the context past the trained length: this text ends at {n:,} tokens, within the "
                f"trained length of {trained:,}, so no position lies past it. To get one, run a text longer than "
                f"{trained:,} tokens with 'Run past the trained length' ticked.")
    buckets = document.buckets
    side = "past" if not any(start >= trained for start, _ in buckets) else "within"
    return (f"No verdict about the context past the trained length: no bucket of {document.bucket_size:,} "
            f"positions lies wholly {side} the trained length of {trained:,} (the text runs to {n:,} tokens). "
            "Choose a bucket size that divides the trained length, or a longer text.")


def no_verdict_without_loss(bucket: tuple[int, int]) -> str:
    """Why a sweep has no verdict when its last bucket past the trained length holds only the text's last token."""
    start, stop = bucket
    return (f"No verdict: the bucket of positions {start:,} to {stop - 1:,} past the trained length holds only the "
            "text's last token, which has no next token to score, so its loss is missing. Run at least one token more "
            "or fewer, so that the last bucket has a position with a next token.")


def sweep_facts(document: SweepDocument) -> str:
    """What a sweep ran, as FINDINGS opens its block: model, text, lengths, temperatures and recipes, time, memory and
    the command."""
    results = document.results
    recipes: dict[str, list[str]] = {}
    for result in results:
        if result.recipe is not None and result.temperature is not None:
            recipes.setdefault(result.recipe, []).append(f"{result.temperature:g}")
    return (f"{document.model}, {document.n_tokens:,} tokens of {document.text_source}, trained length "
            f"{document.trained_length:,}, buckets of {document.bucket_size:,} positions, temperatures "
            + ", ".join(f"{r.temperature:g}" for r in results if r.temperature is not None and r.recipe is None)
            + "".join(f"; {recipe} at T = {', '.join(temperatures)}" for recipe, temperatures in recipes.items())
            + f"; {document.seconds / 60:.0f} min of passes on {document.run.machine}, peak memory "
            f"{document.peak_rss_gb:.1f} GB. Command: `{document.run.command}` ({len(results)} passes, "
            "each cached as it finishes).")
