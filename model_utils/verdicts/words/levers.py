"""The levers of a verdict's decomposition in sentences: every row's saving with its untrained-distance mass, the
recipe families side by side, and the published schedules (ranked, the best and the worst: verdicts.decomposition's
picks), each schedule's logit multiplier m said as the temperature T = 1 / m it amounts to."""

from __future__ import annotations

from collections.abc import Sequence

from model_utils.core.records.verdict import (
    ContextVerdict,
    Decomposition,
    DecompositionRow,
    Family,
    LeverKind,
    Multipliers,
)
from model_utils.verdicts.decomposition import best_and_worst, by_saving
from model_utils.verdicts.words.common import FAMILIES, MOVES, SAVES, bracket, interval_name, percent_of_rise, scope
from model_utils.verdicts.words.rows import has_recipes, row_label, schedule_words

__all__ = ["decomposition_sentence", "families_sentence", "schedules_line", "schedules_sentence"]


def _mass_bracket(row: DecompositionRow) -> str:
    """' [0.020, goes away]': a row's untrained-distance mass past the trained length and its word; a remapping's
    on the remapped distances, with the distances in the text's beside it."""
    if row.untrained is None:
        return ""
    said = f"{row.effective_untrained_mass_past:.3f}"
    if row.remaps:
        raw = row.untrained_mass_past
        return f" [{said} on the remapped distances, {MOVES[row.untrained]}" + \
            ("" if raw is None else f"; {raw:.3f} on the distances in the text") + "]"
    return f" [{said}, {MOVES[row.untrained]}]"




def decomposition_sentence(verdict: ContextVerdict) -> str | None:
    decomposition = verdict.decomposition
    if not has_recipes(decomposition):
        return None
    reference, *rows = decomposition.table
    mass = ""
    if reference.untrained_mass_past is not None and decomposition.untrained_constant_range:
        low, high = decomposition.untrained_constant_range
        mass = (f"; untrained-distance mass past it in brackets, {reference.untrained_mass_past:.3f} at T = 1 "
                f"and {low:.3f}-{high:.3f} under the constant temperatures")
    if mass and any(row.remaps for row in rows):
        mass += (", for a distance remapping on the distances it gives the model (in the text, the keys stay as "
                 "far back)")
    name = interval_name(verdict)
    parts = [f"{row_label(row)} {row.saved:+.3f}{bracket(row.interval, name=name)}" + _mass_bracket(row)
             for row in rows if row.saved is not None]
    return (f"Decomposition past the trained length ({scope(verdict.documents)}), nats per token saved against T = 1 "
            f"on the model's own positions ({SAVES}{mass}): " + "; ".join(parts) + ".")


def families_sentence(verdict: ContextVerdict) -> str | None:
    """The recipe families side by side, where more than the frequency changes ran (None otherwise): each by the
    lever Decomposition.family_lever picks, its recipe that saves the most at T = 1 without a temperature of its
    own, with its share of the rise and where it leaves the untrained-distance mass (for a remapping on the
    distances it gives and in the text); a recipe of the family with a temperature of its own that saves more is
    named beside it."""
    decomposition = verdict.decomposition
    if decomposition.families() in ([], [Family.FREQUENCY]):
        return None
    parts, name = [], interval_name(verdict)
    for family in decomposition.families():
        lever = decomposition.family_lever(family)
        share = decomposition.share_of_rise(lever)
        share = "" if share is None else f", {percent_of_rise(share)}"
        parts.append(f"{FAMILIES[family]}, {row_label(lever)}: {lever.saved:+.3f}{bracket(lever.interval, name=name)}"
                     f"{share}" + _mass_bracket(lever) + _with_own_temperature(decomposition, lever))
    said = (f"The recipe families past the trained length, each by its recipe that saves the most at T = 1 without "
            f"a temperature of its own ({scope(verdict.documents)}; {SAVES}; untrained-distance mass past it in "
            "brackets): " + "; ".join(parts) + ".")
    gap = decomposition.family_gap()
    if gap is None or gap.saved is None:
        return said
    return (f"{said} The first two on the same resamples: {row_label(gap)} {gap.saved:+.3f}"
            f"{bracket(gap.interval, name=name)}.")


def _with_own_temperature(decomposition: Decomposition, lever: DecompositionRow) -> str:
    """' (yarn (s=2) + T=1, with a temperature of its own, saves more: +2.094)': the family's recipes at T = 1 that
    carry their own temperature and save more than its lever; '' where none does."""
    more = [row for row in decomposition.levers if row.lever is LeverKind.RECIPE and row.family is lever.family
            and row.own_temperature and row.saved is not None and row.saved > lever.saved]
    if not more:
        return ""
    return " (" + ", ".join(f"{row_label(row)}, with a temperature of its own, saves more: {row.saved:+.3f}"
                            for row in more) + ")"


# --- the published schedules ----------------------------------------------------------------------------------------


def schedules_sentence(verdict: ContextVerdict) -> str | None:
    schedules = verdict.decomposition.schedules()
    if not schedules:
        return None
    name = interval_name(verdict)
    return (f"Published schedules past the trained length ({scope(verdict.documents)}; {SAVES}; each schedule's "
            "logit multiplier m shown as the temperature it amounts to, T = 1 / m): "
            + "; ".join(_schedule_text(row, name) for row in by_saving(schedules)) + ".")


def _temperatures(bounds: Sequence[float]) -> str:
    """A multiplier range as the temperatures it amounts to: 'T 0.93-1' for m 1-1.08."""
    low, high = sorted((1 / bounds[1], 1 / bounds[0]))
    return f"T {low:.3g}" + (f"-{high:.3g}" if f"{high:.3g}" != f"{low:.3g}" else "")


def _schedule_text(row: DecompositionRow, name: str) -> str:
    text = f"{row.view.label} {row.saved:+.3f}{bracket(row.interval, name=name)}"
    multipliers = row.multipliers or Multipliers(trained_context=None, past=None)
    if multipliers.past is None:
        return text
    text += f" ({_temperatures(multipliers.past)} past it"
    inside = multipliers.trained_context
    if inside and inside[0] < 1:
        text += f"; softer before the trained length, up to T = {1 / inside[0]:.3g} there"
        if row.saved_inside is not None:
            text += f", which costs {-row.saved_inside:.3f} nats per token inside it"
    return text + ")"


def schedules_line(verdict: ContextVerdict, where: str = "here") -> str | None:
    """The best and the worst published schedule on one text (`where`: "here", or "on <model>"), with what each
    does to the logits (m); None without schedules."""
    schedules = [row for row in verdict.decomposition.levers if row.lever is LeverKind.SCHEDULE
                 and row.saved is not None]
    if not schedules:
        return None
    best, worst = best_and_worst(schedules)
    said = (f"**Published schedules** sharpen past the trained length (their T falls below 1). Best {where}: "
            f"{best.view.label}, {best.saved:+.3f} past it ({schedule_words(best.multipliers)}); worst: "
            f"{worst.view.label}, {worst.saved:+.3f} ({schedule_words(worst.multipliers)}).")
    inside = best.multipliers.trained_context if best.multipliers else None
    if inside is None or min(inside) >= 1 or best.saved_inside is None or best.saved_inside >= 0:
        return said
    only_past = [row for row in schedules if row.multipliers and row.multipliers.trained_context
                 and all(abs(m - 1) < 1e-9 for m in row.multipliers.trained_context)]
    alike = "" if not only_past else (" The schedules that change nothing before it save "
                                      + ", ".join(f"{row.view.label} {row.saved:+.3f}" for row in only_past) + ".")
    return (said + f" The gain of {best.view.label} comes with softening every position before the trained length, "
            f"which costs {-best.saved_inside:.3f} nats per token there." + alike)


