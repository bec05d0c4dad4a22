"""The fitter's results folder: one Parquet file per evaluation (`rows/<stage>.parquet`: one row per document of
what one parameter value, or one comparison, gave), written under a temporary name and renamed, with the run's
settings in the file metadata. A rerun reads them back first, so the optimizer replays its path without
recomputing, and a folder made with other settings is refused."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from model_utils.core.files import write_atomic
from model_utils.experiments.runs.errors import RunUsageError

FORMAT = 1  # bump when a column changes
ROWS = "rows"
COLUMNS = ("stage", "fold", "evaluation", "parameter", "document", "name", "spec", "before_sum", "before_count",
           "past_sum", "past_count", "seconds")


def evaluation_schema():
    """The Parquet schema of the fitter's rows (one per document of an evaluation or a comparison)."""
    import pyarrow as pa

    kinds = {"stage": pa.string(), "fold": pa.int64(), "evaluation": pa.int64(), "parameter": pa.float64(),
             "document": pa.string(), "name": pa.string(), "spec": pa.string(), "before_sum": pa.float64(),
             "before_count": pa.int64(), "past_sum": pa.float64(), "past_count": pa.int64(),
             "seconds": pa.float64()}
    return pa.schema([(name, kinds[name]) for name in COLUMNS])


@dataclass(kw_only=True)
class Store:
    """The rows of one results folder, indexed by (document sha256, spec label)."""

    out: Path
    metadata: dict
    found: dict[tuple[str, str], dict] = field(default_factory=dict)

    def __post_init__(self):
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.out.exists() and not self.out.is_dir():
            raise RunUsageError(f"--out {str(self.out)!r} is a file; give a folder for the results")
        for path in sorted((self.out / ROWS).glob("*.parquet")):
            try:
                table = pq.read_table(path)
            except (pa.ArrowException, OSError):
                raise RunUsageError(f"{path} is not a Parquet file of the fitter; remove it or choose another "
                                    "--out") from None
            settings = json.loads((table.schema.metadata or {}).get(b"fit_settings", b"{}"))
            if settings != self.metadata:
                changed = ", ".join(sorted(key for key in set(settings) | set(self.metadata)
                                           if settings.get(key) != self.metadata.get(key)))
                raise RunUsageError(f"{self.out} holds a fit made with other settings ({changed} differ, in "
                                    f"{path.name}); use another --out, or remove it to start over")
            for row in table.to_pylist():
                self.found[(row["document"], row["spec"])] = row

    def get(self, document: str, spec: str) -> dict | None:
        return self.found.get((document, spec))

    def write(self, stage: str, rows: list[dict]) -> None:
        """The rows of one evaluation as one file, whole or not at all."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder = self.out / ROWS
        folder.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist(rows, schema=evaluation_schema()).replace_schema_metadata(
            {"fit_settings": json.dumps(self.metadata)})
        write_atomic(folder / f"{stage}.parquet", lambda staging: pq.write_table(table, staging))
        for row in rows:
            self.found[(row["document"], row["spec"])] = row
