"""Verdicts in plain words, computed from a report's numbers: the only place the explorer decides what a result
means. Pages and the command line print these sentences; they never judge a number themselves.

Every verdict names its direction, and only the direction the multiplier m = 1 / T really went: "over-softened"
only where m < 1 on every measured query (T > 1, or a schedule that softens there), "over-sharpened" only where
m > 1 on every one; where m is 1, or crosses 1 along the text (log-n below its base), a worse loss is reported as
a neutral "the loss rose". Thresholds:
- a layer is near uniform when its heads' mean normalized entropy exceeds NEAR_UNIFORM, and near one-hot (all
  weight on one key) below NEAR_ONE_HOT;
- a loss is "far above" the reference's when it exceeds LOSS_FACTOR times it;
- the answer "falls" when its first token had at least ANSWER_FLOOR probability at the reference and less than
  half of that here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model_utils.analysis import Report
from model_utils.metrics import MASS_PARTS

NEAR_UNIFORM = 0.9
NEAR_ONE_HOT = 0.1
LOSS_FACTOR = 1.5
ANSWER_FLOOR = 0.1


@dataclass(frozen=True)
class Direction:
    """Which way a result moves the logit multiplier m over the measured queries, against T = 1 (m = 1)."""

    softer_share: float  # share of the measured queries with m < 1
    sharper_share: float  # share with m > 1
    smallest: float  # smallest and largest m over those queries
    largest: float

    @property
    def kind(self) -> str:
        """'softer', 'sharper', 'unchanged' (m = 1 throughout) or 'mixed' (m crosses 1 along the text)."""
        if self.softer_share == 1.0:
            return "softer"
        if self.sharper_share == 1.0:
            return "sharper"
        return "unchanged" if self.softer_share == self.sharper_share == 0.0 else "mixed"

    def describe(self) -> str:
        if self.kind == "unchanged":
            return "leaves the logits unchanged (m = 1)"
        if self.smallest == self.largest:
            verb = "softens" if self.kind == "softer" else "sharpens"
            return f"{verb} attention (m = {self.smallest:.3g} {'<' if self.kind == 'softer' else '>'} 1)"
        if self.kind in ("softer", "sharper"):
            verb = "softens" if self.kind == "softer" else "sharpens"
            return f"{verb} attention (m from {self.smallest:.3g} to {self.largest:.3g})"
        return (f"is softer than T = 1 on {self.softer_share:.0%} of the measured queries and sharper on "
                f"{self.sharper_share:.0%} (m from {self.smallest:.3g} to {self.largest:.3g})")


@dataclass(frozen=True)
class Finding:
    """What one result did, against the reference result (T = 1, or the temperature closest to it)."""

    label: str
    direction: Direction
    n_layers: int
    near_uniform_layers: int
    near_one_hot_layers: int
    loss: float
    loss_ratio: float | None  # loss / reference loss (None when this is the reference)
    mass_shift: dict[str, float]  # mean over layers and heads, minus the reference's
    answer_probability: float | None
    answer_dropped: bool

    @property
    def loss_rose(self) -> bool:
        return (self.loss_ratio or 0.0) > LOSS_FACTOR

    @property
    def verdict(self) -> str | None:
        """'over-softened', 'over-sharpened', 'the loss rose', or None when nothing is wrong."""
        kind = self.direction.kind
        if kind == "softer" and (self.loss_rose or self.near_uniform_layers > self.n_layers // 2):
            return "over-softened"
        if kind == "sharper" and (self.loss_rose or self.near_one_hot_layers > self.n_layers // 2):
            return "over-sharpened"
        return "the loss rose" if self.loss_rose else None


def direction_of(report: Report, view: int) -> Direction:
    multipliers = report.multipliers[view, report.q_start :]
    return Direction(float(np.mean(multipliers < 1.0)), float(np.mean(multipliers > 1.0)),
                     float(multipliers.min()), float(multipliers.max()))


def findings(report: Report, answer_token_id: int | None = None) -> tuple[int, list[Finding]]:
    """(index of the reference result, one Finding per result). With `answer_token_id`, the probability of that
    token after the last position is followed too."""
    base = report.reference_index
    reference = report.results[base]
    base_masses = reference.mean_masses()
    answers = None if answer_token_id is None else report.answer_probabilities(answer_token_id)
    found = []
    for index, result in enumerate(report.results):
        per_layer = result.layer_mean("normalized_entropy")
        masses = result.mean_masses()
        answer = None if answers is None else answers[index]
        dropped = answers is not None and answers[base] >= ANSWER_FLOOR and answer < answers[base] / 2
        found.append(Finding(
            label=result.label,
            direction=direction_of(report, index),
            n_layers=len(per_layer),
            near_uniform_layers=int((per_layer > NEAR_UNIFORM).sum()),
            near_one_hot_layers=int((per_layer < NEAR_ONE_HOT).sum()),
            loss=result.loss,
            loss_ratio=None if index == base else result.loss / reference.loss,
            mass_shift={part: masses[part] - base_masses[part] for part in MASS_PARTS},
            answer_probability=answer,
            answer_dropped=dropped,
        ))
    return base, found


def problems(finding: Finding, reference: Finding, answer_text: str = "") -> list[str]:
    """The plain-language reasons behind a finding (empty when there is nothing to flag)."""
    said = []
    if finding.near_uniform_layers and finding.direction.kind != "sharper":
        said.append(f"near-uniform attention (normalized entropy > {NEAR_UNIFORM}) in "
                    f"{finding.near_uniform_layers} of {finding.n_layers} layers")
    if finding.near_one_hot_layers and finding.direction.kind != "softer":
        said.append(f"attention on a single key (normalized entropy < {NEAR_ONE_HOT}) in "
                    f"{finding.near_one_hot_layers} of {finding.n_layers} layers")
    if finding.loss_rose:
        said.append(f"loss {finding.loss:.2f}, {finding.loss_ratio:.1f}x that of {reference.label}")
    if finding.answer_dropped:
        said.append(f"the answer's first token {answer_text!r} falls from {reference.answer_probability:.2f} to "
                    f"{finding.answer_probability:.2f}")
    return said


def sentence(finding: Finding, reference: Finding, answer_text: str = "") -> tuple[str, str] | None:
    """(level, text) for a page or the command line: level 'warning' for a verdict in a direction, 'info' for
    problems without one; None when there is nothing to say."""
    reasons = problems(finding, reference, answer_text)
    verdict = finding.verdict
    if verdict is None and not reasons:
        return None
    head = f"{finding.label} {finding.direction.describe()}"
    if verdict in ("over-softened", "over-sharpened"):
        return "warning", f"{head} and is {verdict}: " + "; ".join(reasons) + "."
    if verdict == "the loss rose":
        return "warning", f"{head}; the loss rose: " + "; ".join(reasons) + "."
    return "info", f"{head}: " + "; ".join(reasons) + "."


def mass_shift_lines(found: list[Finding], base: int) -> list[str]:
    """'T=2 vs T=1: sink -0.158, recent -0.109, distant +0.266' for every result but the reference."""
    reference = found[base].label
    return [f"{f.label} vs {reference}: sink {f.mass_shift['sink_mass']:+.3f}, recent "
            f"{f.mass_shift['recent_mass']:+.3f}, distant {f.mass_shift['distant_mass']:+.3f}"
            for i, f in enumerate(found) if i != base]


# --- the context-length verdict: from a sweep document (model_utils/sweep.py) -----------------------------------

UNCHANGED = 0.005  # an attention mass or normalized entropy that moved less than this is called unchanged


@dataclass(frozen=True)
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
    return ContextVerdict(trained, (buckets[before[0]][0], buckets[before[-1]][1]),
                          (buckets[past[0]][0], buckets[past[-1]][1]), _bucket_mean(reference["nll"], before),
                          nll_one_past, attention(before), attention(past), best, schedules, grid)
