"""The tuner on Ray: a local Ray for W workers or a cluster's address, DocumentWorker actors checked to hold the
driver's model, and documents handed to them one at a time. A worker that dies is restarted by Ray and its document
run again; the driver receives one result per document."""

from __future__ import annotations

import contextlib
import os
import socket
from collections import deque
from collections.abc import Callable
from pathlib import Path

from model_utils.experiments.corpus import Document
from model_utils.experiments.tune.errors import TuneError, TuneUsageError
from model_utils.experiments.tune.worker import DocumentWorker

OBJECT_STORE_BYTES = 100 * 1024**2  # local Ray: a document's result is a few kB, the default store is 30% of RAM
MAX_RESTARTS = 2  # a worker that dies is restarted this often (then its document fails, the run ends, rows stay)
MAX_TASK_RETRIES = 2  # a document whose worker died is re-run on the restarted worker this often
CONNECT_SECONDS = 5.0  # TCP check of --ray-address before Ray's own connection attempt (minutes, unbounded)
# Ray's own connection to a cluster address retries 20 times with a 30 s timeout each (ray/_private/node.py,
# _init_gcs_client; py_gcs_connect_timeout_s): over ten minutes. These bound it to about 16 s when the port answers
# but is no Ray; they are read when ray is imported, so they are set before (a user's own values win).
BOUNDED_CONNECT = {"RAY_gcs_server_port_wait_time_s": "1", "RAY_py_gcs_connect_timeout_s": "5"}
WORKER_START_SECONDS = 900  # actors that cannot start (a cluster without free CPUs) fail instead of waiting
ROOT = Path(__file__).resolve().parents[3]  # the repository: local Ray workers import model_utils from here


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
                 device: str | None = None, keep_passes: bool = False) -> list:
    """`count` DocumentWorker actors, each with the model loaded, checked to hold the same model as the driver
    (`fingerprint`: the driver's portable fingerprint, model_fingerprints)."""
    import ray

    actor_class = ray.remote(max_restarts=MAX_RESTARTS, max_task_retries=MAX_TASK_RETRIES)(DocumentWorker)
    gpus = 1 if device and device.startswith("cuda") else 0  # Ray places each actor on a node with a free GPU
    actors = [actor_class.options(num_cpus=cpus_each, num_gpus=gpus).remote(*worker_args, threads=threads,
                                                                           announce=True, device=device,
                                                                           keep_passes=keep_passes)
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


