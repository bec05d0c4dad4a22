"""One report's findings in words (verdicts/findings.py's Finding): which way each temperature or schedule moves
attention against T = 1 (the logit multiplier m, or for the pages the temperature T = 1 / m it amounts to), the
problems it shows (near-uniform or one-hot layers, a loss that rose, an answer that fell), and the mass it moves."""

from __future__ import annotations

from collections.abc import Sequence

from model_utils.verdicts.findings import NEAR_ONE_HOT, NEAR_UNIFORM, Direction, Finding, Outcome, Way

__all__ = ["direction_words", "finding_sentence", "mass_shift_lines", "page_finding_sentence", "problems",
           "temperature_words"]


def direction_words(direction: Direction) -> str:
    """Which way a result moved the logit multiplier m against T = 1, in words."""
    way = direction.kind
    if way is Way.UNCHANGED:
        return "leaves the logits unchanged (m = 1)"
    verb = "softens" if way is Way.SOFTER else "sharpens"
    if direction.smallest == direction.largest:
        return f"{verb} attention (m = {direction.smallest:.3g} {'<' if way is Way.SOFTER else '>'} 1)"
    if way in (Way.SOFTER, Way.SHARPER):
        return f"{verb} attention (m from {direction.smallest:.3g} to {direction.largest:.3g})"
    return (f"is softer than T = 1 on {direction.softer_share:.0%} of the measured queries and sharper on "
            f"{direction.sharper_share:.0%} (m from {direction.smallest:.3g} to {direction.largest:.3g})")


def problems(finding: Finding, reference: Finding, answer_text: str = "") -> list[str]:
    """The plain-language reasons behind a finding (empty when there is nothing to flag)."""
    said = []
    if finding.near_uniform_layers and finding.direction.kind is not Way.SHARPER:
        said.append(f"near-uniform attention (normalized entropy > {NEAR_UNIFORM}) in "
                    f"{finding.near_uniform_layers} of {finding.n_layers} layers")
    if finding.near_one_hot_layers and finding.direction.kind is not Way.SOFTER:
        said.append(f"attention on a single key (normalized entropy < {NEAR_ONE_HOT}) in "
                    f"{finding.near_one_hot_layers} of {finding.n_layers} layers")
    if finding.loss_rose:
        said.append(f"loss {finding.loss:.2f}, {finding.loss_ratio:.1f}x that of {reference.label}")
    if finding.answer_dropped:
        said.append(f"the chance of the whole answer {answer_text!r} falls from {reference.answer_probability:.2f} to "
                    f"{finding.answer_probability:.2f}")
    return said


def finding_sentence(finding: Finding, reference: Finding, answer_text: str = "",
                     head: str | None = None) -> tuple[str, str] | None:
    """(level, text) for a page or the command line: level 'warning' for a verdict in a direction, 'info' for
    problems without one; None when there is nothing to say. `head` replaces the label and its direction words."""
    reasons = problems(finding, reference, answer_text)
    outcome = finding.verdict
    if outcome is None and not reasons:
        return None
    head = head or f"{finding.label} {direction_words(finding.direction)}"
    if outcome in (Outcome.OVER_SOFTENED, Outcome.OVER_SHARPENED):
        return "warning", f"{head} and is {outcome.value}: " + "; ".join(reasons) + "."
    if outcome is Outcome.LOSS_ROSE:
        return "warning", f"{head}; the loss rose: " + "; ".join(reasons) + "."
    return "info", f"{head}: " + "; ".join(reasons) + "."


def mass_shift_lines(found: Sequence[Finding], base: int) -> list[str]:
    """'T=2 vs T=1: sink -0.158, recent -0.109, distant +0.266' for every result but the reference."""
    reference = found[base].label
    return [f"{f.label} vs {reference}: sink {f.mass_shift['sink_mass']:+.3f}, recent "
            f"{f.mass_shift['recent_mass']:+.3f}, distant {f.mass_shift['distant_mass']:+.3f}"
            for i, f in enumerate(found) if i != base]


def temperature_words(direction: Direction, label: str = "") -> str:
    """Which way a result moved attention against T = 1, in temperatures: m is said as T = 1 / m. The value is left
    out where `label` already says it (a constant temperature labelled 'T=2')."""
    way = direction.kind
    if way is Way.UNCHANGED:
        return "leaves attention as at T = 1"
    low, high = 1 / direction.largest, 1 / direction.smallest  # the largest m is the smallest T
    if way is Way.MIXED:
        softer, sharper = direction.softer_share, direction.sharper_share
        shares = (f"softer than T = 1 on {softer:.0%} of the measured queries and sharper on {sharper:.0%}"
                  if softer and sharper else
                  f"{'softer' if softer else 'sharper'} than T = 1 on {softer or sharper:.0%} of the measured queries")
        return f"is {shares} (T from {low:.3g} to {high:.3g})"
    verb = "softens" if way is Way.SOFTER else "sharpens"
    if low != high:
        return f"{verb} attention (T from {low:.3g} to {high:.3g})"
    if label == f"T={low:g}":
        return f"{verb} attention"
    return f"{verb} attention (T = {low:.3g} {'>' if way is Way.SOFTER else '<'} 1)"


def page_finding_sentence(finding: Finding, reference: Finding, answer_text: str = "") -> tuple[str, str] | None:
    """finding_sentence in temperatures only, for a page (a schedule's m said as T = 1 / m)."""
    return finding_sentence(finding, reference, answer_text,
                            head=f"{finding.label} {temperature_words(finding.direction, finding.label)}")



