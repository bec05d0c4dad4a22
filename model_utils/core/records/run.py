"""How a result file was made, as the command line records it: the command, when, how long the run took, its peak
memory and the machine."""

from __future__ import annotations

from dataclasses import dataclass, fields

from model_utils.core.records import field

KIND = "run record"


@dataclass(frozen=True, kw_only=True)
class RunInfo:
    command: str
    date: str  # ISO 8601, to the second
    wall_seconds: float
    peak_rss_gb: float
    machine: str  # architecture, cores, Python version

    @classmethod
    def from_dict(cls, data: dict) -> RunInfo:
        return cls(**{item.name: field(data, item.name, KIND) for item in fields(cls)})

    def to_dict(self) -> dict:
        return {item.name: getattr(self, item.name) for item in fields(self)}
