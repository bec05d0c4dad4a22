"""A fit's words (fit.json's FitSummary, judged by verdicts/fit.py as a FitVerdict): the table row, the headline,
each held-out gain as the verdict judged it, YaRN's law against the fitted multiplier, the terminal table, and how
the fit was made, from the facts its file stores."""

from __future__ import annotations

from model_utils.core.bootstrap import CONFIDENCE
from model_utils.core.records.fit import FitSummary, Gain, HeldOutMethod, IntervalMethod, Optimizer, Reused
from model_utils.verdicts.fit import FitVerdict, Judgement, LawPosition, law
from model_utils.verdicts.words.common import NO_VALUE, SAVES_PER_TOKEN, signed

__all__ = ["AGAINST", "FIT_COLUMNS", "FIT_FAMILIES", "FIT_TABLE_CAPTION", "LAW_POSITIONS", "fit_headline",
           "fit_methods", "fit_name", "fit_point_label", "fit_reused", "fit_row", "fit_sentences", "fit_table"]

# what each held-out gain is measured against, as the sentences name it, in verdicts.fit.REFERENCES' order
AGAINST = {
    "plain": "the model as trained (T = 1, its own positions)",
    "recipe_at_1": "the recipe at T = 1 (the temperature's own share)",
    "recipe": "the recipe as published (with its own temperature)",
    "best_constant": "the best constant T on the model's own positions, chosen on the training documents",
    "best_schedule": "the best published schedule, chosen on the training documents",
}
FIT_TABLE_CAPTION = (f"Held out: each document is scored with the value fitted on the other fold's documents "
                     f"({SAVES_PER_TOKEN}, past the trained length; intervals: bootstrap over the held-out documents).")
FIT_COLUMNS = ("fit", "tokens", "fitted", "logit multiplier", "YaRN's law", "saved vs T = 1", "vs recipe at T = 1",
               "vs recipe as published", "documents")


def fit_name(summary: FitSummary) -> str:
    """'constant T on yarn-rope (s=2)'."""
    on = "the model's own positions" if summary.rope is None else summary.rope.label
    return f"{summary.family} {summary.knob} on {on}"


def _gain_cell(entry: Gain | None) -> str:
    return NO_VALUE if entry is None else signed(entry.saved, entry.interval)


def fit_row(summary: FitSummary) -> dict[str, str]:
    """One line of the fit table: what was fitted, where, and the held-out gains with their intervals."""
    gains = summary.held_out.gains
    low, high = summary.interval
    multiplier, yarn = summary.multiplier, law(summary)
    fitted = f"{summary.knob} = {summary.parameter:.3f} ({low:.3f}-{high:.3f})" + (" at a bound" if summary.at_bound
                                                                                  else "")
    return {
        "fit": fit_name(summary), "tokens": f"{summary.settings.max_tokens:,}", "fitted": fitted,
        "logit multiplier": (f"{multiplier.fitted:.3f} ({multiplier.interval[0]:.3f}-"
                             f"{multiplier.interval[1]:.3f})") if multiplier else NO_VALUE,
        "YaRN's law": NO_VALUE if yarn is None else f"{yarn.yarn_law:.3f} at s = {yarn.scale:g}",
        "saved vs T = 1": _gain_cell(gains.get("plain")),
        "vs recipe at T = 1": _gain_cell(gains.get("recipe_at_1")),
        "vs recipe as published": _gain_cell(gains.get("recipe")),
        "documents": f"{len(summary.documents)} in {len(summary.folds)} folds",
    }


def fit_headline(summary: FitSummary) -> str:
    yarn = law(summary)
    low, high = summary.interval
    resolved = "" if high - low > 2 * summary.tolerance else (
        f"; the search stops at a tolerance of {summary.tolerance:g}, so values are not told apart finer than that")
    text = (f"Fitted on {len(summary.documents)} documents, {fit_name(summary)}: {summary.knob} = "
            f"{summary.parameter:.3f} ({low:.3f}-{high:.3f} over documents{resolved})")
    if yarn is not None:
        text += (f", a logit multiplier of {yarn.fitted:.3f} against {yarn.yarn_law:.3f} from "
                 f"YaRN's law at s = {yarn.scale:g}")
    return text + "."


LAW_POSITIONS = {
    LawPosition.WITHIN: "lies within the fitted multiplier's interval over documents",
    LawPosition.BELOW: "is below the fitted multiplier's interval over documents (the fit sharpens more than the law)",
    LawPosition.ABOVE: "is above the fitted multiplier's interval over documents (the law sharpens more than the fit)",
}


def fit_sentences(verdict: FitVerdict) -> list[str]:
    """A fit's verdict: the fitted value, where YaRN's law lies against it, each held-out gain judged by its
    interval, what the fit costs inside the trained length, and its scope."""
    summary = verdict.summary
    gains = summary.held_out.gains
    said = [fit_headline(summary)]
    if summary.at_bound:
        said.append(f"A fold's fit sits at the edge of the searched interval {list(summary.bounds)}: the minimum may "
                    "lie beyond it.")
    if verdict.law_position is not None:
        said.append(f"YaRN's law, (0.1 ln s + 1)^2 = {summary.multiplier.yarn_law:.3f}, "
                    f"{LAW_POSITIONS[verdict.law_position]}.")
    for name, judgement in verdict.judgements.items():
        if name == "best_constant" and _only_t1(summary) and "plain" in verdict.judgements:
            continue  # the same comparison as against the model as trained, which says so
        entry, against = gains[name], _against(summary, name)
        low, high = entry.interval
        judged = {Judgement.BETTER: f"the fit beats {against}", Judgement.WORSE: f"the fit loses to {against}",
                  Judgement.NO_DIFFERENCE: f"the fit and {against} do not differ measurably"}[judgement]
        said.append(f"On the held-out documents, past the trained length, {judged}: "
                    f"{entry.saved:+.3f} nats per token ({low:+.3f} to {high:+.3f})" + _scale(summary, name, entry)
                    + ".")
    said.append(f"In context (before the trained length) the fit saves {-summary.held_out.in_context_change:+.4f} "
                "nats per token against T = 1 (negative: it costs there).")
    said.append(f"Scope: one model, {len(summary.documents)} documents of one corpus; not a law.")
    return said


def _only_t1(summary: FitSummary) -> bool:
    """Whether T = 1 was the only constant temperature compared: then "the best constant T" is T = 1 itself, and
    that comparison is the one against the model as trained."""
    return summary.compared_temperatures == (1.0,)


def _against(summary: FitSummary, name: str) -> str:
    """What a held-out gain is against (AGAINST), and for the best constant T, what it was chosen among: where T = 1
    was the only constant temperature compared, the "best" is T = 1 itself: the comparison against the model as
    trained says so (and the best constant's own, the same comparison, is not said again)."""
    if name == "plain" and _only_t1(summary) and "best_constant" in summary.held_out.gains:
        return (f"{AGAINST[name]}, which is also the best constant T here: T = 1 was the only constant temperature "
                "compared (no grid of temperatures to choose from)")
    if name == "best_constant" and _only_t1(summary):
        return "T = 1, the only constant temperature compared here (no grid of temperatures to choose from)"
    if name == "best_constant" and summary.compared_temperatures:
        grid = ", ".join(f"{t:g}" for t in summary.compared_temperatures)
        return f"{AGAINST[name]} among T = {grid}"
    return AGAINST[name]


def _scale(summary: FitSummary, name: str, entry: Gain) -> str:
    """Each gain on the scale of what it contains: against a reference on the model's own positions, the fit's
    gain is mostly the interpolation's (plain minus the temperature's own share, recipe_at_1); against the
    recipe as published, its gain next to the recipe's own (plain minus it)."""
    gains = summary.held_out.gains
    plain, own = gains.get("plain"), gains.get("recipe_at_1")
    if summary.rope is None or plain is None:
        return ""
    if name in ("best_constant", "best_schedule") and own is not None:
        return (f"; most of it is the interpolation's: against T = 1 on the model's own positions the fit saves "
                f"{plain.saved:+.3f}, of which {own.saved:+.3f} is its temperature on top of the interpolation")
    if name == "recipe":
        recipe = plain.saved - entry.saved
        share = f", {entry.saved / recipe:.1%} of it" if recipe > 0 else ""
        return f", next to the recipe's own {recipe:+.3f} against T = 1{share}"
    return ""


def fit_point_label(summary: FitSummary) -> str:
    """A fit's point on the chart against YaRN's law: 'constant T on yarn-rope (s=2), 16,384 tokens'."""
    return f"{fit_name(summary)}, {summary.settings.max_tokens:,} tokens"


FIT_FAMILIES = {  # what each family of experiments.fit.families fits (fit --family)
    "constant": "one temperature T in every layer and at every position (logit multiplier 1 / T)",
    "logn": "T(p) = 1 + a ln(max(1, (p + 1) / L)) on the query at position p: 1 up to the trained length L, softer "
            "(a > 0) or sharper (a < 0) past it"}
OPTIMIZERS = {Optimizer.BOUNDED_BRENT: "scipy.optimize.minimize_scalar(method='bounded'): Brent's method on the "
                                       "pooled next-token NLL of the training documents' positions past the trained "
                                       "length"}


def fit_methods(summary: FitSummary) -> dict[str, str]:
    """How a fit was made, from the facts its file stores: what its family fits, how each fold searched, how the
    value's interval over documents (one curve per fold's training document) and the held-out gains were made."""
    bootstrap, curves = summary.bootstrap, sum(len(fold.training) for fold in summary.folds)
    interval = {IntervalMethod.CURVE_BOOTSTRAP: (
        f"{bootstrap.confidence:.0%} percentile bootstrap over the {curves} documents ({bootstrap.resamples} "
        "resamples) of the minimum of their summed NLL curves past the trained length, each document's curve a "
        f"quadratic through its fold's evaluations within {bootstrap.window:g} of the fold's best")}
    held_out = {HeldOutMethod.CROSS_FIT: (
        "each document is scored with the value fitted on the other folds' documents; gains pooled over its "
        f"positions past the trained length; {bootstrap.confidence:.0%} bootstrap over the held-out documents "
        f"({bootstrap.resamples} resamples), saved = reference NLL minus fitted NLL")}
    return {"family": FIT_FAMILIES.get(summary.family, f"the {summary.family} family"),
            "optimizer": OPTIMIZERS[summary.optimizer], "interval": interval[summary.interval_method],
            "held_out": held_out[summary.held_out.method]}


def fit_reused(reused: Reused) -> str:
    """What a fit read from a tune's rows instead of computing it (fit --compare-from)."""
    return (f"{reused.source}: {reused.reused} of the {reused.comparisons} comparisons read from the tune's rows, "
            f"checked against this fit's own T = 1 pass (largest difference {reused.largest:.1e} nats per token past "
            "the trained length)")


def fit_table(summary: FitSummary) -> str:
    """A few lines for the terminal: the fitted value, its range, and the held-out gains."""
    knob, multiplier = summary.knob, summary.multiplier
    on = f" on {summary.rope.label}" if summary.rope else ""
    lines = [f"{summary.model}: {summary.family} family{on}, {summary.evaluations} evaluations over "
             f"{len(summary.folds)} folds; {knob} = {summary.parameter:.4f} ({CONFIDENCE:.0%} interval over "
             f"documents {summary.interval[0]:.4f}-{summary.interval[1]:.4f})"
             + (f"; at the edge of the searched interval {list(summary.bounds)}: the minimum may lie beyond it"
                if summary.at_bound else "")]
    if multiplier is not None and multiplier.yarn_law is not None:
        lines.append(f"logit multiplier {multiplier.fitted:.4f} against YaRN's law (0.1 ln s + 1)^2 = "
                     f"{multiplier.yarn_law:.4f} at s = {multiplier.scale:g}")
    if summary.compared_from is not None:
        lines.append(f"comparisons from {fit_reused(summary.compared_from)}")
    for name, entry in summary.held_out.gains.items():
        low, high = entry.interval
        lines.append(f"  held out, NLL saved past the trained length vs {name}: {entry.saved:+.4f} "
                     f"nats per token ({low:+.4f} to {high:+.4f})")
    return "\n".join(lines)

