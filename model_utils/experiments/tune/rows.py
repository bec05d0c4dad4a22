"""The tuner's rows: one Parquet file per finished document (`rows/<sha256>.parquet`), one row per (document,
temperature or schedule, bucket), with the run's settings in the file metadata. A file is written under a
temporary name and renamed, so a crash never leaves half a document; a rerun skips the documents there and refuses
a folder made with other settings."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from model_utils.core.files import write_atomic
from model_utils.core.statistics import STATISTICS, statistic_mean
from model_utils.experiments.corpus import Document
from model_utils.experiments.runs.errors import RunUsageError
from model_utils.experiments.sweep import SweepSettings, rope_label

FORMAT = 2  # of the rows and their metadata: bump when a column changes, so old folders are refused, not mixed
ROWS = "rows"  # DIR/rows/<sha256>.parquet, one file per finished document

COLUMNS = ("document", "name", "n_tokens", "spec", "temperature", "schedule", "rope", "bucket", "start", "stop",
           "nll_sum", "nll_count", *STATISTICS)


def row_schema():
    """The Parquet schema of the rows (one per document, view and bucket; `rope` the recipe's label or null)."""
    import pyarrow as pa

    fields = [("document", pa.string()), ("name", pa.string()), ("n_tokens", pa.int64()), ("spec", pa.string()),
              ("temperature", pa.float64()), ("schedule", pa.string()), ("rope", pa.string()), ("bucket", pa.int64()),
              ("start", pa.int64()), ("stop", pa.int64()), ("nll_sum", pa.float64()), ("nll_count", pa.int64())]
    return pa.schema(fields + [(name, pa.float64()) for name in STATISTICS])


def document_columns(document: Document, records: list[dict]) -> dict[str, list]:
    """The rows of one document from its pass records: per spec and bucket, the NLL sum and count of the bucket's
    positions that have a next token, and the statistics averaged over layers and heads."""
    columns: dict[str, list] = {name: [] for name in COLUMNS}
    for record in records:
        n = record["n_tokens"]
        for index, (start, stop) in enumerate(record["buckets"]):
            count = max(0, min(stop, n - 1) - start)  # position p predicts token p + 1: the last has no target
            mean = record["nll"][index]
            row = {"document": document.sha256, "name": document.name, "n_tokens": n, "spec": record["label"],
                   "temperature": record["temperature"], "schedule": record["schedule"], "rope": rope_label(record),
                   "bucket": index,
                   "start": start, "stop": stop, "nll_sum": 0.0 if count == 0 else mean * count, "nll_count": count}
            row |= {name: float(statistic_mean(np.asarray(record["heads"][name][index]), name))
                    for name in STATISTICS}
            for name in COLUMNS:
                columns[name].append(row[name])
    return columns


@dataclass(frozen=True, kw_only=True)
class TuneSettings:
    """What a row depends on besides its document: written into every file, compared on every rerun."""

    model: str
    fingerprint: str
    specs: tuple[str, ...]
    sweep: SweepSettings

    def metadata(self) -> dict:
        return {"format": FORMAT, "model": self.model, "model_fingerprint": self.fingerprint,
                "specs": list(self.specs), **asdict(self.sweep)}


def _differences(found: dict, wanted: dict) -> str:
    keys = sorted(set(found) | set(wanted))
    return ", ".join(f"{key} {found.get(key)!r} there, {wanted.get(key)!r} now" for key in keys
                     if found.get(key) != wanted.get(key))


def finished_documents(out: Path, settings: TuneSettings) -> set[str]:
    """The sha256 of every document already in `out`; refuses a folder whose files were made with other settings."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if out.exists() and not out.is_dir():
        raise RunUsageError(f"--out {str(out)!r} is a file; give a folder for the results")
    wanted = settings.metadata()
    done = set()
    for path in sorted((out / ROWS).glob("*.parquet")):
        try:
            metadata = pq.read_schema(path).metadata or {}
        except (pa.ArrowException, OSError):
            raise RunUsageError(f"{path} is not a Parquet file of the tuner; remove it or choose another --out"
                                ) from None
        found = json.loads(metadata.get(b"tune_settings", b"{}"))
        if found != wanted:
            raise RunUsageError(f"{out} holds results made with other settings ({_differences(found, wanted)}; in "
                                f"{path.name}); use another --out, or remove {out} to start over")
        done.add(path.stem)
    return done


def write_document(out: Path, settings: TuneSettings, document: Document, result: dict) -> Path:
    """One finished document's rows as one Parquet file, whole or not at all (temporary name, then rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    about = {"name": document.name, "sha256": document.sha256, "n_tokens": result["columns"]["n_tokens"][0],
             "seconds": result["seconds"], "peak_rss_gb": result["peak_rss_gb"]}
    table = pa.Table.from_pydict(result["columns"], schema=row_schema()).replace_schema_metadata(
        {"tune_settings": json.dumps(settings.metadata()), "tune_document": json.dumps(about)})
    target = out / ROWS / f"{document.sha256}.parquet"
    write_atomic(target, lambda staging: pq.write_table(table, staging))
    return target


def read_rows(out: Path, hashes: Sequence[str]):
    """The rows of these documents from the dataset in `out` (a pyarrow Table)."""
    import pyarrow.dataset as ds

    dataset = ds.dataset(str(out / ROWS), format="parquet", schema=row_schema())
    return dataset.to_table(filter=ds.field("document").isin(list(hashes)))


