"""The tuner's rows: one Parquet file per finished document (`rows/<sha256>.parquet`), one row per (document,
temperature or schedule, bucket), with the run's settings in the file metadata. A file is written under a
temporary name and renamed, so a crash never leaves half a document; a rerun skips the documents there and refuses
a folder made with other settings. A view's RoPE recipe is two columns (rope_recipe, rope_factor: Rope's fields);
the statistics are the report's (core.statistics.REPORTED_STATISTICS), the untrained mass on remapped distances
included."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from model_utils.core.files import write_atomic
from model_utils.core.records import RecordError
from model_utils.core.records.sweep import SweepPass
from model_utils.core.records.tune import RowSettings
from model_utils.core.rope import REMAPS, Rope
from model_utils.core.statistics import REPORTED_STATISTICS, statistic_mean
from model_utils.core.views import View
from model_utils.experiments.corpus import Document
from model_utils.experiments.runs.errors import RunUsageError
from model_utils.experiments.sweep import SweepSettings

FORMAT = 5  # of the rows and their metadata: bump when a column changes, so old folders are refused, not mixed
# 2: the recipe as its label in a `rope` column; 3: Rope's two fields, no effective untrained mass; 4: no per-layer
# masses (upgrade_rows)
ROWS = "rows"  # DIR/rows/<sha256>.parquet, one file per finished document
BY_LAYER = ("untrained_mass", "sink_mass")  # also kept per layer (mean over its heads): the verdict's layer types

COLUMNS = ("document", "name", "n_tokens", "spec", "temperature", "schedule", "rope_recipe", "rope_factor", "bucket",
           "start", "stop", "nll_sum", "nll_count", *REPORTED_STATISTICS, *(f"{name}_by_layer" for name in BY_LAYER))


def row_schema():
    """The Parquet schema of the rows (one per document, view and bucket; rope_recipe and rope_factor null on the
    model's own positions)."""
    import pyarrow as pa

    fields = [("document", pa.string()), ("name", pa.string()), ("n_tokens", pa.int64()), ("spec", pa.string()),
              ("temperature", pa.float64()), ("schedule", pa.string()), ("rope_recipe", pa.string()),
              ("rope_factor", pa.float64()), ("bucket", pa.int64()), ("start", pa.int64()), ("stop", pa.int64()),
              ("nll_sum", pa.float64()), ("nll_count", pa.int64())]
    return pa.schema(fields + [(name, pa.float64()) for name in REPORTED_STATISTICS]
                     + [(f"{name}_by_layer", pa.list_(pa.float64())) for name in BY_LAYER])


def rope_columns(rope: Rope | None) -> dict[str, object]:
    """A view's recipe as the rows hold it: Rope's two fields, both null on the model's own positions."""
    return {"rope_recipe": None if rope is None else rope.kind, "rope_factor": None if rope is None else rope.factor}


def document_columns(document: Document, passes: list[SweepPass]) -> dict[str, list]:
    """The rows of one document from its passes: per spec and bucket, the NLL sum and count of the bucket's
    positions that have a next token, the statistics averaged over layers and heads, and those of BY_LAYER per
    layer (averaged over its heads)."""
    columns: dict[str, list] = {name: [] for name in COLUMNS}
    for passed in passes:
        n, result = passed.n_tokens, passed.result
        for index, (start, stop) in enumerate(passed.buckets):
            count = max(0, min(stop, n - 1) - start)  # position p predicts token p + 1: the last has no target
            mean = result.nll[index]
            row = {"document": document.sha256, "name": document.name, "n_tokens": n, "spec": result.label,
                   "temperature": result.temperature, "schedule": None if result.schedule is None else
                   result.schedule.label, **rope_columns(result.rope),
                   "bucket": index, "start": start, "stop": stop, "nll_sum": 0.0 if count == 0 else mean * count,
                   "nll_count": count}
            row |= {name: float(statistic_mean(result.heads[name][index], name)) for name in REPORTED_STATISTICS}
            row |= by_layer(passed, index)
            for name in COLUMNS:
                columns[name].append(row[name])
    return columns


def by_layer(passed: SweepPass, bucket: int) -> dict[str, list[float]]:
    """The BY_LAYER statistics of one bucket of a pass, per layer (mean over its heads), as the rows hold them."""
    return {f"{name}_by_layer": [round(float(v), 6) for v in passed.result.heads[name][bucket].mean(axis=1)]
            for name in BY_LAYER}


@dataclass(frozen=True, kw_only=True)
class TuneSettings:
    """What a row depends on besides its document: written into every file, compared on every rerun."""

    model: str
    fingerprint: str
    specs: tuple[str, ...]
    sweep: SweepSettings

    def record(self) -> RowSettings:
        return RowSettings(format=FORMAT, model=self.model, model_fingerprint=self.fingerprint, specs=self.specs,
                           **asdict(self.sweep))

    def metadata(self) -> dict:
        return self.record().to_dict()


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

    about = {"name": document.name, "sha256": document.sha256, "n_tokens": result["columns"]["n_tokens"][0],
             "seconds": result["seconds"], "peak_rss_gb": result["peak_rss_gb"]}
    table = pa.Table.from_pydict(result["columns"], schema=row_schema()).replace_schema_metadata(
        {"tune_settings": json.dumps(settings.metadata()), "tune_document": json.dumps(about)})
    target = out / ROWS / f"{document.sha256}.parquet"
    _write_table(table, target)
    return target


def _write_table(table, target: Path) -> None:
    """`table` as the Parquet file `target`, whole or not at all."""
    import pyarrow.parquet as pq

    write_atomic(target, lambda staging: pq.write_table(table, staging))


def upgrade_rows(out: Path, settings: TuneSettings, views: Sequence[View],
                 passes_of: Callable[[str], Sequence[SweepPass] | None] | None = None) -> list[Path]:
    """Rewrite in place the files of the rows formats before this one that were made with these same settings;
    returns them. Format 2 held the recipe as its label in a `rope` column: Rope's two fields come from the view of
    each row's spec. Formats 2 and 3 held no effective untrained mass: on a view that remaps no distance it is the
    untrained mass, and on one that does it was not measured (NaN: the verdict leaves it unjudged). Formats 2 to 4
    held no per-layer masses: they come from the document's passes (`passes_of(sha256)`, in the order of the
    views; None where they are not at hand, and then the per-layer columns stay empty). A rerun of the command that
    made them so reads them on; files of other settings are left for finished_documents to refuse."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    wanted = settings.metadata()
    ropes = {view.label: view.rope for view in views}
    upgraded = []
    for path in sorted((out / ROWS).glob("*.parquet")):
        try:
            table = pq.read_table(path)
        except (pa.ArrowException, OSError):
            continue
        metadata = table.schema.metadata or {}
        found = json.loads(metadata.get(b"tune_settings", b"{}"))
        if found.get("format") not in (2, 3, 4) or found | {"format": FORMAT} != wanted:
            continue
        columns = table.to_pydict()
        if found["format"] == 2:
            recipes = [rope_columns(ropes[spec]) for spec in columns["spec"]]
            columns |= {name: [recipe[name] for recipe in recipes] for name in ("rope_recipe", "rope_factor")}
        if found["format"] in (2, 3):
            remapped = [kind in REMAPS for kind in columns["rope_recipe"]]
            columns["effective_untrained_mass"] = [math.nan if remaps else mass for remaps, mass in
                                                   zip(remapped, columns["untrained_mass"], strict=True)]
        columns |= _layer_columns(columns, None if passes_of is None else passes_of(path.stem))
        _write_table(pa.Table.from_pydict({name: columns[name] for name in COLUMNS}, schema=row_schema())
                     .replace_schema_metadata(metadata | {b"tune_settings": json.dumps(wanted).encode()}), path)
        upgraded.append(path)
    return upgraded


def _layer_columns(columns: dict[str, list], passes: Sequence[SweepPass] | None) -> dict[str, list]:
    """The per-layer columns of an older file's rows, from its document's passes (None: empty)."""
    if passes is None:
        return {f"{name}_by_layer": [None] * len(columns["spec"]) for name in BY_LAYER}
    by_label = {passed.result.label: passed for passed in passes}
    found = [by_layer(by_label[spec], bucket) for spec, bucket in zip(columns["spec"], columns["bucket"], strict=True)]
    return {f"{name}_by_layer": [row[f"{name}_by_layer"] for row in found] for name in BY_LAYER}


def read_rows(out: Path, hashes: Sequence[str]):
    """The rows of these documents from the dataset in `out` (a pyarrow Table)."""
    import pyarrow.dataset as ds

    dataset = ds.dataset(str(out / ROWS), format="parquet", schema=row_schema())
    return dataset.to_table(filter=ds.field("document").isin(list(hashes)))




def region_sums(out: Path, trained_length: int) -> tuple[RowSettings, dict[tuple[str, str], dict]]:
    """A tune's rows as a fit's comparisons: its settings, and per (document sha256, spec label) the NLL summed over
    its buckets before `trained_length` (from q_start) and past it, with their counts and the document's token count.
    Refuses a folder without rows, rows of another rows format or of mixed settings, and a trained length that falls
    inside a bucket (the two regions would not be whole buckets)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = sorted((out / ROWS).glob("*.parquet"))
    if not paths:
        raise RunUsageError(f"{out} holds no tune rows ({ROWS}/*.parquet): give the --out folder of a finished tune")
    found, sums = None, {}
    for path in paths:
        try:
            table = pq.read_table(path)
        except (pa.ArrowException, OSError):
            raise RunUsageError(f"{path} is not a Parquet file of the tuner") from None
        metadata = json.loads((table.schema.metadata or {}).get(b"tune_settings", b"{}"))
        if metadata.get("format") != FORMAT:
            raise RunUsageError(f"{path} holds tune rows of format {metadata.get('format')!r}, not {FORMAT}: rerun "
                                "the tune that made them to upgrade them")
        if found is not None and metadata != found:
            raise RunUsageError(f"{out} holds rows made with other settings ({_differences(metadata, found)})")
        found = metadata
        for row in table.to_pylist():
            if row["start"] < trained_length < row["stop"]:
                raise RunUsageError(f"the trained length {trained_length:,} falls inside the tune's bucket "
                                    f"{row['start']:,}-{row['stop']:,}: its rows cannot be split there")
            region = "past" if row["start"] >= trained_length else "before"
            entry = sums.setdefault((row["document"], row["spec"]), {
                "before_sum": 0.0, "before_count": 0, "past_sum": 0.0, "past_count": 0, "n_tokens": row["n_tokens"]})
            entry[f"{region}_sum"] += row["nll_sum"]
            entry[f"{region}_count"] += row["nll_count"]
    try:
        return RowSettings.from_dict(found), sums
    except RecordError as error:
        raise RunUsageError(f"{out}: {error}") from None
