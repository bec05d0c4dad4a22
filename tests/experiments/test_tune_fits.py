"""The fits folded into a tune's summary when either is written (experiments/tune/fits.py): `fit --compare-from DIR`
folds the fit it wrote into DIR's summary, a rerun of the tune keeps the fits its previous summary held, and a fit
made on other documents or at another length is folded nowhere."""

import json
from dataclasses import replace

from model_utils.core.records.verdict import RowKind
from model_utils.experiments.committed import FITS, TUNES
from model_utils.experiments.tune.fits import fold_into, keep_fits
from model_utils.experiments.tune.run import SUMMARY


def without_fits(summary):
    decomposition = summary.verdict.decomposition
    rows = tuple(row for row in decomposition.rows if row.kind is not RowKind.FITTED)
    return replace(summary, verdict=replace(summary.verdict, decomposition=replace(decomposition, rows=rows)))


def write(folder, summary):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SUMMARY).write_text(json.dumps(summary.to_dict(), allow_nan=False))


def test_a_fit_on_the_tunes_documents_is_folded_into_its_summary(tmp_path):
    committed = TUNES.read_first()
    write(tmp_path / "tune", without_fits(committed))
    (fit,) = [fit for fit in FITS.read() if fit.settings.max_tokens == committed.settings.max_tokens]
    assert fold_into(tmp_path / "tune", fit) == committed
    other = [fit for fit in FITS.read() if fit.settings.max_tokens != committed.settings.max_tokens]
    assert other and all(fold_into(tmp_path / "tune", fit) is None for fit in other)  # 12,288 tokens: not its own
    assert fold_into(tmp_path / "no tune", fit) is None


def test_a_rerun_of_the_tune_keeps_the_fits_of_the_summary_it_replaces(tmp_path):
    committed = TUNES.read_first()
    write(tmp_path, committed)
    assert keep_fits(tmp_path / SUMMARY, without_fits(committed)) == committed
    assert keep_fits(tmp_path / "missing.json", without_fits(committed)) == without_fits(committed)
