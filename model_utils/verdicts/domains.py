"""The corpus summary's per-domain savings past the trained length (experiments/tune/domains.py computes them):
whether the corpus's answer holds on each kind of text, as the range over domains of what one view saves next to
the best constant temperature's per domain. verdicts/words says it."""

from __future__ import annotations

from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import Interval
from model_utils.core.views import View


def domain_ranges(summary: TuneSummary, view: View) -> tuple[Interval, Interval, int] | None:
    """(the range over domains of what `view` saves, the range of the best constant temperature's saving per domain
    (in-sample: chosen per domain, which flatters the temperature; at least 0, T = 1's own), the number of domains);
    None without domains or without that view."""
    by_domain = [{lever.view: lever.saved for lever in entry.levers} for entry in summary.domains]
    constants = [result.view for result in summary.results if result.view.is_plain]
    if not by_domain or any(view not in savings for savings in by_domain):
        return None
    ours = [savings[view] for savings in by_domain]
    best = [max([0.0, *(savings[plain] for plain in constants if plain in savings)]) for savings in by_domain]
    return (min(ours), max(ours)), (min(best), max(best)), len(by_domain)
