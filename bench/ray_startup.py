"""What Ray costs the tuner before the first document, for W = 1, 2 workers: ray.init, W empty actors, W model
actors, and the resident memory of every Ray process, each W in its own process, Ray started as `tune --workers W`
starts it. Prints a markdown table for bench/RESULTS.md.

    python -m bench.ray_startup [--model bundled] [--workers 1 2]"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository
GB = 1e9


def ray_processes() -> dict[str, list[float]]:
    """RSS in GB of this process and every process it started (Ray's), grouped by what they are."""
    import psutil

    me = psutil.Process()
    groups: dict[str, list[float]] = {"driver": [me.memory_info().rss / GB]}
    for process in me.children(recursive=True):
        try:
            title, rss = " ".join(process.cmdline()), process.memory_info().rss / GB
        except psutil.Error:
            continue
        if "gcs_server" in title:
            kind = "gcs_server"
        elif "raylet" in title and "ray::" not in title:
            kind = "raylet"
        elif title.startswith("ray::DocumentWorker"):
            kind = "DocumentWorker actors"
        elif title.startswith("ray::Empty"):
            kind = "empty actors"
        else:
            kind = "other Ray processes (agents, log monitor, idle workers)"
        groups.setdefault(kind, []).append(rss)
    return groups


class Empty:
    def ready(self) -> int:
        return os.getpid()


def measure(model: str, workers: int) -> dict:
    """One W, in this process: timings and memory (run by main() in a fresh process per W)."""
    import ray

    from model_utils.core.machine import usable_cores
    from model_utils.engine.plugin import load_model
    from model_utils.experiments.fingerprint import model_fingerprint
    from model_utils.experiments.runs.cluster import start_ray
    from model_utils.experiments.runs.pool import start_actors
    from model_utils.experiments.runs.worker import WorkerSettings
    from model_utils.experiments.sweep import SweepSettings

    started = time.perf_counter()
    start_ray(workers, None)
    init_seconds = time.perf_counter() - started
    empty_class = ray.remote(num_cpus=0)(Empty)
    started = time.perf_counter()
    empties = [empty_class.remote() for _ in range(workers)]
    ray.get([actor.ready.remote() for actor in empties])
    empty_seconds = time.perf_counter() - started
    memory_empty = ray_processes()
    for actor in empties:
        ray.kill(actor)
    fingerprint = model_fingerprint(load_model(model), portable=True)  # the driver holds the model too, as in a tune
    threads = max(1, usable_cores() // workers)
    started = time.perf_counter()
    settings = SweepSettings(max_tokens=2048, bucket_size=1024)
    start_actors(WorkerSettings(model=model, sweep=settings, specs=(1.0,), threads=threads, announce=True),
                 count=workers, cpus_each=1, fingerprint=fingerprint)
    worker_seconds = time.perf_counter() - started
    memory = ray_processes()
    ray.shutdown()
    return {"workers": workers, "init_s": init_seconds, "empty_actors_s": empty_seconds,
            "model_actors_s": worker_seconds, "memory_empty": memory_empty, "memory": memory}


def run_one(model: str, workers: int) -> dict:
    command = [sys.executable, "-m", "bench.ray_startup", "--model", model, "--one", str(workers)]
    print(f"  W = {workers} ...", file=sys.stderr, flush=True)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                          env=os.environ | {"PYTHONPATH": str(ROOT)})
    if done.returncode != 0:
        raise SystemExit(f"W = {workers} failed: {' / '.join(done.stderr.strip().splitlines()[-3:])}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(model: str, results: list[dict]) -> str:
    from model_utils.core.machine import usable_cores

    lines = [f"Ray {__import__('ray').__version__} start-up on {usable_cores()} cores, Python "
             f"{platform.python_version()}; DocumentWorker actors load model `{model}`.", "",
             "| W | ray.init s | W empty actors ready s | W model actors ready s | driver GB | gcs_server GB | "
             "raylet GB | other Ray GB | per empty actor GB | per actor GB (model loaded) | all processes GB |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for result in results:
        memory = result["memory"]

        def total(kind: str, memory=memory) -> float:
            return sum(memory.get(kind, []))

        other = sum(sum(values) for kind, values in memory.items() if kind.startswith("other"))
        actors = memory.get("DocumentWorker actors", [])
        per_actor = ", ".join(f"{value:.2f}" for value in actors) or "-"
        per_empty = ", ".join(f"{value:.2f}" for value in result["memory_empty"].get("empty actors", [])) or "-"
        everything = sum(sum(values) for values in memory.values())
        lines.append(f"| {result['workers']} | {result['init_s']:.1f} | {result['empty_actors_s']:.1f} | "
                     f"{result['model_actors_s']:.1f} | {total('driver'):.2f} | {total('gcs_server'):.2f} | "
                     f"{total('raylet'):.2f} | {other:.2f} | {per_empty} | {per_actor} | {everything:.2f} |")
    lines += ["", "RSS counts shared pages (torch's libraries) once per process, so the last column overstates "
              "what the processes use together."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="bundled", help="the model each DocumentWorker loads (default bundled)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], metavar="W")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: measure one W in this process
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.model, args.one)))
        return
    print(table(args.model, [run_one(args.model, workers) for workers in args.workers]))


if __name__ == "__main__":
    main()
