"""What we found, the README's short form and FINDINGS' opening: one plain sentence computed from each model's
corpus verdict, at most three bullets with one number each in the words a teacher uses (shares are of the rise on
the same tokens where it was measured, and say so), what the findings rest on, and each verdict's two rises side by
side (FINDINGS' rises block)."""

from __future__ import annotations

from collections.abc import Sequence

from model_utils.core.names import model_as_run, model_name
from model_utils.core.records.retrieval import Direction as ReachDirection
from model_utils.core.records.retrieval import (
    ReachOutcome,
    RetrievalDocument,
)
from model_utils.core.records.verdict import (
    ContextVerdict,
    DecompositionRow,
    Dominant,
    LeverKind,
    RiseBase,
    RowKind,
)
from model_utils.core.views import View
from model_utils.verdicts.retrieval import REACH_SHARE
from model_utils.verdicts.words.common import ALL_OF_IT, NO_VALUE, joined, span, spread_name
from model_utils.verdicts.words.retrieval import between_text, reach_share_words
from model_utils.verdicts.words.rows import row_label

__all__ = ["HARDLY_HELPS", "PLAIN_RECIPES", "RISES_COLUMNS", "found_bullets", "found_conclusion", "no_probe_bullet",
           "plain_lever", "rise_row", "scope_sentence"]

PLAIN_RECIPES = {
    "yarn-rope": "YaRN's stretch of the positions", "yarn": "YaRN in full (its stretch and its own sharpening)",
    "dynamic": "dynamic NTK scaling of the positions", "linear": "linear interpolation of the positions",
    "llama3": "Llama 3.1's stretch of the positions", "self-extend": "Self-Extend's grouped distances",
    "rerope": "ReRoPE's clipped distances", "leaky-rerope": "leaky ReRoPE's distances",
    "sink-window": "keeping the first tokens and a window"}


def plain_lever(row: DecompositionRow) -> str:
    """A lever as a teacher would name it: 'YaRN's stretch of the positions', 'the best temperature alone'."""
    if row.rope is not None and row.kind is RowKind.RECIPE:
        return PLAIN_RECIPES.get(row.rope.kind, row.rope.label)
    if row.kind is RowKind.HELD_OUT and row.rope is None:
        return "the best temperature alone"
    if row.kind is RowKind.SCHEDULE:
        return f"the published schedule {row.view.label}"
    return row_label(row)


HARDLY_HELPS = 0.1  # a lever that brings back less than this share of the rise "hardly helps"


def found_conclusion(corpora: Sequence[tuple[str, ContextVerdict]]) -> str:
    """The one sentence "What we found" opens on, computed from each model's corpus verdict (each model named as it
    ran): which lever brings the loss back past the trained length on every model, or that none does on all of
    them, and what the best temperature alone does: "hardly helps" where it brings back less than HARDLY_HELPS of
    the rise on every model."""
    leads = [verdict.decomposition.dominant for _, verdict in corpora]
    names = " and ".join(model_as_run(model) for model, _ in corpora)
    models = (f"Past the length it was trained on, {names} predicts" if len(corpora) == 1 else
              f"Past the length they were trained on, {names} predict")
    if leads and all(lead is Dominant.RECIPE for lead in leads):
        names = {plain_lever(verdict.decomposition.lever(Dominant.RECIPE)) for _, verdict in corpora}
        lever = names.pop() if len(names) == 1 else "a change of the positions"
        return (f"{models} text worse; {lever} brings that back, and "
                f"{_temperature_alone(corpora)}.")
    if leads and all(lead is Dominant.TEMPERATURE for lead in leads):
        return (f"{models} text worse, and a softmax temperature "
                "brings that back.")
    return (f"{models} text worse, and no one lever brings it back "
            "on every model.")


def _temperature_alone(corpora: Sequence[tuple[str, ContextVerdict]]) -> str:
    """'a softmax temperature hardly helps' where the best temperature alone brings back less than HARDLY_HELPS of
    the rise on every model; else the most it brings back."""
    shares = [verdict.decomposition.share_of_rise(lever) for _, verdict in corpora
              if (lever := verdict.decomposition.best(LeverKind.TEMPERATURE)) is not None]
    known = [share for share in shares if share is not None]
    if known and len(known) == len(corpora) and max(known) < HARDLY_HELPS:
        return "a softmax temperature hardly helps"
    if not known:
        return "what a softmax temperature alone does was not measured"
    return f"a softmax temperature alone brings back at most {max(known):.0%} of the rise"


def _share_words(share: float | None) -> str:
    """'96%' or 'an unknown share': a share of the rise as a percentage; 'all (101%)' from ALL_OF_IT on (never
    "more than all": no interval on the difference was measured)."""
    if share is None:
        return "an unknown share"
    return f"all ({share:.0%})" if share >= ALL_OF_IT else f"{share:.0%}"


def found_bullets(corpora: Sequence[tuple[str, ContextVerdict]],
                  probes: Sequence[RetrievalDocument] = ()) -> list[str]:
    """At most three bullets with one number each: the first model's lead lever's share of the rise, the best
    temperature alone's share there, and how far back the first probe's model still uses what it read."""
    bullets = []
    if corpora:
        model, verdict = corpora[0]
        decomposition, documents = verdict.decomposition, verdict.documents
        on = f"({model_name(model)}, {documents} documents)" if documents else f"({model_name(model)}, one text)"
        base = ("on the same words" if decomposition.rise_base is RiseBase.CUT_CONTEXT
                else "against earlier parts of the text")
        lead = decomposition.lever(Dominant.RECIPE) or decomposition.lever(decomposition.dominant)
        if lead is not None:
            bullets.append(f"{plain_lever(lead)[0].upper()}{plain_lever(lead)[1:]} brings back "
                           f"{_share_words(decomposition.share_of_rise(lead))} of the loss's rise (lower is "
                           f"better) past the trained length, {base} {on}.")
        alone = decomposition.best(LeverKind.TEMPERATURE)
        if alone is not None:
            bullets.append(_temperature_bullet(verdict, decomposition.share_of_rise(alone)))
    if probes:
        bullets.append(_probe_bullet(probes[0]))
    return bullets[:3]


def _temperature_bullet(verdict: ContextVerdict, share: float | None) -> str:
    """What the best temperature alone brings back, said as what it is: a temperature for each block of positions
    (each past bucket), chosen apart from what it is scored on; with one temperature throughout beside it, where it
    was scored apart too."""
    best = verdict.gains.best
    block = f"block of {best[0].bucket[1] - best[0].bucket[0]:,} positions" if best else "block of positions"
    chosen = "other documents" if verdict.documents else "other parts of the text"
    said = f"The best temperature per {block}, chosen on {chosen}, brings back {_share_words(share)}"
    constant = verdict.gains.constant
    held = None if constant is None else constant.held_out
    if held is None or verdict.rise <= 0:
        return said + "."
    return said + f" (one temperature throughout: {_share_words(held.saved / verdict.rise)})."


def _probe_bullet(probe: RetrievalDocument) -> str:
    """How far back the probe's model still uses what it read at T = 1: the two measured distances between which what
    the first copy saves falls below REACH_SHARE of its shortest-distance value; then what the plain temperatures
    (no recipe) do to that: which cut it short and which take it farther (their brackets apart from T = 1's, on
    every passage unless said to hold on the mean only), and which show no measurable shift (brackets that overlap
    T = 1's); the short form where the model uses nothing even at the shortest distance."""
    reach, model = probe.verdict.reach, model_name(probe.model)
    if reach.outcome is ReachOutcome.NONE:
        return f"{model} does not use a passage it read earlier, even at the shortest distance measured."
    head = (f"{model} still uses a passage it read {reach.longest:,} tokens back, the farthest measured"
            if reach.outcome is ReachOutcome.BEYOND else
            f"{model}'s use of what it read {'halves' if REACH_SHARE == 0.5 else 'falls below ' + reach_share_words()}"
            f" {between_text(reach.between)} back")
    plain = {view.label: view.temperature for view in probe.views
             if view.temperature is not None and view.rope is None and view.schedule is None and view != View(1.0)}
    shifts = [shift for shift in probe.verdict.shifts if shift.view.label in plain]
    beyond = [s.view.label for s in shifts if s.direction is ReachDirection.BOTH_BEYOND]
    if shifts and len(beyond) == len(shifts):
        return (f"{head}, and so {'does' if len(beyond) == 1 else 'do'} {_by_side(beyond, plain)}: this probe "
                "cannot tell whether a temperature moves it.")
    parts = [part for side in ("softer", "sharper") if (part := _side_part(side, shifts, plain))]
    if not parts:
        return f"{head}; no temperature tried moves it past what the probe can tell."
    return head + "".join(f"; {part}" for part in parts) + "."


def _side_part(side: str, shifts: Sequence, temperatures: dict[str, float]) -> str | None:
    """What the softer (or sharper) temperatures do to the reach, in one clause: 'softer T (1.1 to 1.5) cuts it
    short' where all of them move it the same way on every passage, 'no sharper T (0.7 to 0.9) moves it on every
    passage' where none does, else each by name (a move on the mean only said so)."""
    named = [s for s in shifts if (temperatures[s.view.label] > 1) == (side == "softer")]
    if not named:
        return None
    values = sorted(temperatures[s.view.label] for s in named)
    tried = f"{values[0]:g}" if len(values) == 1 else f"{values[0]:g} to {values[-1]:g}"
    for direction, verb in ((ReachDirection.SHORTER, "cuts it short"), (ReachDirection.LONGER, "takes it farther")):
        if len(named) > 1 and all(s.direction is direction and s.every_passage for s in named):
            return f"{side} T ({tried}) {verb}"
    moves = (ReachDirection.SHORTER, ReachDirection.LONGER)
    if len(named) > 1 and not any(s.every_passage and s.direction in moves for s in named):
        return f"no {side} T ({tried}) moves it on every passage"
    clauses = []
    for direction, verb in ((ReachDirection.SHORTER, "cut"), (ReachDirection.LONGER, "take")):
        for every in (True, False):  # "on every passage" goes unsaid; the mean alone is said so
            moved = [s.view.label for s in named if s.direction is direction and s.every_passage == every]
            if moved:
                ending = "short" if direction is ReachDirection.SHORTER else "farther"
                clauses.append(f"{_by_side(moved, temperatures)} {verb}{'s' if len(moved) == 1 else ''} it {ending}"
                               + ("" if every else " on the passages' mean, not on each"))
    same = [s.view.label for s in named if s.direction is ReachDirection.OVERLAP]
    if same:
        clauses.append(f"{_by_side(same, temperatures)} {'shows' if len(same) == 1 else 'show'} no measurable shift")
    return ", ".join(clauses)


def _by_side(labels: Sequence[str], temperatures: dict[str, float]) -> str:
    """'T=1.5 (softer)', 'T=0.7 and T=0.9 (sharper)', 'T=0.9 (sharper) and T=1.5 (softer)'."""
    sides = [(side, [label for label in labels if (temperatures[label] > 1) == (side == "softer")])
             for side in ("sharper", "softer")]
    return " and ".join(f"{joined(named)} ({side})" for side, named in sides if named)


def scope_sentence(models: list[str]) -> str:
    """What the findings rest on: one small model, or each model named as it ran, and texts that ship with Python or
    numpy."""
    if len(models) == 1:
        return f"One small model ({models[0]}) and texts that ship with Python or numpy: not a law."
    return (f"{len(models)} small models ({'; '.join(models)}), each on texts that ship with Python or numpy, every "
            "line on the model it names: not a law.")


RISES_COLUMNS = ("model", "measured on", "loss past the trained length at T = 1",
                 "the same words, read with at most the trained length before them",
                 "rise on the same words (the shares of the rise are of it)",
                 "rise against earlier positions (other words)")


def rise_row(model: str, verdict: ContextVerdict, text: str | None = None) -> list[str]:
    """One verdict's two rises past the trained length: on the same words (against the cut context), where it was
    measured, and the older one against the second half of the trained context, with its positions; `text`, a
    sweep's text (None for a corpus)."""
    same, missing = verdict.same_token_rise, f"{NO_VALUE} (not measured)"
    measured = f"one text, {text}" if verdict.documents is None else f"{verdict.documents} documents"
    if same is None:
        cut = rise = missing
    else:
        spread = "" if same.interval is None else (
            f" ({spread_name(same.spread, same.documents)} {same.interval[0]:.2f} to {same.interval[1]:.2f})")
        cut, rise = f"{same.nll_cut:.2f}", f"{same.rise:+.2f}{spread}"
    earlier = f"{verdict.rise_against_earlier:+.2f} (against {span(verdict.before)})"
    if verdict.decomposition.rise_base is RiseBase.EARLIER_POSITIONS:
        earlier += "; the shares of the rise are of this one"
    return [model_name(model), measured, f"{verdict.nll_past:.2f}", cut, rise, earlier]


def no_probe_bullet(link: str) -> str:
    """What We found's third bullet before a probe is committed: where it will show (`link`, the Retrieval page)."""
    return (f"How far back the model still uses what it read: the probe's run is not committed yet "
            f"([the Retrieval page]({link})).")
