"""The per-domain rows and sentence (verdicts/domains.py), checked against the committed corpus summary's JSON."""

import json
from pathlib import Path

from model_utils.core.records.tune import TuneSummary
from model_utils.verdicts.domains import domain_rows, domain_sentence

SUMMARY = Path(__file__).resolve().parents[2] / "assets" / "tune" / "bundled-builtin" / "summary.json"
RECIPE = "yarn-rope (s=2) + T=1"


def test_the_sentence_quotes_the_range_over_domains_of_the_json():
    data = json.loads(SUMMARY.read_text())
    ours = [next(lever["saved"] for lever in domain["levers"] if lever["label"] == RECIPE)
            for domain in data["domains"]]
    constants = [[lever["saved"] for lever in domain["levers"] if lever["label"].startswith("T=")]
                 for domain in data["domains"]]
    best = [max(0.0, *values) for values in constants]
    said = domain_sentence(TuneSummary.from_dict(data), RECIPE)
    assert said.startswith(f"Per domain ({len(data['domains'])} kinds of text): {RECIPE} saves "
                           f"{min(ours):+.2f} to {max(ours):+.2f} nats per token")
    assert f"(in-sample), {min(best):+.2f} to {max(best):+.2f}." in said


def test_no_sentence_for_a_view_that_did_not_run_and_one_row_per_domain():
    summary = TuneSummary.from_dict(json.loads(SUMMARY.read_text()))
    assert domain_sentence(summary, "linear (s=2) + T=1") is None
    rows = domain_rows(summary)
    assert [row["domain"] for row in rows] == [entry.domain for entry in summary.domains]
    assert all(row[RECIPE].startswith(f"{next(lever.saved for lever in entry.levers if lever.label == RECIPE):+.3f} (")
               for row, entry in zip(rows, summary.domains, strict=True))
