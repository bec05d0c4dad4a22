"""The corpus summary's per-domain savings past the trained length (experiments/tune/domains.py computes them):
whether the corpus's answer holds on each kind of text, as the range over domains of what one view saves next to
the best constant temperature's per domain. verdicts/words says it."""

from __future__ import annotations

from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import Interval


def domain_ranges(summary: TuneSummary, recipe: str) -> tuple[Interval, Interval, int] | None:
    """(the range over domains of what `recipe` (a view's label) saves, the range of the best constant temperature's
    saving per domain (in-sample: chosen per domain, which flatters the temperature; at least 0, T = 1's own), the
    number of domains); None without domains or without that view."""
    by_domain = [{lever.label: lever.saved for lever in entry.levers} for entry in summary.domains]
    constants = [result.label for result in summary.results if result.rope is None and result.schedule is None]
    if not by_domain or any(recipe not in savings for savings in by_domain):
        return None
    ours = [savings[recipe] for savings in by_domain]
    best = [max([0.0, *(savings[label] for label in constants if label in savings)]) for savings in by_domain]
    return (min(ours), max(ours)), (min(best), max(best)), len(by_domain)
