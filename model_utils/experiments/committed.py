"""The committed results under assets/ (sweeps, corpus tunes, fits, retrieval probes, lm-evaluation-harness runs):
each kind's files listed with the bundled model's first, then the others by name, and read through the kind's own
record. The README and FINDINGS generator (bench/readme.py), the pages' caches (components/serving/cache.py) and the
tests all read them here. It imports the records and the standard library only, so a page reads them without torch."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from model_utils.core.records.fit import FitSummary
from model_utils.core.records.lmeval import LmEvalDocument
from model_utils.core.records.retrieval import RetrievalDocument
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary

ASSETS = Path(__file__).resolve().parents[2] / "assets"
R = TypeVar("R")


@dataclass(frozen=True, kw_only=True)
class ResultFiles(Generic[R]):
    """One kind of committed result: its record, its folder, which files of it (a glob under the folder), and the
    file listed first (the bundled model's, when it is there; None: all by name). A test points `folder` (and
    `first`) at its own with dataclasses.replace."""

    record: type[R]
    folder: Path
    pattern: str
    first: Path | None = None

    def paths(self) -> list[Path]:
        """`first` (when it is there), then every other file of `folder` that `pattern` matches, by name."""
        found = sorted(self.folder.glob(self.pattern))
        if self.first is None or not self.first.is_file():
            return found
        return [self.first, *(path for path in found if path.resolve() != self.first.resolve())]

    def read(self) -> list[R]:
        """Every file of `paths`, as its record; a file that cannot be read raises (OSError, or a ValueError such
        as RecordError whose message says how to regenerate it)."""
        return [read(path, self.record) for path in self.paths()]

    def read_first(self) -> R:
        """The record of `first`, the bundled model's file (it raises where there is none)."""
        if self.first is None:
            raise ValueError(f"no file of {self.folder} comes first")
        return read(self.first, self.record)


def read(path: Path, record: type[R]) -> R:
    """One result file, read through its record's from_dict."""
    return record.from_dict(json.loads(path.read_text(encoding="utf-8")))


SWEEPS = ResultFiles(record=SweepDocument, folder=ASSETS / "sweeps", pattern="*.json",
                     first=ASSETS / "sweeps" / "bundled-16k.json")  # `make sweep`, `make sweep-gemma`
TUNES = ResultFiles(record=TuneSummary, folder=ASSETS / "tune", pattern="*/summary.json",
                    first=ASSETS / "tune" / "bundled-builtin" / "summary.json")  # `make tune`, `make tune-gemma`
FITS = ResultFiles(record=FitSummary, folder=ASSETS / "fit", pattern="*/fit.json")  # `make fit`
PROBES = ResultFiles(record=RetrievalDocument, folder=ASSETS / "retrieval", pattern="*.json",
                     first=ASSETS / "retrieval" / "bundled.json")  # `make retrieval`, `make retrieval-gemma`
LMEVALS = ResultFiles(record=LmEvalDocument, folder=ASSETS / "lmeval", pattern="*.json")  # `make lmeval`
