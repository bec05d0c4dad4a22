"""The context-length verdict of a sweep document (model_utils/experiments/sweep.py), in plain words."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

UNCHANGED = 0.005  # an attention mass or normalized entropy that moved less than this is called unchanged


@dataclass(frozen=True, kw_only=True)
class ContextVerdict:
    """What a sweep says about the text past the model's trained length, all computed from the sweep."""

    trained_length: int
    before: tuple[int, int]  # positions compared against: the second half of the trained context, [start, stop)
    past: tuple[int, int]  # positions past the trained length
    nll_before: float  # mean NLL at T = 1 over the buckets in `before` and in `past`
    nll_past: float
    attention_before: dict[str, float]  # T = 1, mean over layers and heads and the buckets
    attention_past: dict[str, float]
    best: list[dict]  # the sweep's best-temperature entries of the buckets past the trained length
    schedules: list[dict]  # label, saved (mean NLL against T = 1 past the trained length), m_past, m_trained_context
    grid: list[float]  # the constant temperatures tried, ascending

    @property
    def attention_change(self) -> str:
        """'spreads', 'collapses onto recent tokens', or 'mixed'."""
        entropy, distant, recent = (self.attention_past[key] - self.attention_before[key]
                                    for key in ("normalized_entropy", "distant_mass", "recent_mass"))
        if entropy > UNCHANGED and distant > UNCHANGED:
            return "spreads"
        if entropy < -UNCHANGED and recent > UNCHANGED:
            return "collapses onto recent tokens"
        return "mixed"

    @property
    def best_direction(self) -> str:
        """'above 1 (softer)', 'below 1 (sharper)', 'T = 1', or 'mixed' over the buckets past the trained length."""
        temperatures = [entry["temperature"] for entry in self.best]
        if all(t > 1 for t in temperatures):
            return "above 1 (softer)"
        if all(t < 1 for t in temperatures):
            return "below 1 (sharper)"
        return "T = 1" if all(t == 1 for t in temperatures) else "mixed"

    def sentences(self) -> list[str]:
        before, past = self.attention_before, self.attention_past
        span = f"positions {self.past[0]:,}-{self.past[1] - 1:,}"
        said = [f"Past the trained length ({self.trained_length:,} tokens) the loss at T = 1 goes from "
                f"{self.nll_before:.2f} nats per token (positions {self.before[0]:,}-{self.before[1] - 1:,}) to "
                f"{self.nll_past:.2f} ({span})."]
        moves = ", ".join(f"{label} {before[key]:.3f} -> {past[key]:.3f}" for key, label in
                          (("normalized_entropy", "normalized entropy"), ("distant_mass", "distant mass"),
                           ("recent_mass", "recent mass"), ("sink_mass", "sink mass")))
        head = {"spreads": "Attention at T = 1 spreads out there",
                "collapses onto recent tokens": "Attention at T = 1 collapses onto recent tokens there",
                "mixed": "Attention at T = 1 neither clearly spreads nor collapses there"}[self.attention_change]
        said.append(f"{head}: {moves} (means over layers and heads).")
        said += self._best_sentences()
        if self.schedules:
            ranked = sorted(self.schedules, key=lambda entry: -entry["saved"])
            said.append("Published schedules past the trained length, NLL saved against T = 1 (m is the logit "
                        "multiplier there; m > 1 sharpens): " + "; ".join(_schedule_text(e) for e in ranked) + ".")
        return said

    def _best_sentences(self) -> list[str]:
        if self.best_direction == "T = 1":
            return ["No temperature tried does better than T = 1 past the trained length."]
        runs = _runs(self.best)
        where = ", ".join(f"{t:g} for positions {start:,}-{stop - 1:,}" for t, start, stop in runs)
        above = sum(entry["temperature"] > 1 for entry in self.best)
        below = sum(entry["temperature"] < 1 for entry in self.best)
        top = max(self.best, key=lambda entry: entry["saved"])
        said = [f"Past the trained length the best of the temperatures tried is T = {where}: above 1 (softer) in "
                f"{above} of {len(self.best)} buckets, below 1 (sharper) in {below}. Against T = 1 it saves "
                f"{np.mean([e['saved'] for e in self.best]):.3f} nats per token on average there, and most, "
                f"{top['saved']:.3f}, for positions {top['bucket'][0]:,}-{top['bucket'][1] - 1:,} (95% interval "
                f"{top['saved_interval'][0]:.2f}-{top['saved_interval'][1]:.2f})."]
        unsure = [entry for entry in self.best if entry["temperature"] != 1
                  and entry["temperature_interval"][0] <= 1 <= entry["temperature_interval"][1]]
        if unsure:
            said.append(f"In {len(unsure)} of those buckets the 95% interval of the best temperature includes 1: "
                        "there T = 1 is not ruled out.")
        for edge, word in ((self.grid[-1], "largest"), (self.grid[0], "smallest")):
            if edge != 1 and any(entry["temperature"] == edge for entry in self.best):
                said.append(f"T = {edge:g} is the {word} temperature tried and is best in some buckets: the best "
                            f"may lie {'above' if word == 'largest' else 'below'} it.")
        return said


def _runs(best: list[dict]) -> list[tuple[float, int, int]]:
    """Consecutive buckets with the same best temperature, as (T, first position, stop)."""
    runs: list[list] = []
    for entry in best:
        start, stop = entry["bucket"]
        if runs and runs[-1][0] == entry["temperature"] and runs[-1][2] == start:
            runs[-1][2] = stop
        else:
            runs.append([entry["temperature"], start, stop])
    return [tuple(run) for run in runs]


def _schedule_text(entry: dict) -> str:
    text = f"{entry['label']} {entry['saved']:+.3f}"
    low, high = entry.get("m_past") or (None, None)
    if low is None:
        return text
    text += f" (m {low:.3g}" + (f"-{high:.3g}" if high != low else "")
    inside = entry.get("m_trained_context")
    if inside and inside[0] < 1:
        text += f"; softer before the trained length, m down to {inside[0]:.3g}"
    return text + ")"


def _bucket_mean(values: list, chosen: list[int]) -> float:
    return float(np.mean([values[i] for i in chosen]))


def context_verdict(document: dict) -> ContextVerdict | None:
    """The verdict of a sweep document, or None when the text does not reach past the trained length with a bucket
    that has a loss (the last token alone predicts nothing), or no bucket lies wholly before it."""
    trained = document["trained_length"]
    buckets = document["buckets"]
    reference = next(r for r in document["results"] if r["temperature"] == 1.0)
    scored = [i for i, nll in enumerate(reference["nll"]) if nll is not None]  # the last token alone has no loss
    past = [i for i in scored if buckets[i][0] >= trained]
    inside = [i for i in scored if buckets[i][1] <= trained]
    before = [i for i in inside if buckets[i][0] >= trained // 2] or inside
    if not past or not before:
        return None

    def attention(chosen: list[int]) -> dict[str, float]:
        return {name: float(np.mean([np.mean(reference["heads"][name][i]) for i in chosen]))
                for name in ("normalized_entropy", "distant_mass", "recent_mass", "sink_mass")}

    past_starts = {buckets[i][0] for i in past}
    best = [entry for entry in document["best"] if entry["bucket"][0] in past_starts]
    nll_one_past = _bucket_mean(reference["nll"], past)
    schedules = [{"label": r["label"], "saved": nll_one_past - _bucket_mean(r["nll"], past),
                  "m_past": r.get("multipliers", {}).get("past"),
                  "m_trained_context": r.get("multipliers", {}).get("trained_context")}
                 for r in document["results"] if r["schedule"] is not None]
    grid = sorted(r["temperature"] for r in document["results"] if r["temperature"] is not None)
    return ContextVerdict(trained_length=trained, before=(buckets[before[0]][0], buckets[before[-1]][1]),
                          past=(buckets[past[0]][0], buckets[past[-1]][1]),
                          nll_before=_bucket_mean(reference["nll"], before), nll_past=nll_one_past,
                          attention_before=attention(before), attention_past=attention(past), best=best,
                          schedules=schedules, grid=grid)
