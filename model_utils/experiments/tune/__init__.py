"""The corpus tuner: run.tune (in-process or on Ray), rows (Parquet), summary, worker, cluster."""

from model_utils.experiments.tune.errors import TuneError, TuneUsageError
from model_utils.experiments.tune.run import PASSES, SUMMARY, tune
from model_utils.experiments.tune.summary import summary_table

__all__ = ["PASSES", "SUMMARY", "TuneError", "TuneUsageError", "summary_table", "tune"]
