"""The verdict of a fit (fit.json's FitSummary record, model_utils/experiments/fit/summary.py): the fitted value and
its interval over documents, the logit multiplier set against YaRN's published law, and the held-out gains in words,
each judged by its bootstrap interval (a gain whose interval holds 0 is "no measurable difference"). Numpy-free:
plain arithmetic."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from model_utils.core.records.fit import FitSummary, Gain, Multiplier
from model_utils.core.records.tune import TuneSummary
from model_utils.verdicts import NO_VALUE
from model_utils.verdicts.context import ContextVerdict
from model_utils.verdicts.decomposition import Lever, family_of, group_of

# what each held-out gain is measured against, as the sentences name it
REFERENCES = {
    "plain": "the model as trained (T = 1, its own positions)",
    "recipe_at_1": "the recipe at T = 1 (the temperature's own share)",
    "recipe": "the recipe as published (with its own temperature)",
    "best_constant": "the best constant T on the model's own positions, chosen on the training documents",
    "best_schedule": "the best published schedule, chosen on the training documents",
}
COLUMNS = ("fit", "tokens", "fitted", "logit multiplier", "YaRN's law", "saved vs T = 1", "vs recipe at T = 1",
           "vs recipe as published", "documents")


def _signed(entry: Gain | None) -> str:
    if entry is None:
        return NO_VALUE
    low, high = entry.interval
    return f"{entry.saved:+.3f} ({low:+.3f} to {high:+.3f})"


def _judged(entry: Gain) -> str:
    """'better', 'worse' or 'no measurable difference', from where the interval lies against 0."""
    low, high = entry.interval
    if low > 0:
        return "better"
    if high < 0:
        return "worse"
    return "no measurable difference"


@dataclass(frozen=True)
class FitVerdict:
    summary: FitSummary

    @property
    def name(self) -> str:
        s = self.summary
        on = "the model's own positions" if s.rope is None else s.rope.label
        return f"{s.family} {s.knob} on {on}"

    @property
    def law(self) -> Multiplier | None:
        """The fitted logit multiplier where it is set against YaRN's law (a constant T on yarn-rope), else None."""
        multiplier = self.summary.multiplier
        return multiplier if multiplier is not None and multiplier.yarn_law is not None else None

    def row(self) -> dict[str, str]:
        """One line of the fit table: what was fitted, where, and the held-out gains with their intervals."""
        s, gains = self.summary, self.summary.held_out.gains
        low, high = s.interval
        multiplier = s.multiplier
        fitted = f"{s.knob} = {s.parameter:.3f} ({low:.3f}-{high:.3f})"
        fitted += " at a bound" if s.at_bound else ""
        law = self.law
        return {
            "fit": self.name, "tokens": f"{s.settings.max_tokens:,}", "fitted": fitted,
            "logit multiplier": (f"{multiplier.fitted:.3f} ({multiplier.interval[0]:.3f}-"
                                 f"{multiplier.interval[1]:.3f})") if multiplier else NO_VALUE,
            "YaRN's law": NO_VALUE if law is None else f"{law.yarn_law:.3f} at s = {law.scale:g}",
            "saved vs T = 1": _signed(gains.get("plain")),
            "vs recipe at T = 1": _signed(gains.get("recipe_at_1")),
            "vs recipe as published": _signed(gains.get("recipe")),
            "documents": f"{len(s.documents)} in {len(s.folds)} folds",
        }

    def headline(self) -> str:
        s, law = self.summary, self.law
        low, high = s.interval
        resolved = "" if high - low > 2 * s.tolerance else (
            f"; the search stops at a tolerance of {s.tolerance:g}, so values are not told apart finer than that")
        text = (f"Fitted on {len(s.documents)} documents, {self.name}: {s.knob} = {s.parameter:.3f} "
                f"({low:.3f}-{high:.3f} over documents{resolved})")
        if law is not None:
            text += (f", a logit multiplier of {law.fitted:.3f} against {law.yarn_law:.3f} from "
                     f"YaRN's law at s = {law.scale:g}")
        return text + "."

    def sentences(self) -> list[str]:
        s, gains = self.summary, self.summary.held_out.gains
        said = [self.headline()]
        if s.at_bound:
            said.append(f"A fold's fit sits at the edge of the searched interval {list(s.bounds)}: the minimum may "
                        "lie beyond it.")
        if (multiplier := self.law) is not None:
            low, high = multiplier.interval
            law = multiplier.yarn_law
            if low <= law <= high:
                where = "lies within the fitted multiplier's interval over documents"
            else:
                where = ("is below the fitted multiplier's interval over documents (the fit sharpens more than "
                         "the law)" if law < low else "is above the fitted multiplier's interval over documents "
                         "(the law sharpens more than the fit)")
            said.append(f"YaRN's law, (0.1 ln s + 1)^2 = {law:.3f}, {where}.")
        for name, against in REFERENCES.items():
            entry = gains.get(name)
            if entry is None:
                continue
            judged = _judged(entry)
            low, high = entry.interval
            verdict = {"better": f"the fit beats {against}", "worse": f"the fit loses to {against}",
                       "no measurable difference": f"the fit and {against} do not differ measurably"}[judged]
            said.append(f"On the held-out documents, past the trained length, {verdict}: "
                        f"{entry.saved:+.3f} nats per token ({low:+.3f} to {high:+.3f})"
                        + self._scale(name, entry) + ".")
        said.append(f"In context (before the trained length) the fit saves "
                    f"{-s.held_out.in_context_change:+.4f} nats per token against T = 1 (negative: it costs there).")
        said.append(f"Scope: one model, {len(s.documents)} documents of one corpus; not a law.")
        return said


    def _scale(self, name: str, entry: Gain) -> str:
        """Each gain on the scale of what it contains: against a reference on the model's own positions, the fit's
        gain is mostly the interpolation's (plain minus the temperature's own share, recipe_at_1); against the
        recipe as published, its gain next to the recipe's own (plain minus it)."""
        gains = self.summary.held_out.gains
        plain, own = gains.get("plain"), gains.get("recipe_at_1")
        if self.summary.rope is None or plain is None:
            return ""
        if name in ("best_constant", "best_schedule") and own is not None:
            return (f", of which the interpolation alone brings about {plain.saved - own.saved:+.3f} (the fit against "
                    f"T = 1 minus the temperature's own share, {own.saved:+.3f})")
        if name == "recipe":
            recipe = plain.saved - entry.saved
            share = f", {entry.saved / recipe:.1%} of it" if recipe > 0 else ""
            return f", next to the recipe's own {recipe:+.3f} against T = 1{share}"
        return ""


def fit_verdicts(summaries: list[FitSummary]) -> list[FitVerdict]:
    """The verdicts of several fits, in the order: recipes first (by their label), then the model's own positions;
    each by its length."""
    def order(summary: FitSummary) -> tuple:
        return (summary.rope is None, "" if summary.rope is None else summary.rope.label, summary.settings.max_tokens)

    return [FitVerdict(summary) for summary in sorted(summaries, key=order)]


def with_fits(verdict: ContextVerdict, summary: TuneSummary, fits: Sequence[FitSummary]) -> ContextVerdict:
    """The corpus verdict with one more lever per fit made on exactly its documents at its length: the fitted
    temperature on top of the fit's recipe, held out over those documents (its gain against the recipe at T = 1),
    on the scale of the corpus's loss rise. Fits on other documents, at another length or without a recipe add none."""
    decomposition = verdict.decomposition
    documents = sorted(entry.sha256 for entry in summary.corpus.listed)
    added = []
    for fit in fits:
        own = fit.held_out.gains.get("recipe_at_1")
        if (own is None or fit.rope is None or fit.settings.max_tokens != summary.settings.max_tokens
                or sorted(entry.sha256 for entry in fit.documents) != documents):
            continue
        low, high = fit.interval
        added.append(Lever(
            label=f"fitted {fit.knob} = {fit.parameter:.3f} ({low:.3f}-{high:.3f}) on {fit.rope.label} (held out)",
            kind="on_top", what=f"a {fit.family} {fit.knob} fitted on the other fold's documents (`make fit`), on top "
                                "of the recipe at T = 1", saved=own.saved, interval=list(own.interval),
            share_of_rise=None if decomposition.rise <= 0 else own.saved / decomposition.rise,
            against=f"{fit.rope.label} + T=1", family=family_of(fit.rope)))
    if not added:
        return verdict
    levers = sorted([*decomposition.levers, *added], key=group_of)
    return replace(verdict, decomposition=replace(decomposition, levers=levers))
