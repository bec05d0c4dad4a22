"""A report as files: the JSON the command line writes, and the per-head statistics as CSV, with its columns
explained under the buttons (labels from model_utils.core.statistics.STATISTIC_LABELS, so they say what each number
is)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable

import streamlit as st

from components.present.captions import measured_queries
from components.present.sweep_data import statistics_of, sweep_rows
from model_utils import Report
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.statistics import STATISTIC_LABELS, STATISTICS


def head_csv(report: Report) -> str:
    """One row per (temperature, layer, head): Report.head_rows as CSV text."""
    return rows_csv(report.head_rows())


def rows_csv(rows: list[dict]) -> str:
    """Rows of equal keys as CSV text, a header line first."""
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return table.getvalue()


def csv_columns(report: Report) -> str:
    """What the CSV's columns hold, in words."""
    named = "; ".join(f"`{name}`: {STATISTIC_LABELS[name]}" for name in STATISTICS)
    return (f"CSV columns: `temperature`, `layer`, `head`, then the head's statistics over "
            f"{measured_queries(report)} (a mean unless the label says otherwise): {named}.")


def report_json(report: Report) -> str:
    """The report as `python -m model_utils analyze --json` writes it."""
    return json.dumps(report.to_dict(), allow_nan=False)


def downloads_ui(report: Report, stem: str) -> None:
    """The report as JSON and the per-head statistics as CSV, side by side, with the CSV's columns explained. Both
    are made when clicked, not on every run of the page."""
    left, right = st.columns(2)
    left.download_button("Download the report (JSON)", lambda: report_json(report), file_name=f"{stem}.json",
                         mime="application/json", key=f"{stem}_json")
    right.download_button("Download per-head statistics (CSV)", lambda: head_csv(report), file_name=f"{stem}.csv",
                          mime="text/csv", key=f"{stem}_csv")
    with st.expander("What the downloads hold"):
        st.caption("JSON: the whole report, as `python -m model_utils analyze --json` writes it. "
                   + csv_columns(report))


def sweep_downloads_ui(document: SweepDocument, document_json: Callable[[], str], stem: str) -> None:
    """A context-length sweep as its JSON (`document_json`: as the file holds it, or as the run made it) and as CSV,
    one row per bucket and temperature or schedule, with the CSV's columns explained. Both are made when clicked,
    not on every run of the page (the committed sweep's JSON is megabytes)."""
    left, right = st.columns(2)
    left.download_button("Download the sweep (JSON)", document_json, file_name=f"{stem}.json",
                         mime="application/json", key=f"{stem}_json")
    right.download_button("Download loss and statistics by bucket (CSV)", lambda: rows_csv(sweep_rows(document)),
                          file_name=f"{stem}.csv", mime="text/csv", key=f"{stem}_csv")
    with st.expander("What the downloads hold"):
        named = "; ".join(f"`{name}`: {STATISTIC_LABELS[name]}" for name in statistics_of(document))
        st.caption("JSON: the whole sweep, as `python -m model_utils sweep --json` writes it. CSV: one row per bucket "
                   "and pass (a temperature or schedule, on the model's own positions or a RoPE recipe): "
                   "`bucket_start`, `bucket_stop` (the bucket holds the query positions start to stop - 1), `label`, "
                   "`temperature` (empty for a schedule), `schedule`, `rope` (the RoPE recipe, e.g. yarn-rope (s=2); "
                   "empty on the model's own positions), `nll` (mean next-token NLL over the bucket's positions), "
                   "then each statistic as the mean over layers and "
                   f"heads of its mean over the bucket's queries (geometric for top_ratio): {named}.")
