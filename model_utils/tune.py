"""The corpus tuner: the context-length sweep over many documents, in-process or on Ray actors, with results in
a Parquet dataset and a summary of the best temperature per query-position bucket with intervals over documents.

Each document runs through the sweep's own passes (`sweep.run_passes`: one in-model `analyze` per temperature or
schedule, each pass saved as soon as it finishes) and becomes one row per (document, temperature or schedule,
bucket): the NLL sum and count of the bucket's positions and the bucket's statistics averaged over layers and
heads. A finished document's rows are one Parquet file, `rows/<sha256>.parquet`, written under a temporary name
and renamed, with the run's settings in the file metadata: a crash never leaves half a document, a rerun skips
the documents that are there (and refuses a folder made with other settings), and the passes of a document cut
short stay in `.passes/` so its rerun starts at the next pass.

The same `DocumentWorker` runs in the driver's process (`workers=1`, no Ray) and as a Ray actor (`workers > 1`,
or `ray_address`): the driver hands one document at a time to each actor and writes each result it receives. A
worker that dies mid-document is restarted by Ray and its document re-run there (`max_restarts`,
`max_task_retries`); the driver receives one result per document, so nothing is lost or written twice.

Determinism: the rows do not depend on the number of torch threads. The fused attention kernel computes each
attention row in one thread, and MKL's sgemm split these products by output blocks on every shape measured
(bundled model, 600 and 2,048 tokens, 1 vs 2 threads: position NLL and statistics bit-identical), so `workers=1`
(the process's threads) and `workers=2` (one thread per actor) write identical rows; tests/test_tune.py checks it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from model_utils.analysis import AnalysisError, set_threads
from model_utils.corpus import Corpus, Document
from model_utils.loading import LoadedModel, cache_root, load_model
from model_utils.metrics import STATISTICS, bucket_bounds, statistic_mean
from model_utils.schedules import Schedule, spec_label
from model_utils.sweep import (
    BOOTSTRAP_RESAMPLES,
    CONFIDENCE,
    SweepSettings,
    best_temperature,
    check_specs,
    check_text,
    interval,
    model_fingerprints,
    pass_key,
    peak_rss_gb,
    run_passes,
)

FORMAT = 1  # of the rows and their metadata: bump when a column changes, so old folders are refused, not mixed
ROWS = "rows"  # DIR/rows/<sha256>.parquet, one file per finished document
PASSES = ".passes"  # DIR/.passes/: the passes of documents not finished yet (the sweep's pass cache format)
SUMMARY = "summary.json"
SEED = 0  # of the bootstrap over documents: the same dataset always gives the same summary
OBJECT_STORE_BYTES = 100 * 1024**2  # local Ray: a document's result is a few kB, the default store is 30% of RAM
MAX_RESTARTS = 2  # a worker that dies is restarted this often (then its document fails, the run ends, rows stay)
MAX_TASK_RETRIES = 2  # a document whose worker died is re-run on the restarted worker this often
CONNECT_SECONDS = 5.0  # TCP check of --ray-address before Ray's own connection attempt (minutes, unbounded)
# Ray's own connection to a cluster address retries 20 times with a 30 s timeout each (ray/_private/node.py,
# _init_gcs_client; py_gcs_connect_timeout_s): over ten minutes. These bound it to about 16 s when the port answers
# but is no Ray; they are read when ray is imported, so they are set before (a user's own values win).
BOUNDED_CONNECT = {"RAY_gcs_server_port_wait_time_s": "1", "RAY_py_gcs_connect_timeout_s": "5"}
WORKER_START_SECONDS = 900  # actors that cannot start (a cluster without free CPUs) fail instead of waiting
ROOT = Path(__file__).resolve().parent.parent  # the repository: local Ray workers import model_utils from here


class TuneError(RuntimeError):
    """The run could not finish (a worker died more often than Ray restarts it, a cluster without room); the
    documents finished so far are kept, and a rerun computes only the rest."""


class TuneUsageError(ValueError):
    """A request the tuner refuses before any work (other settings in the folder, an unreachable Ray address)."""


# --- rows -------------------------------------------------------------------------------------------------------

COLUMNS = ("document", "name", "n_tokens", "spec", "temperature", "schedule", "bucket", "start", "stop", "nll_sum",
           "nll_count", *STATISTICS)


def schema():
    """The Parquet schema of the rows (one per document, temperature or schedule, and bucket)."""
    import pyarrow as pa

    fields = [("document", pa.string()), ("name", pa.string()), ("n_tokens", pa.int64()), ("spec", pa.string()),
              ("temperature", pa.float64()), ("schedule", pa.string()), ("bucket", pa.int64()),
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
                   "temperature": record["temperature"], "schedule": record["schedule"], "bucket": index,
                   "start": start, "stop": stop, "nll_sum": 0.0 if count == 0 else mean * count, "nll_count": count}
            row |= {name: float(statistic_mean(np.asarray(record["heads"][name][index]), name))
                    for name in STATISTICS}
            for name in COLUMNS:
                columns[name].append(row[name])
    return columns


# --- the worker -------------------------------------------------------------------------------------------------


class DocumentWorker:
    """Loads the model once and turns documents into rows. The same class runs in the driver's process and, wrapped
    by ray.remote, as an actor; an actor sets its torch threads first, so that W actors share the cores."""

    def __init__(self, model: str | LoadedModel, specs: Sequence[float | Schedule], settings: SweepSettings,
                 pass_dir: str | None, threads: int | None = None, announce: bool = False, device: str | None = None):
        if threads is not None:
            set_threads(threads)
        # an actor loads its own copy, on `device` (e.g. "cuda": the engine then takes its torch path); in-process
        # the driver's own model is used
        self.loaded = load_model(model, device=device) if isinstance(model, str) else model
        self.specs = list(specs)
        self.settings = settings
        self.pass_dir = Path(pass_dir) if pass_dir else cache_root() / "tune-passes"
        self.announce = announce  # an actor prints each pass (Ray forwards it to the driver's terminal)
        self.fingerprint, self.portable_fingerprint = model_fingerprints(self.loaded)

    def describe(self) -> dict:
        import torch

        return {"pid": os.getpid(), "host": socket.gethostname(), "threads": torch.get_num_threads(),
                "fingerprint": self.portable_fingerprint}  # as the driver's, wherever the model is kept

    def run(self, document: Document, on_pass: Callable[[str, int], None] | None = None) -> dict:
        """The document's rows (as columns), with the seconds it took and this process's peak memory."""
        started = time.perf_counter()
        if on_pass is None and self.announce:
            def on_pass(label: str, index: int) -> None:
                print(f"{document.name}: {label} ({index + 1}/{len(self.specs)})", file=sys.stderr, flush=True)
        records = run_passes(self.loaded, document.text, self.specs, self.settings, self.pass_dir, on_pass,
                             fingerprint=self.fingerprint)
        columns = document_columns(document, records)
        for spec in self.specs:  # the rows hold what the passes were kept for; the driver writes them next
            (self.pass_dir / f"{pass_key(self.fingerprint, document.text, spec, self.settings)}.json").unlink(
                missing_ok=True)
        return {"sha256": document.sha256, "columns": columns, "seconds": round(time.perf_counter() - started, 1),
                "peak_rss_gb": peak_rss_gb(), "pid": os.getpid()}


# --- the folder -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
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
        raise TuneUsageError(f"--out {str(out)!r} is a file; give a folder for the results")
    wanted = settings.metadata()
    done = set()
    for path in sorted((out / ROWS).glob("*.parquet")):
        try:
            metadata = pq.read_schema(path).metadata or {}
        except (pa.ArrowException, OSError):
            raise TuneUsageError(f"{path} is not a Parquet file of the tuner; remove it or choose another --out"
                                 ) from None
        found = json.loads(metadata.get(b"tune_settings", b"{}"))
        if found != wanted:
            raise TuneUsageError(f"{out} holds results made with other settings ({_differences(found, wanted)}; in "
                                 f"{path.name}); use another --out, or remove {out} to start over")
        done.add(path.stem)
    return done


def write_document(out: Path, settings: TuneSettings, document: Document, result: dict) -> Path:
    """One finished document's rows as one Parquet file, whole or not at all (temporary name, then rename)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    about = {"name": document.name, "sha256": document.sha256, "n_tokens": result["columns"]["n_tokens"][0],
             "seconds": result["seconds"], "peak_rss_gb": result["peak_rss_gb"]}
    table = pa.Table.from_pydict(result["columns"], schema=schema()).replace_schema_metadata(
        {"tune_settings": json.dumps(settings.metadata()), "tune_document": json.dumps(about)})
    target = out / ROWS / f"{document.sha256}.parquet"
    staging = target.with_name(f".{target.name}.{os.getpid()}.partial")  # dot: pyarrow.dataset skips it
    try:
        pq.write_table(table, staging)
        os.replace(staging, target)
    finally:
        staging.unlink(missing_ok=True)  # only there if the write failed or was interrupted
    return target


# --- Ray --------------------------------------------------------------------------------------------------------


def parse_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "://" in address:
        raise TuneUsageError(f"--ray-address {address!r} is not HOST:PORT; give the address `ray start --head` "
                             "printed (its GCS port, 6379 by default)")
    return host, int(port)


def check_reachable(address: str, timeout: float = CONNECT_SECONDS) -> None:
    """One TCP connection to the cluster's address, so that a wrong or unreachable one fails in seconds."""
    from ray._private.services import canonicalize_bootstrap_address  # what ray.init connects to (localhost -> IP)

    host, port = parse_address(address)
    with contextlib.suppress(Exception):  # else keep the address as typed: the connection below says what is wrong
        host, port = parse_address(canonicalize_bootstrap_address(address) or address)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as error:
        reason = error.strerror or type(error).__name__.replace("Error", " error").lower()
        raise TuneUsageError(f"cannot reach a Ray cluster at {address} ({reason}); start one with `ray start "
                             "--head` and give the address it prints, or leave out --ray-address") from None


def start_ray(workers: int, address: str | None) -> bool:
    """Start a local Ray for `workers` actors (W CPUs, no dashboard, a bounded object store), or join the cluster
    at `address`. Returns whether this call connected (and so should shut down); False when the caller already
    has a local Ray running (a test module that starts it once)."""
    if address is not None:
        for key, value in BOUNDED_CONNECT.items():  # before Ray is imported: it reads them once
            os.environ.setdefault(key, value)
        check_reachable(address)
    import ray

    if address is None and ray.is_initialized():
        return False
    options = {"logging_level": "WARNING", "configure_logging": True}
    if address is None:
        ray.init(address="local", num_cpus=workers, include_dashboard=False, object_store_memory=OBJECT_STORE_BYTES,
                 runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}}, **options)
        return True
    try:  # the cluster's machines have the dependencies (make setup); the engine's code travels with the job
        ray.init(address=address, runtime_env={"py_modules": [str(ROOT / "model_utils")]}, **options)
    except (ConnectionError, RuntimeError, ValueError, ray.exceptions.AuthenticationError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":  # `ray start` turns it on; joining does not
            reason += ("; if the cluster uses Ray's token authentication (the default of `ray start`), set "
                       "RAY_AUTH_MODE=token and give this machine the head's ~/.ray/auth_token")
        raise TuneUsageError(f"cannot join the Ray cluster at {address}: {reason}") from None
    return True


def start_actors(count: int, threads: int, cpus_each: float, worker_args: tuple, fingerprint: str,
                 device: str | None = None) -> list:
    """`count` DocumentWorker actors, each with the model loaded, checked to hold the same model as the driver
    (`fingerprint`: the driver's portable fingerprint, model_fingerprints)."""
    import ray

    actor_class = ray.remote(max_restarts=MAX_RESTARTS, max_task_retries=MAX_TASK_RETRIES)(DocumentWorker)
    gpus = 1 if device and device.startswith("cuda") else 0  # Ray places each actor on a node with a free GPU
    actors = [actor_class.options(num_cpus=cpus_each, num_gpus=gpus).remote(*worker_args, threads=threads,
                                                                           announce=True, device=device)
              for _ in range(count)]
    try:
        described = ray.get([actor.describe.remote() for actor in actors], timeout=WORKER_START_SECONDS)
    except ray.exceptions.GetTimeoutError:
        raise TuneError(f"{count} workers did not start within {WORKER_START_SECONDS} s; does the cluster have "
                        f"{count} x {cpus_each:g} free CPUs?") from None
    except ray.exceptions.RayActorError as error:  # e.g. the model cannot be loaded on a worker's machine
        reason = str(error).strip().splitlines()
        raise TuneError(f"a worker could not start: {reason[-1] if reason else type(error).__name__}") from None
    for info in described:
        if info["fingerprint"] != fingerprint:
            raise TuneError(f"the worker on {info['host']} loaded another model (fingerprint {info['fingerprint']}, "
                            f"the driver has {fingerprint}); install the same model and versions on every machine")
    return actors


def run_on_actors(actors: list, documents: list[Document], finish: Callable[[Document, dict], None]) -> None:
    """Hand the documents to the actors one at a time and `finish` each result as it comes. A document whose worker
    died more often than Ray retries it, or whose pass failed, ends the run once the others in flight are done."""
    import ray

    queue = deque(documents)
    in_flight: dict = {}  # ObjectRef -> (actor, document)

    def submit(actor) -> None:
        document = queue.popleft()
        in_flight[actor.run.remote(document)] = (actor, document)

    for actor in actors[: len(queue)]:
        submit(actor)
    failures: list[str] = []
    cause: BaseException | None = None
    while in_flight:
        ready, _ = ray.wait(list(in_flight), num_returns=1)
        actor, document = in_flight.pop(ready[0])
        try:
            result = ray.get(ready[0])
        except ray.exceptions.RayActorError as error:  # died and was restarted MAX_RESTARTS times: out of the pool
            failures.append(f"{document.name} (its worker died {MAX_TASK_RETRIES + 1} times: "
                            f"{str(error).strip().splitlines()[0]})")
            continue
        except ray.exceptions.RayTaskError as error:  # the pass itself raised: the same error as in-process
            cause = cause or error.cause or error
            failures.append(document.name)
            continue
        finish(document, result)
        if queue and not failures:
            submit(actor)
    if cause is not None:
        raise cause
    if failures or queue:
        left = f"; {len(queue)} not started" if queue else ""
        raise TuneError(f"documents not finished: {', '.join(failures)}{left}. The finished ones are kept: rerun "
                        "the same command to compute the rest")


# --- the tune ---------------------------------------------------------------------------------------------------


@dataclass
class Progress:
    """What `on_document` receives once when the work starts (document None) and after each finished document."""

    done: int  # documents in the folder now, this one included
    total: int
    document: Document | None
    computed: int  # documents computed by this run so far
    seconds: float  # this document's compute time


@dataclass
class Writer:
    """The driver's side of a run: writes each finished document once and reports progress."""

    out: Path
    settings: TuneSettings
    present: int  # documents already in the folder when the run started
    total: int
    on_document: Callable[[Progress], None] | None
    computed: int = 0
    worker_peaks: list[float] = field(default_factory=list)

    def begin(self) -> None:  # once the workers are ready: a run refused or unable to start draws no progress
        if self.on_document is not None:
            self.on_document(Progress(self.present, self.total, None, 0, 0.0))

    def finish(self, document: Document, result: dict) -> None:
        write_document(self.out, self.settings, document, result)
        self.computed += 1
        self.worker_peaks.append(result["peak_rss_gb"])
        if self.on_document is not None:
            self.on_document(Progress(self.present + self.computed, self.total, document, self.computed,
                                      result["seconds"]))


def check_documents(loaded: LoadedModel, corpus: Corpus, specs: Sequence, settings: SweepSettings) -> list[int]:
    """Refuse the tune before any work, naming the document at fault; the number of tokens of each document."""
    if settings.bucket_size is None:
        raise AnalysisError("a tune compares documents bucket by bucket: give a bucket size")
    request = check_specs(loaded, specs, settings)
    tokens = []
    for document in corpus.documents:
        try:
            tokens.append(check_text(loaded, document.text, request, settings))
        except AnalysisError as error:
            raise AnalysisError(f"{document.name}: {error}") from None
    return tokens


def run_in_process(worker: DocumentWorker, documents: list[Document], writer: Writer,
                   on_pass: Callable[[Document, str, int], None] | None) -> None:
    writer.begin()
    for document in documents:
        def announce(label: str, index: int, document: Document = document) -> None:
            on_pass(document, label, index)

        writer.finish(document, worker.run(document, None if on_pass is None else announce))


def run_on_ray(worker_args: tuple, documents: list[Document], writer: Writer, workers: int, threads: int,
               address: str | None, portable_fingerprint: str, device: str | None = None) -> None:
    connected = start_ray(workers, address)  # imports ray: after the bounds it sets for joining a cluster
    import ray

    try:  # a local actor takes one of the W CPUs; on a cluster it reserves as many CPUs as it has threads
        actors = start_actors(workers, threads, 1 if address is None else threads, worker_args,
                              portable_fingerprint, device)
        writer.begin()
        run_on_actors(actors, documents, writer.finish)
    finally:
        if connected:
            ray.shutdown()


def tune(loaded: LoadedModel, corpus: Corpus, specs: Sequence[float | Schedule], settings: SweepSettings,
         out: Path, *, workers: int = 1, ray_address: str | None = None, threads: int | None = None,
         on_document: Callable[[Progress], None] | None = None,
         on_pass: Callable[[Document, str, int], None] | None = None) -> dict:
    """Run every document of `corpus` not yet in `out` and return the summary of all of them (see the module
    docstring). workers=1 without ray_address runs in this process (`on_pass` hears of each pass); otherwise on
    Ray actors with `threads` torch threads each (default: this machine's cores // workers). Raises AnalysisError
    or TuneUsageError before any work, TuneError when documents could not be finished (those finished are kept)."""
    started = time.perf_counter()
    tokens = check_documents(loaded, corpus, specs, settings)
    fingerprint, portable_fingerprint = model_fingerprints(loaded)
    tune_settings = TuneSettings(loaded.name, fingerprint, tuple(map(spec_label, specs)), settings)
    done = finished_documents(out, tune_settings)
    pending = [document for document in corpus.documents if document.sha256 not in done]
    writer = Writer(out, tune_settings, len(corpus.documents) - len(pending), len(corpus.documents), on_document)
    use_ray = workers > 1 or ray_address is not None
    threads = threads or (max(1, (os.cpu_count() or 1) // workers) if use_ray else None)
    (out / ROWS).mkdir(parents=True, exist_ok=True)
    if pending and not use_ray:
        worker = DocumentWorker(loaded, specs, settings, str(out / PASSES), threads)
        run_in_process(worker, pending, writer, on_pass)
    elif pending:  # a cluster's workers keep unfinished passes on their own disks (cache_root() / tune-passes)
        passes = str(out.resolve() / PASSES) if ray_address is None else None
        device = None if loaded.device.type == "cpu" else str(loaded.device)  # actors load on the same kind
        run_on_ray((loaded.name, list(specs), settings, passes), pending, writer, workers, threads, ray_address,
                   portable_fingerprint, device)
    _remove_if_empty(out / PASSES)
    driver = peak_rss_gb()
    trained_length = settings.trained_length or loaded.max_positions
    return summarize(out, corpus, tokens, specs, tune_settings, trained_length) | {
        "workers": workers, "threads_per_worker": threads or _torch_threads(), "ray_address": ray_address,
        "computed_documents": writer.computed, "skipped_documents": writer.present,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "peak_rss_gb": {"driver": driver, "workers": max(writer.worker_peaks, default=None),
                        "max": max([driver, *writer.worker_peaks])}}


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not there, or holds passes of a document another run is still computing
        folder.rmdir()


# --- the summary ------------------------------------------------------------------------------------------------


def read_rows(out: Path, hashes: Sequence[str]):
    """The rows of these documents from the dataset in `out` (a pyarrow Table)."""
    import pyarrow.dataset as ds

    dataset = ds.dataset(str(out / ROWS), format="parquet", schema=schema())
    return dataset.to_table(filter=ds.field("document").isin(list(hashes)))


def _arrays(table, hashes: list[str], labels: list[str], n_buckets: int):
    """[document, spec, bucket] NLL sums, counts and queries, and per statistic the values; checks that the rows
    hold every (document, spec, bucket) of the corpus exactly once."""
    columns = {name: table.column(name).to_pylist() for name in ("document", "spec", "bucket")}
    document_index = {sha: i for i, sha in enumerate(hashes)}
    spec_index = {label: i for i, label in enumerate(labels)}
    shape = (len(hashes), len(labels), n_buckets)
    seen = np.zeros(shape, dtype=np.int64)
    sums, counts, queries = np.zeros(shape), np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64)
    stats = {name: np.full(shape, np.nan) for name in STATISTICS}
    values = {name: table.column(name).to_numpy(zero_copy_only=False) for name in
              ("nll_sum", "nll_count", "start", "stop", *STATISTICS)}
    for row, (sha, label, bucket) in enumerate(zip(columns["document"], columns["spec"], columns["bucket"],
                                                   strict=True)):
        at = (document_index[sha], spec_index[label], bucket)
        seen[at] += 1
        sums[at], counts[at] = values["nll_sum"][row], values["nll_count"][row]
        queries[at] = values["stop"][row] - values["start"][row]
        for name in STATISTICS:
            stats[name][at] = values[name][row]
    return seen, sums, counts, queries, stats


def summarize(out: Path, corpus: Corpus, tokens: list[int], specs: Sequence, settings: TuneSettings,
              trained_length: int, seed: int = SEED) -> dict:
    """Per bucket and spec, the NLL pooled over documents (sum / count) with a 95% bootstrap interval (documents
    resampled with replacement); per bucket, the best constant temperature with its interval and the NLL it saves
    against T = 1; each schedule's saving alongside."""
    sweep = settings.sweep
    hashes = sorted(document.sha256 for document in corpus.documents)  # the bootstrap's order: not the corpus's
    n_tokens = dict(zip((d.sha256 for d in corpus.documents), tokens, strict=True))
    bounds = bucket_bounds(sweep.q_start, max(tokens), sweep.bucket_size)
    expected = np.array([[len(bucket_bounds(sweep.q_start, n_tokens[sha], sweep.bucket_size))] for sha in hashes])
    labels = list(settings.specs)
    seen, sums, counts, queries, stats = _arrays(read_rows(out, hashes), hashes, labels, len(bounds))
    wanted = (np.arange(len(bounds))[None, None, :] < expected[:, :, None]).astype(np.int64)  # [doc, 1, bucket]
    if not np.array_equal(seen, np.broadcast_to(wanted, seen.shape)):
        missing, twice = int(((seen == 0) & (wanted == 1)).sum()), int((seen > 1).sum())
        raise TuneError(f"the rows in {out / ROWS} are incomplete ({missing} missing, {twice} duplicated); "
                        "rerun the same command to compute what is missing")
    constant = [i for i, spec in enumerate(specs) if not isinstance(spec, Schedule)]
    temperatures = np.array([specs[i] for i in constant])
    reference = constant[int(np.flatnonzero(temperatures == 1.0)[0])]
    rng = np.random.default_rng(seed)
    results = [{"label": spec_label(spec), "temperature": None if isinstance(spec, Schedule) else spec,
                "schedule": spec.label if isinstance(spec, Schedule) else None, "nll": [], "nll_interval": [],
                "statistics": {name: [] for name in STATISTICS}} for spec in specs]
    best, schedules = [], {spec_label(spec): [] for spec in specs if isinstance(spec, Schedule)}
    for bucket, (start, stop) in enumerate(bounds):
        reaching = np.flatnonzero(counts[:, reference, bucket] > 0)  # documents with positions in this bucket
        if len(reaching) == 0:
            continue
        bucket_sums, bucket_counts = sums[reaching, :, bucket], counts[reaching, :, bucket]  # [doc, spec]
        means = bucket_sums.sum(axis=0) / bucket_counts.sum(axis=0)  # [spec]
        draws = rng.integers(0, len(reaching), size=(BOOTSTRAP_RESAMPLES, len(reaching)))
        samples = bucket_sums[draws].sum(axis=1) / bucket_counts[draws].sum(axis=1)  # [resamples, spec]
        weights = queries[reaching, :, bucket]
        for i, result in enumerate(results):
            result["nll"].append(float(means[i]))
            result["nll_interval"].append(interval(samples[:, i]))
            for name in STATISTICS:
                result["statistics"][name].append(float(np.average(stats[name][reaching, i, bucket],
                                                                   weights=weights[:, i])))
        where = {"bucket": [start, stop], "documents": len(reaching),
                 "positions": int(bucket_counts[:, reference].sum())}
        best.append(where | best_temperature(temperatures, means[constant], samples[:, constant],
                                             constant.index(reference)))
        for i, spec in enumerate(specs):
            if isinstance(spec, Schedule):
                saved = samples[:, reference] - samples[:, i]
                schedules[spec.label].append(where | {"nll": float(means[i]),
                                                      "saved": float(means[reference] - means[i]),
                                                      "saved_interval": interval(saved)})
    seconds = _document_seconds(out, hashes)
    return {
        "model": settings.model, "model_fingerprint": settings.fingerprint, "settings": settings.metadata(),
        "trained_length": trained_length,
        "corpus": {"source": corpus.source, "documents": len(corpus.documents), "tokens": tokens,
                   "duplicates_skipped": corpus.duplicates,
                   "list": [{"name": d.name, "sha256": d.sha256, "n_tokens": n}
                            for d, n in zip(corpus.documents, tokens, strict=True)]},
        "buckets": [b["bucket"] for b in best], "results": results, "best": best,
        "schedules": [{"label": label, "buckets": entries} for label, entries in schedules.items()],
        "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "confidence": CONFIDENCE, "seed": seed,
                      "method": "documents resampled with replacement; the NLL of a bucket is pooled over the "
                                "positions of the documents drawn (sum / count)"},
        "compute_seconds": round(sum(seconds), 1),  # every document's passes, over all runs that made them
        "rows": str(out / ROWS),
    }


def _document_seconds(out: Path, hashes: Sequence[str]) -> list[float]:
    import pyarrow.parquet as pq

    seconds = []
    for sha in hashes:
        metadata = pq.read_schema(out / ROWS / f"{sha}.parquet").metadata or {}
        seconds.append(float(json.loads(metadata.get(b"tune_document", b"{}")).get("seconds", math.nan)))
    return seconds


def summary_table(summary: dict) -> str:
    """One line per bucket: the best constant temperature, its interval, and what it saves against T = 1."""
    corpus = summary["corpus"]
    tokens = sorted(set(corpus["tokens"]))
    length = f"{tokens[0]:,} tokens each" if len(tokens) == 1 else f"{tokens[0]:,}-{tokens[-1]:,} tokens"
    lines = [f"{summary['model']}: {corpus['documents']} documents, {length}; {len(summary['results'])} passes per "
             f"document; {summary['workers']} worker(s) x {summary['threads_per_worker']} thread(s); "
             f"{summary['wall_seconds']:.0f} s this run ({summary['computed_documents']} computed), "
             f"peak {summary['peak_rss_gb']['max']} GB",
             f"{'positions':>15} {'docs':>4} {'best T':>7} {'95% interval':>14} {'NLL at 1':>9} {'saved':>7} "
             f"{'95% interval':>17}  best schedule (saved)"]
    for index, best in enumerate(summary["best"]):
        start, stop = best["bucket"]
        low, high = best["temperature_interval"]
        saved_low, saved_high = best["saved_interval"]
        by_schedule = [(entry["label"], entry["buckets"][index]["saved"]) for entry in summary["schedules"]]
        schedule = max(by_schedule, key=lambda pair: pair[1], default=None)
        lines.append(f"{f'{start:,}-{stop - 1:,}':>15} {best['documents']:>4} {best['temperature']:>7g} "
                     f"{f'[{low:g}, {high:g}]':>14} {best['nll_at_1']:>9.4f} {best['saved']:>7.4f} "
                     f"{f'[{saved_low:.4f}, {saved_high:.4f}]':>17}  "
                     + (f"{schedule[0]} ({schedule[1]:+.4f})" if schedule else "-"))
    return "\n".join(lines)
