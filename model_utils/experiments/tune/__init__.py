"""The corpus tuner: run.tune (in-process or on Ray, through runs/), rows (Parquet), summary."""

from model_utils.experiments.tune.run import PASSES, SUMMARY, tune

__all__ = ["PASSES", "SUMMARY", "tune"]
