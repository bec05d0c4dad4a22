"""The per-domain ranges (verdicts/domains.py) and rows (words.domain_rows), checked against the committed corpus
summary's JSON."""

import json
from pathlib import Path

import pytest

from model_utils.core.records.tune import TuneSummary
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.verdicts.domains import domain_ranges
from model_utils.verdicts.words import domain_rows

SUMMARY = Path(__file__).resolve().parents[2] / "assets" / "tune" / "bundled-builtin" / "summary.json"
RECIPE = View(1.0, Rope("yarn-rope", 2.0))


def test_the_ranges_over_domains_are_the_jsons():
    data = json.loads(SUMMARY.read_text())
    ours = [next(lever["saved"] for lever in domain["levers"] if lever["label"] == RECIPE.label)
            for domain in data["domains"]]
    constants = [[lever["saved"] for lever in domain["levers"] if lever["label"].startswith("T=")]
                 for domain in data["domains"]]
    best = [max(0.0, *values) for values in constants]
    found, chosen, domains = domain_ranges(TuneSummary.from_dict(data), RECIPE)
    assert found == pytest.approx((min(ours), max(ours))) and chosen == pytest.approx((min(best), max(best)))
    assert domains == len(data["domains"])


def test_no_ranges_for_a_view_that_did_not_run_and_one_row_per_domain():
    summary = TuneSummary.from_dict(json.loads(SUMMARY.read_text()))
    assert domain_ranges(summary, View(1.0, Rope("linear", 2.0))) is None
    rows = domain_rows(summary)
    assert [row["domain"] for row in rows] == [entry.domain for entry in summary.domains]
    for row, entry in zip(rows, summary.domains, strict=True):
        saved = next(lever.saved for lever in entry.levers if lever.view == RECIPE)
        assert row[RECIPE.label].startswith(f"{saved:+.3f} (")
