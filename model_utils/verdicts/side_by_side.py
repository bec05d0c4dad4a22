"""The committed sweeps side by side: one row per sweep (one model, one text each) of its verdict's numbers, the
table the Context length page and the README share. Every number is the sweep's own verdict (verdicts/context.py),
said for the model it ran on; nothing is pooled across models. Savings in nats per token past the trained length
against T = 1 on the model's own positions (positive = better), 95% intervals in brackets."""

from __future__ import annotations

from collections.abc import Sequence

from model_utils.core.names import model_name
from model_utils.core.records.sweep import SweepDocument
from model_utils.verdicts import NO_VALUE
from model_utils.verdicts.context import SAVES, ContextVerdict, context_verdict
from model_utils.verdicts.decomposition import Lever

COLUMNS = ("model", "trained length", "text", "tokens", "loss at T = 1 breaks at", "loss rise",
           "best T alone", "best recipe alone", "temperature on top", "untrained-distance mass at T = 1")
CAPTION = ("One row per committed sweep, one model and one text each, past its trained length in nats per token "
           f"({SAVES}; 95% intervals in brackets): the best T alone is cross-fit on the text, the best recipe runs "
           "at T = 1, the temperature on top is what a temperature adds to a recipe, and the untrained-distance mass "
           "(sink excluded) is T = 1's, per layer type where the model has several.")


def sweep_row(document: SweepDocument) -> dict[str, str]:
    """One sweep's row (COLUMNS): its model, text and length, and its verdict's numbers (NO_VALUE where it has none:
    a text that does not reach past the trained length, or a lever that did not run)."""
    row = {"model": model_name(document.model), "trained length": f"{document.trained_length:,}",
           "text": document.text_source.split(" (")[0], "tokens": f"{document.n_tokens:,}"}
    verdict = context_verdict(document)
    return row | (dict.fromkeys(COLUMNS[4:], NO_VALUE) if verdict is None else _numbers(verdict))


def sweep_rows(documents: Sequence[SweepDocument]) -> list[dict[str, str]]:
    return [sweep_row(document) for document in documents]


def _numbers(verdict: ContextVerdict) -> dict[str, str]:
    decomposition = verdict.decomposition
    on_top = [lever for lever in decomposition.levers if lever.kind == "on_top" and lever.saved is not None]
    recipe = decomposition.lever("recipe")
    return {"loss at T = 1 breaks at": "does not break" if verdict.breaks is None else
            f"{verdict.breaks_at:,} ({verdict.breaks['ratio']:.3g}x)",
            "loss rise": f"{verdict.rise:+.2f}",
            "best T alone": _saved(decomposition.best(("temperature",))),
            "best recipe alone": NO_VALUE if recipe is None else f"{recipe.label}: {_saved(recipe)}",
            "temperature on top": "; ".join(f"{lever.label}: {_saved(lever)}" for lever in on_top) or NO_VALUE,
            "untrained-distance mass at T = 1": _untrained(verdict)}


def _saved(lever: Lever | None) -> str:
    if lever is None or lever.saved is None:
        return NO_VALUE
    bounds = lever.interval
    return f"{lever.saved:+.3f}" + ("" if bounds is None else f" ({bounds[0]:+.3f} to {bounds[1]:+.3f})")


def _untrained(verdict: ContextVerdict) -> str:
    """T = 1's untrained-distance mass past the trained length: per layer type where the model has several."""
    if verdict.layer_types:
        return "; ".join(f"{kind.short}: {kind.untrained_mass_past:.3f}" for kind in verdict.layer_types)
    mass = verdict.decomposition.rows[0].get("untrained_mass_past") if verdict.decomposition.rows else None
    return NO_VALUE if mass is None else f"{mass:.3f}"
