"""`make bench-gpu`: the engine on a CUDA GPU against the same engine on the CPU (its fused kernel), on the tiny and
the bundled model: seconds per analysis and their ratio, the report's path, and how far the GPU's loss and
statistics are from the CPU's, with the model in float32, bfloat16 and float16 on the GPU. Where torch sees no GPU,
one line says so and the exit status is 0. Prints a table; writes nothing.

    python -m bench.gpu [--models tiny-random bundled] [--sizes 512 2048] [--device cuda]

`--device cpu` measures the CPU's torch path (ATTN_KERNEL=torch) in the GPU's place: the code a GPU runs, on the
machine at hand, a dry run of this script where there is no GPU.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time
from dataclasses import replace
from unittest import mock

import numpy as np
import torch

from bench.cases import TEMPERATURES, WINDOW, fixed_text

DTYPES = (torch.float32, torch.bfloat16, torch.float16)
COMPARED = ("entropy", "normalized_entropy", "sink_mass", "recent_mass", "distant_mass", "untrained_mass")
REPEATS = 3


def needs_a_gpu(device: str) -> str | None:
    """The one line to print where `device` is a GPU torch cannot see, else None."""
    if device.startswith("cuda") and not torch.cuda.is_available():
        return (f"bench/gpu.py needs a CUDA GPU: torch {torch.__version__} sees none here "
                "(torch.cuda.is_available() is False), so nothing was measured")
    return None


def timed_analysis(loaded, n_tokens: int, device: str):
    """The report of the bench text's first n_tokens and the median seconds of REPEATS runs after a warm-up (each
    run ends with its statistics on the host: Probe.move_to_host waits for the device)."""
    from model_utils import analyze

    def once():
        report = analyze(loaded, fixed_text(), temperatures=list(TEMPERATURES), window=WINDOW, max_tokens=n_tokens,
                         beyond_trained=n_tokens > loaded.max_positions)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        return report

    report = once()
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        once()
        times.append(time.perf_counter() - started)
    return report, statistics.median(times)


def differences(report, reference) -> tuple[float, float]:
    """Largest |loss difference| over the temperatures and largest |statistic difference| over every layer and
    head, of `report` from `reference`."""
    pairs = list(zip(report.results, reference.results, strict=True))
    loss = max(abs(a.loss - b.loss) for a, b in pairs)
    stats = max(float(np.max(np.abs(a.heads[name] - b.heads[name]))) for a, b in pairs for name in COMPARED)
    return loss, stats


def compare(name: str, n_tokens: int, device: str) -> list[str]:
    """Table rows for one model and length: the CPU engine, then the device in each dtype."""
    from model_utils import load_model

    cpu = load_model(name)
    n_tokens = min(n_tokens, cpu.max_positions) if cpu.learned_positions else n_tokens
    environment = {"ATTN_KERNEL": "torch"} if device == "cpu" else {}
    with mock.patch.dict(os.environ, {"ATTN_KERNEL": "fused"}):
        reference, cpu_seconds = timed_analysis(cpu, n_tokens, "cpu")
    rows = [f"| {name} | {reference.n_tokens:,} | cpu, float32 | {reference.kernel} | {cpu_seconds:.2f} | 1.00x | "
            "- | - |"]
    on_device = load_model(name, device=device)
    for dtype in DTYPES:
        loaded = on_device if dtype == torch.float32 else replace(on_device,
                                                                  model=copy.deepcopy(on_device.model).to(dtype))
        with mock.patch.dict(os.environ, environment):
            report, seconds = timed_analysis(loaded, n_tokens, device)
        loss, stats = differences(report, reference)
        rows.append(f"| {name} | {report.n_tokens:,} | {device}, {str(dtype).removeprefix('torch.')} | "
                    f"{report.kernel} | {seconds:.2f} | {seconds / cpu_seconds:.2f}x | {loss:.1e} | {stats:.1e} |")
        del loaded
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gpu", description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["tiny-random", "bundled"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[512, 2048])
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args(argv)
    missing = needs_a_gpu(args.device)
    if missing:
        print(missing)
        return 0
    where = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else "the CPU's torch path"
    print(f"The engine on {args.device} ({where}) against the CPU engine, {len(TEMPERATURES)} temperatures, "
          f"in-model; seconds are medians of {REPEATS} runs after a warm-up; differences are the largest over the "
          "temperatures (loss, nats per token) and over every layer and head (statistics), from the CPU's float32.")
    print()
    print("| model | tokens | device, dtype | path | s | / CPU | loss - CPU's | statistics - CPU's |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    for name in args.models:
        for n_tokens in args.sizes:
            for row in compare(name, n_tokens, args.device):
                print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
