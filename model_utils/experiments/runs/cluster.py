"""Ray for a long run: a local Ray for W workers, or a cluster's address joined with bounded waits, so that a wrong
or unreachable address is one usage error in seconds, not ten minutes of Ray's own retries."""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path

from model_utils.experiments.runs.errors import RunUsageError

OBJECT_STORE_BYTES = 100 * 1024**2  # local Ray: a document's result is a few kB, the default store is 30% of RAM
CONNECT_SECONDS = 5.0  # TCP check of --ray-address before Ray's own connection attempt (minutes, unbounded)
# Ray's own connection to a cluster address retries 20 times with a 30 s timeout each (ray/_private/node.py,
# _init_gcs_client; py_gcs_connect_timeout_s): over ten minutes. These bound it to about 16 s when the port answers
# but is no Ray; they are read when ray is imported, so they are set before (a user's own values win).
BOUNDED_CONNECT = {"RAY_gcs_server_port_wait_time_s": "1", "RAY_py_gcs_connect_timeout_s": "5"}
WORKER_NICENESS = "RAY_worker_niceness"  # Ray's own setting (ray_constants.RAY_WORKER_NICENESS), read at start
ROOT = Path(__file__).resolve().parents[3]  # the repository: local Ray workers import model_utils from here


def parse_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "://" in address:
        raise RunUsageError(f"--ray-address {address!r} is not HOST:PORT; give the address `ray start --head` "
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
        raise RunUsageError(f"cannot reach a Ray cluster at {address} ({reason}); start one with `ray start "
                            "--head` and give the address it prints, or leave out --ray-address") from None


def start_ray(workers: int, address: str | None) -> bool:
    """Start a local Ray for `workers` actors (W CPUs, no dashboard, a bounded object store), or join the cluster
    at `address`. Returns whether this call connected (and so should shut down); False when the caller already
    has a local Ray running (a test module that starts it once)."""
    if address is not None:
        for key, value in BOUNDED_CONNECT.items():  # before Ray is imported: it reads them once
            os.environ.setdefault(key, value)
        check_reachable(address)
    else:  # the actors are the run's work: at Ray's default niceness (15) any other process on the machine starves
        os.environ.setdefault(WORKER_NICENESS, "0")  # them (a 4,096-token pass took 162 s instead of 25)
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
        raise RunUsageError(f"cannot join the Ray cluster at {address}: {reason}") from None
    return True
