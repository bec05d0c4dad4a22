"""The fused kernel's self-test, run once per build in a child process by build.self_test, so that a crash here
cannot take the caller down: `python -m model_utils.engine.kernel.selftest LIBRARY THREADS` loads LIBRARY with every
check of FusedKernel, checks torch's sgemm at the kernel's tile shape, that neither starts a thread beyond torch's
OpenMP pool, and compares the kernel with the torch path on small random inputs (CASES). Prints one JSON line:
passed, reason (one line, empty when passed), seconds, and the worst difference per quantity."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from model_utils.core.statistics import ROW_FIELDS, bucket_bounds, distance_bins, untrained_bin
from model_utils.engine.kernel.build import KernelUnavailableError
from model_utils.engine.kernel.library import ROW_FIELD_COUNT, FusedKernel
from model_utils.engine.torch_path import torch_attention

TILE = (512, 256, 64)  # fused_attention.c's BK keys x BQ queries, at the bundled model's head size
SCALING = 0.25
# Largest difference allowed between the two paths (both float32): of a bucket's mean statistic, a distance bin's
# mass, an output element. A wrong kernel is off by orders of magnitude more; the paths agree to ~1e-6 here.
TOLERANCE = {"entropy": 1e-3, "top_gap": 1e-3, "bins": 1e-4, "output": 1e-4} | {
    name: 1e-4 for name in ROW_FIELDS if name not in ("entropy", "top_gap")}


@dataclass(frozen=True, kw_only=True)
class Case:
    """One comparison. shared: one batch row for every view (isolated mode), the statistics without the output,
    then the output at m = 1."""

    name: str
    n: int
    heads: int
    kv_heads: int
    views: int
    shared: bool = False
    sliding: int | None = None
    softcap: float | None = None
    q_start: int = 1
    window: int = 32
    bucket_size: int | None = None
    trained: int | None = None


CASES = (
    Case(name="grouped-query heads across the tile edges, per-position multipliers, buckets, untrained distances",
         n=600, heads=4, kv_heads=2, views=2, q_start=3, window=16, bucket_size=128, trained=200),
    Case(name="a sliding window wider than a query block, grouped-query heads", n=700, heads=4, kv_heads=2, views=2,
         sliding=300, window=100, bucket_size=256),
    Case(name="a sliding window and a soft cap, isolated views on a shared batch row", n=530, heads=4, kv_heads=1,
         views=2, shared=True, sliding=100, softcap=5.0, q_start=2),
    Case(name="two tokens", n=2, heads=2, kv_heads=1, views=1, window=1),
)


def inputs(case: Case) -> dict:
    generator = torch.Generator().manual_seed(case.n)
    batch = 1 if case.shared else case.views
    query = torch.randn(batch, case.heads, case.n, 16, generator=generator) * 1.5
    key = torch.randn(batch, case.kv_heads, case.n, 16, generator=generator) * 1.5
    value = torch.randn(batch, case.kv_heads, case.n, 8, generator=generator)
    ramp = torch.linspace(0.5, 2.0, case.n)  # a schedule's per-position multipliers, and a constant 1 / T
    multipliers = torch.stack([ramp, torch.full((case.n,), 1.5)])[: case.views]
    edges = torch.from_numpy(distance_bins(case.n, case.trained))
    return {"query": query, "key": key, "value": value, "multipliers": multipliers,
            "propagated": torch.ones(1, case.n) if case.shared else multipliers,  # the output's multipliers
            "settings": {"softcap": case.softcap, "q_start": case.q_start, "window": case.window,
                         "sliding": case.sliding, "edges": edges,
                         "untrained_bin": untrained_bin(edges.numpy(), case.trained)}}


def by_path(attention, case: Case, given: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """Output [B, n, H, dv] and bucket sums from `attention` (FusedKernel.attention, or the torch path's), as
    plugin.probed_attention asks for them: in isolated mode the statistics first, then the output at m = 1."""
    arguments = (given["query"], given["key"], given["value"])
    output, sums = attention(*arguments, given["multipliers"], SCALING, with_output=not case.shared,
                             bucket_size=case.bucket_size, **given["settings"])
    if output is None:
        output, _ = attention(*arguments, given["propagated"], SCALING, with_output=True,
                              bucket_size=case.bucket_size, **given["settings"])
    return output, sums


def differences(case: Case, kernel: tuple, torch_path: tuple) -> dict[str, float]:
    """Largest difference per quantity: bucket means of each row field, the distance bins, the output."""
    counts = torch.tensor([stop - start for start, stop in bucket_bounds(case.q_start, case.n, case.bucket_size)],
                          dtype=torch.float64)[:, None]
    means = [sums / counts for sums in (kernel[1], torch_path[1])]
    found = {name: (means[0][..., i] - means[1][..., i]).abs().max().item() for i, name in enumerate(ROW_FIELDS)}
    found["bins"] = (means[0][..., ROW_FIELD_COUNT:] - means[1][..., ROW_FIELD_COUNT:]).abs().max().item()
    found["output"] = (kernel[0] - torch_path[0]).abs().max().item()
    return found


def _threads() -> int | None:
    task = Path("/proc/self/task")
    return len(os.listdir(task)) if task.is_dir() else None


def run(library: Path, threads: int) -> dict:
    """The self-test's verdict on `library` (raises KernelUnavailableError where a load check refuses it)."""
    torch.set_num_threads(threads)
    torch.ones(1 << 22).add_(1.0)  # torch's OpenMP pool of `threads` threads, made before the kernel's first region
    given = [inputs(case) for case in CASES]
    expected = [by_path(torch_attention, case, case_inputs) for case, case_inputs in zip(CASES, given, strict=True)]
    before = _threads()
    kernel = FusedKernel(library)  # the layout, the known product and the OpenMP runtime's address
    kernel.check_gemm(TILE, threads)
    got = [by_path(kernel.attention, case, case_inputs) for case, case_inputs in zip(CASES, given, strict=True)]
    after = _threads()
    if before is not None and after > before:  # a second OpenMP runtime, or a BLAS with a pool of its own
        return {"passed": False, "reason": f"the kernel and its sgemm_ started {after - before} thread(s) beyond "
                                           "torch's pool (two thread pools)"}
    worst: dict[str, float] = {}
    for case, mine, theirs in zip(CASES, got, expected, strict=True):
        for name, difference in differences(case, mine, theirs).items():
            if not difference <= TOLERANCE[name]:  # also catches NaN
                return {"passed": False, "reason": f"it failed its self-test: {name} differs from the torch path by "
                                                   f"{difference:.3g} (allowed {TOLERANCE[name]:g}) in '{case.name}'"}
            worst[name] = max(worst.get(name, 0.0), difference)
    return {"passed": True, "reason": "", "worst": worst}


def main() -> None:
    started = time.perf_counter()
    library, threads = Path(sys.argv[1]), int(sys.argv[2])
    try:
        verdict = run(library, threads)
    except KernelUnavailableError as error:
        verdict = {"passed": False, "reason": str(error)}
    print(json.dumps(verdict | {"seconds": time.perf_counter() - started}), flush=True)


if __name__ == "__main__":
    main()
