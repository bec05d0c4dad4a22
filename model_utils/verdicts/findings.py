"""Verdicts on one report, in plain words: what each temperature or schedule did against T = 1. Every verdict names
the direction the multiplier m = 1 / T really went: "over-softened" only where m < 1 on every measured query,
"over-sharpened" only where m > 1; where m crosses 1 along the text a worse loss is a neutral "the loss rose"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model_utils.core.report import Report
from model_utils.core.statistics import MASS_PARTS

NEAR_UNIFORM = 0.9  # a layer is near uniform above this mean normalized entropy of its heads
NEAR_ONE_HOT = 0.1  # and near one-hot (all weight on one key) below this
LOSS_FACTOR = 1.5  # a loss is "far above" the reference's beyond this many times it
ANSWER_FLOOR = 0.1  # the answer "falls" from at least this probability at the reference to under half of it


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
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
    return Direction(softer_share=float(np.mean(multipliers < 1.0)), sharper_share=float(np.mean(multipliers > 1.0)),
                     smallest=float(multipliers.min()), largest=float(multipliers.max()))


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
