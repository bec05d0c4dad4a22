"""How a result file was made, as the command line records it: the command, when, how long the run took, its peak
memory and the machine."""

from __future__ import annotations

from dataclasses import dataclass

from model_utils.core.records.base import Record

KIND = "run record"


@dataclass(frozen=True, kw_only=True)
class RunInfo(Record):
    command: str
    date: str  # ISO 8601, to the second
    wall_seconds: float
    peak_rss_gb: float
    machine: str  # architecture, cores, Python version
