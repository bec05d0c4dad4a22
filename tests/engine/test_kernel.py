"""Both ways the engine computes a layer, the fused attention kernel (engine/kernel/fused_attention.c) and the torch
path (engine/torch_path.py, called directly), against a float64 torch computation of the same attention: outputs,
every row statistic and every distance bin, across the kernel's tile edges (256 queries x 512 keys), grouped-query
heads, per-position multipliers, extreme temperatures, sliding windows, soft caps, ties, a shared batch row and the
untrained distances past a trained length. Both paths are held to the same tolerances (ATOL)."""

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from model_utils import analyze
from model_utils.core.statistics import ROW_FIELDS, bucket_bounds, distance_bins, untrained_bin
from model_utils.engine.kernel.library import ROW_FIELD_COUNT, load_kernel
from model_utils.engine.torch_path import bucket_sums, torch_attention
from tests.support import SAMPLE_TEXT

# Largest difference from float64 of any row's statistic, of both paths (both compute in float32).
ATOL = {"entropy": 2e-4, "normalized_entropy": 3e-5, "sink_mass": 2e-5, "recent_mass": 2e-5, "distant_mass": 2e-5,
        "top_gap": 2e-4, "untrained_mass": 2e-5, "effective_untrained_mass": 2e-5}
# ... and of an output element (plus rtol 1e-4). The torch path's output is PyTorch's float32 SDPA, whose error at
# T = 0.05 reaches 3.0e-5 in these cases (the kernel's 2.0e-5): the model's own attention is no closer there.
OUTPUT_ATOL = {"fused": 2e-5, "torch": 4e-5}


def test_the_tolerances_name_every_row_field():
    assert tuple(ATOL) == ROW_FIELDS


@pytest.fixture(scope="module")
def kernel():
    built = load_kernel()
    assert built is not None, "the fused kernel must build on this machine (gcc is part of the machine image)"
    return built


@dataclass(frozen=True)
class LayerPath:
    name: str  # "fused" or "torch", as Report.kernel says
    attention: Callable  # a layer's attention and bucketed row statistics, FusedKernel.attention's signature


@pytest.fixture(params=["fused", "torch"])
def path(request, kernel) -> LayerPath:
    """The kernel's attention, or the torch path's (torch_row_statistics, torch_output and bucket_sums)."""
    return LayerPath(request.param, kernel.attention if request.param == "fused" else torch_attention)


def reference(query, key, value, multipliers, scaling, q_start, window, sliding, softcap, edges, trained=None):
    """Output [B, n, H, dv] and row statistics [B, H, n - q_start, fields + bins], in float64 from full maps; the
    untrained mass is that of keys 1.. at distance >= `trained`."""
    query, key, value, multipliers = (t.double() for t in (query, key, value, multipliers))
    heads, n = query.shape[1], query.shape[2]
    groups = heads // key.shape[1]
    scores = torch.matmul(query, key.repeat_interleave(groups, dim=1).transpose(-1, -2)) * scaling  # [B, H, n, n]
    if softcap:
        scores = softcap * torch.tanh(scores / softcap)
    logits = scores * multipliers[:, None, :, None]
    positions = torch.arange(n)
    distance = positions[:, None] - positions[None, :]  # query - key
    visible = (distance >= 0) & ((distance < sliding) if sliding else True)
    logits = logits.masked_fill(~visible, -torch.inf)
    weights = torch.softmax(logits, dim=-1)
    output = torch.matmul(weights, value.repeat_interleave(groups, dim=1)).transpose(1, 2)
    rows = weights[:, :, q_start:]
    entropy = -(torch.where(rows > 0, rows * rows.clamp_min(1e-300).log(), 0.0)).sum(-1)
    n_visible = visible[q_start:].sum(-1).double()
    top = logits[:, :, q_start:].topk(2, dim=-1).values
    queries = positions[q_start:, None]
    keys = positions[None, :]
    recent = (keys >= 1) & (keys > queries - window) & (keys <= queries)
    fields = [entropy, torch.where(n_visible > 1, entropy / n_visible.log(), 0.0), rows[..., 0],
              (rows * recent).sum(-1), (rows * ((keys >= 1) & (keys <= queries - window))).sum(-1),
              top[..., 0] - top[..., 1],
              (rows * ((keys >= 1) & (distance[q_start:] >= (trained or n)))).sum(-1)]
    fields.append(fields[-1])  # the effective untrained mass: no distance is remapped here
    bins = [(rows * ((distance[q_start:] >= low) & (distance[q_start:] < high))).sum(-1)
            for low, high in itertools.pairwise(edges)]
    return output, torch.stack(fields + bins, dim=-1)


CASES = [  # n, heads, kv heads, views, sliding window, soft cap, q_start, recent window
    (2, 2, 1, 1, None, None, 1, 1),
    (257, 4, 2, 2, None, None, 1, 8),
    (700, 4, 2, 3, None, None, 32, 32),
    (700, 3, 3, 1, 300, None, 5, 16),
    (600, 4, 1, 2, 7, None, 2, 4),
    (530, 2, 2, 2, None, 5.0, 1, 32),
    (530, 4, 2, 2, 64, 5.0, 100, 300),
    (700, 2, 1, 2, None, None, 3, 100),  # the recent window starts beyond the kernel's NEAR keys (64)
    (1100, 2, 2, 1, 600, None, 1, 200),  # and with a sliding window wider than both
]


@pytest.mark.parametrize(("n", "heads", "kv_heads", "views", "sliding", "softcap", "q_start", "window"), CASES)
def test_both_paths_equal_the_float64_attention(path, n, heads, kv_heads, views, sliding, softcap, q_start,
                                                window):
    generator = torch.Generator().manual_seed(n + heads)
    query = torch.randn(views, heads, n, 16, generator=generator) * 1.5
    key = torch.randn(views, kv_heads, n, 16, generator=generator) * 1.5
    value = torch.randn(views, kv_heads, n, 8, generator=generator)
    # per-position multipliers: a constant view, a schedule-like ramp, and a sharp temperature (T = 0.05; sharper
    # still, float32 rounding of the scores themselves decides near-ties, in any float32 implementation)
    ramp = torch.linspace(0.5, 3.0, n)
    multipliers = torch.stack([torch.full((n,), 1.0), ramp, torch.full((n,), 20.0)])[:views]
    trained = max(2, n // 3)  # not a power of two (an edge of its own) in most cases
    edges = torch.from_numpy(distance_bins(n, trained))
    got_output, got_rows = path.attention(query, key, value, multipliers, 0.25, softcap=softcap, q_start=q_start,
                                          window=window, sliding=sliding, edges=edges, bucket_size=1,
                                          with_output=True, untrained_bin=untrained_bin(edges.numpy(), trained))
    output, rows = reference(query, key, value, multipliers, 0.25, q_start, window, sliding, softcap, edges,
                             trained)
    assert torch.allclose(got_output.double(), output, atol=OUTPUT_ATOL[path.name], rtol=1e-4)
    for index, name in enumerate(ATOL):
        error = (got_rows[..., index] - rows[..., index]).abs().max().item()
        assert error <= ATOL[name], f"{name}: {error}"
    bins = got_rows[..., ROW_FIELD_COUNT:]
    assert (bins - rows[..., ROW_FIELD_COUNT:]).abs().max().item() <= 2e-5
    assert torch.allclose(bins.sum(-1), torch.ones(bins.shape[:-1], dtype=torch.float64), atol=1e-5)


def test_statistics_only_and_a_shared_batch_row_give_the_same_rows(path):
    """Isolated mode passes one batch row for several multiplier rows and asks for no output."""
    generator = torch.Generator().manual_seed(7)
    query, key = torch.randn(1, 4, 300, 16, generator=generator), torch.randn(1, 2, 300, 16, generator=generator)
    value = torch.randn(1, 2, 300, 16, generator=generator)
    multipliers = torch.tensor([[0.5] * 300, [2.0] * 300])
    edges = torch.from_numpy(distance_bins(300))
    shared, rows = path.attention(query, key, value, multipliers, 0.25, softcap=None, q_start=10, window=8,
                                  sliding=None, edges=edges, bucket_size=1, with_output=False)
    assert shared is None
    for view in range(2):
        _, alone = path.attention(query, key, value, multipliers[view : view + 1], 0.25, softcap=None, q_start=10,
                                  window=8, sliding=None, edges=edges, bucket_size=1, with_output=True)
        assert torch.equal(rows[view], alone[0])


def test_a_tie_for_the_top_key_gives_a_gap_of_zero(path):
    """Two keys equal to the best (exact ties in float) count twice: top_ratio 1, as topk(2) gives it."""
    n = 600
    key = torch.randn(1, 1, n, 8, generator=torch.Generator().manual_seed(3))
    key[0, 0, 5] = key[0, 0, 550] = torch.full((8,), 4.0)  # the same vector twice, far apart (different tiles)
    query = torch.ones(1, 1, n, 8)
    edges = torch.from_numpy(distance_bins(n))
    _, rows = path.attention(query, key, key, torch.ones(1, n), 1.0, softcap=None, q_start=1, window=4, sliding=None,
                             edges=edges, bucket_size=1, with_output=False)
    gaps = rows[0, 0, :, 5]  # [query]
    assert torch.all(gaps[550 - 1 :] == 0.0)  # queries that see both copies
    assert torch.all(gaps[5 - 1 : 549] > 0.0)  # queries that see one


def test_the_engine_uses_the_kernel_and_the_torch_path_agrees(kernel, tiny, monkeypatch):
    fused = analyze(tiny, SAMPLE_TEXT, temperatures=[0.5, 1.0, 3.0], window=8, bucket_size=40)
    monkeypatch.setenv("ATTN_KERNEL", "torch")
    plain = analyze(tiny, SAMPLE_TEXT, temperatures=[0.5, 1.0, 3.0], window=8, bucket_size=40)
    assert fused.kernel == "fused" and plain.kernel == "torch"
    for a, b in zip(fused.results, plain.results, strict=True):
        assert a.loss == pytest.approx(b.loss, abs=1e-5)
        for name, values in a.bucket_heads.items():
            np.testing.assert_allclose(values, b.bucket_heads[name], rtol=1e-4, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(a.distance_profile, b.distance_profile, atol=1e-5)


def test_loading_the_kernel_keeps_the_processs_subnormals():
    """Built with -ffast-math, the library must not switch the whole process to flush-to-zero when it is loaded
    (gcc's crtfastmath.o does so if -ffast-math reaches the link line): numpy, torch and hypothesis in the same
    process rely on subnormal numbers. Checked in a fresh process, so nothing loaded before can hide it."""
    import subprocess
    import sys

    probe = ("import sys, numpy as np, torch\n"
             "from model_utils.engine.kernel import load_kernel\n"
             "assert load_kernel() is not None\n"
             "tiny = np.float32(1e-40)\n"
             "print(float(tiny * np.float32(1.0)), float(torch.tensor([1e-40]) * 1.0), 5e-324 * 1.0)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert all(float(value) > 0 for value in out), out


@pytest.mark.parametrize(("n", "q_start", "bucket_size"), [
    (700, 1, None), (700, 1, 1024), (700, 1, 256), (700, 3, 100), (700, 300, 7), (530, 10, 255), (530, 0, 257),
    (1100, 257, 512),
])
def test_both_paths_sum_their_rows_per_bucket(path, n, q_start, bucket_size):
    """Each task adds its rows into segments of its own, which are added up per bucket afterwards: the same sums as
    the rows' (bucket_size 1) summed per bucket, for buckets narrower and wider than a task's block of queries."""
    generator = torch.Generator().manual_seed(n + q_start)
    query, key = torch.randn(2, 3, n, 16, generator=generator), torch.randn(2, 3, n, 16, generator=generator)
    multipliers = torch.stack([torch.full((n,), 0.5), torch.linspace(0.5, 3.0, n)])
    settings = {"softcap": None, "q_start": q_start, "window": 32, "sliding": None,
                "edges": torch.from_numpy(distance_bins(n)), "with_output": False}
    _, rows = path.attention(query, key, key, multipliers, 0.25, bucket_size=1, **settings)
    _, sums = path.attention(query, key, key, multipliers, 0.25, bucket_size=bucket_size, **settings)
    assert sums.shape[2] == len(bucket_bounds(q_start, n, bucket_size))
    assert torch.allclose(sums, bucket_sums(rows, q_start, bucket_size), rtol=1e-12, atol=1e-9)
