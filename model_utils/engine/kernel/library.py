"""The fused attention-and-statistics kernel (fused_attention.c), loaded with ctypes: one call per layer computes the
attention output and every row's statistics, summed per query-position bucket. Where it cannot be built or loaded,
or where $ATTN_KERNEL=torch, `load_kernel()` returns None and the engine takes its torch path. Why a C kernel, and
how it gets its matrix products: docs/ARCHITECTURE.md."""

from __future__ import annotations

import ctypes
import os
import subprocess
import threading
import warnings
from pathlib import Path

import torch

from model_utils.core.paths import cache_root
from model_utils.core.statistics import ROW_FIELDS, bucket_bounds
from model_utils.engine.kernel.build import build

ROW_FIELD_COUNT = len(ROW_FIELDS)  # the per-row quantities, in the C enum's order; the distance bins follow
MAX_BINS = 48  # as in the C source: enough for contexts up to 2^46 tokens

_int = ctypes.c_int64
_pointer = ctypes.c_void_p


class Job(ctypes.Structure):
    """Mirror of the C `Job` struct: one layer's call."""

    _fields_ = [("q", _pointer), ("k", _pointer), ("v", _pointer),
                ("q_sb", _int), ("q_sh", _int), ("q_sn", _int), ("k_sb", _int), ("k_sh", _int), ("k_sn", _int),
                ("v_sb", _int), ("v_sh", _int), ("v_sn", _int),
                ("out", _pointer), ("o_sb", _int), ("o_sh", _int), ("o_sn", _int),
                ("multipliers", _pointer), ("scaling", ctypes.c_double), ("softcap", ctypes.c_double),
                ("batch", _int), ("heads", _int), ("kv_heads", _int), ("n", _int), ("d", _int), ("dv", _int),
                ("q_start", _int), ("window", _int), ("sliding", _int), ("edges", _pointer), ("n_edges", _int),
                ("untrained_bin", _int), ("bucket_size", _int), ("n_buckets", _int), ("stats", _pointer),
                ("gemm", _pointer), ("threads", _int)]


class FusedKernel:
    """The loaded library and torch's sgemm. Stateless between calls: safe to share between threads."""

    def __init__(self, library: ctypes.CDLL, gemm: int, path: Path):
        self._run = library.fused_attention
        self._run.argtypes = [ctypes.POINTER(Job)]
        self._run.restype = ctypes.c_int
        self._gemm = gemm
        self.path = path

    def attention(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, multipliers: torch.Tensor,
                  scaling: float, *, softcap: float | None, q_start: int, window: int, sliding: int | None,
                  edges: torch.Tensor, bucket_size: int | None, with_output: bool, untrained_bin: int | None = None
                  ) -> tuple[torch.Tensor | None, torch.Tensor]:
        """Attention output [B, n, H, dv] (None unless `with_output`) and the row statistics of queries
        q_start..n-1 summed per query-position bucket (capture.bucket_bounds; bucket_size 1 gives every row):
        [B, H, buckets, ROW_FIELD_COUNT + bins] (float64).

        query [B or 1, H, n, d], key / value [B or 1, KV, n, d]: a batch of 1 is shared by every multiplier row
        (isolated mode); multipliers [B, n] float32; edges int64 distance-bin edges starting at 0; the bins from
        `untrained_bin` on lie at distances >= the trained length (core.statistics.untrained_bin; None: none do).
        """
        batch, heads, n, dim = multipliers.shape[0], query.shape[1], query.shape[2], query.shape[3]
        query, key, value = (_rows_contiguous(t) for t in (query, key, value))
        n_buckets = len(bucket_bounds(q_start, n, bucket_size))
        stats = torch.empty(batch, heads, n_buckets, ROW_FIELD_COUNT + len(edges) - 1, dtype=torch.float64)
        out = torch.empty(batch, n, heads, value.shape[-1], dtype=torch.float32) if with_output else None
        multipliers = multipliers.to(torch.float32).contiguous()
        out_strides = (out.stride(0), out.stride(2), out.stride(1)) if out is not None else (0, 0, 0)
        job = Job(q=query.data_ptr(), k=key.data_ptr(), v=value.data_ptr(),
                  **_named_strides("q", query), **_named_strides("k", key), **_named_strides("v", value),
                  out=out.data_ptr() if out is not None else None,
                  **dict(zip(("o_sb", "o_sh", "o_sn"), out_strides, strict=True)),
                  multipliers=multipliers.data_ptr(), scaling=float(scaling), softcap=float(softcap or 0.0),
                  batch=batch, heads=heads, kv_heads=key.shape[1], n=n, d=dim, dv=value.shape[-1],
                  q_start=q_start, window=window, sliding=int(sliding or 0), edges=edges.data_ptr(),
                  n_edges=len(edges), untrained_bin=len(edges) - 1 if untrained_bin is None else untrained_bin,
                  bucket_size=int(bucket_size or 0),
                  n_buckets=n_buckets,
                  stats=stats.data_ptr(), gemm=self._gemm, threads=torch.get_num_threads())
        status = self._run(ctypes.byref(job))
        if status != 0:
            raise MemoryError("the fused attention kernel could not allocate its buffers") if status == -1 else \
                ValueError(f"the fused attention kernel refused its arguments (status {status})")
        return out, stats


def _rows_contiguous(tensor: torch.Tensor) -> torch.Tensor:
    """float32 with a contiguous last axis (any other strides are passed to the kernel as they are)."""
    tensor = tensor.to(torch.float32)
    return tensor if tensor.stride(-1) == 1 else tensor.contiguous()


def _named_strides(prefix: str, tensor: torch.Tensor) -> dict[str, int]:
    """The Job's (batch, head, position) strides of `tensor`; a batch of one gets stride 0, so every multiplier row
    reads it."""
    strides = (0 if tensor.shape[0] == 1 else tensor.stride(0)), tensor.stride(1), tensor.stride(2)
    return dict(zip((f"{prefix}_sb", f"{prefix}_sh", f"{prefix}_sn"), strides, strict=True))


def _torch_gemm() -> int:
    """Address of the Fortran `sgemm_` that libtorch_cpu exports (MKL on x86 builds)."""
    library = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"))
    return ctypes.cast(library.sgemm_, ctypes.c_void_p).value


_lock = threading.Lock()
_loaded: dict[str, FusedKernel | None] = {}


def load_kernel() -> FusedKernel | None:
    """The fused kernel, built on first use; None when it is switched off or cannot be had (see the module doc)."""
    if os.environ.get("ATTN_KERNEL", "fused") == "torch":
        return None
    with _lock:
        if "kernel" not in _loaded:
            _loaded["kernel"] = _load()
        return _loaded["kernel"]


def _load() -> FusedKernel | None:
    try:
        path = build(cache_root() / "kernels")
        return FusedKernel(ctypes.CDLL(str(path)), _torch_gemm(), path)
    except (OSError, AttributeError, subprocess.CalledProcessError) as error:
        detail = (getattr(error, "stderr", "") or str(error)).strip()
        reason = detail.splitlines()[0] if detail else type(error).__name__
        warnings.warn(f"the fused attention kernel is unavailable ({reason}); using the slower torch path",
                      RuntimeWarning, stacklevel=3)
        return None
