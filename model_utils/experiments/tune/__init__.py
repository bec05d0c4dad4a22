"""The corpus tuner: run.tune (in-process or on Ray, through runs/), rows (Parquet), summary."""

from model_utils.experiments.tune.run import PASSES, SUMMARY, tune
from model_utils.experiments.tune.summary import summary_table

__all__ = ["PASSES", "SUMMARY", "summary_table", "tune"]
