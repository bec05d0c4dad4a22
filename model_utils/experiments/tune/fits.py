"""The fits made on a tune's documents, folded into its summary's verdict when either is written
(verdicts.fit.fold_fits): `fit --compare-from DIR` folds the fit it writes into DIR's summary, and a rerun of the
tune keeps the fits its previous summary held. So the verdict a page shows is the one stored."""

from __future__ import annotations

import json
from pathlib import Path

from model_utils.core.records.fit import FitSummary
from model_utils.core.records.tune import TuneSummary
from model_utils.experiments.tune.run import SUMMARY
from model_utils.verdicts.fit import carry_fits, fold_fits


def read_summary(path: Path) -> TuneSummary | None:
    """The summary at `path`, None where there is none or it cannot be read (a rerun then starts afresh)."""
    try:
        return TuneSummary.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError):  # a RecordError is a ValueError
        return None


def keep_fits(path: Path, summary: TuneSummary) -> TuneSummary:
    """The summary about to replace `path`, with the fits the one there had folded in."""
    return carry_fits(read_summary(path), summary)


def fold_into(folder: Path, fit: FitSummary) -> TuneSummary | None:
    """The summary of the tune in `folder` with `fit` folded into its verdict; None without a summary there, or
    when the fit was not made on its documents at its length (nothing to write)."""
    summary = read_summary(folder / SUMMARY)
    if summary is None:
        return None
    folded = fold_fits(summary, [fit])
    return None if folded == summary else folded
