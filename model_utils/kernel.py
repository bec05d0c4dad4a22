"""The fused attention-and-statistics kernel (fused_attention.c): built once per machine, loaded with ctypes.

Why a C kernel: the statistics need every attention logit, and computing them with torch operations meant a
second pass over the scores after SDPA's own, re-reading each [views, heads, chunk, keys] block eight or more
times (bench/RESULTS.md). The kernel computes the layer's attention output and the statistics of every row from
one pass over the keys, flash-attention style, with torch's own BLAS (the `sgemm_` that libtorch_cpu exports)
for the two matrix products and torch's OpenMP runtime for the threads.

The shared library is compiled by the system C compiler on first use (about a second) into the cache folder,
keyed by the source, the flags, the compiler and the CPU, and loaded from there afterwards. Where it cannot be
built or loaded (no compiler, another BLAS), or where $ATTN_KERNEL=torch, `load_kernel()` returns None and the
engine computes the same numbers with torch operations (capture.py), only slower.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
import warnings
from pathlib import Path

import torch

from model_utils.metrics import bucket_bounds

SOURCE = Path(__file__).with_name("fused_attention.c")
FLAGS = ("-O3", "-march=native", "-ffast-math", "-fopenmp", "-fPIC")
# Linked apart from the compile: `-ffast-math` on the link line also links gcc's crtfastmath.o, whose constructor
# sets flush-to-zero and denormals-are-zero for the whole process when the library is loaded, and every later
# float operation in Python, numpy and torch would then lose its subnormals.
LINK_FLAGS = ("-shared", "-fopenmp")
ROW_FIELD_COUNT = 6  # entropy, normalized entropy, sink, recent, distant, top gap; the distance bins follow
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
                ("bucket_size", _int), ("n_buckets", _int), ("stats", _pointer), ("gemm", _pointer), ("threads", _int)]


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
                  edges: torch.Tensor, bucket_size: int | None, with_output: bool
                  ) -> tuple[torch.Tensor | None, torch.Tensor]:
        """Attention output [B, n, H, dv] (None unless `with_output`) and the row statistics of queries
        q_start..n-1 summed per query-position bucket (capture.bucket_bounds; bucket_size 1 gives every row):
        [B, H, buckets, ROW_FIELD_COUNT + bins] (float64).

        query [B or 1, H, n, d], key / value [B or 1, KV, n, d]: a batch of 1 is shared by every multiplier row
        (isolated mode); multipliers [B, n] float32; edges int64 distance-bin edges starting at 0.
        """
        batch, heads, n, dim = multipliers.shape[0], query.shape[1], query.shape[2], query.shape[3]
        query, key, value = (_rows_contiguous(t) for t in (query, key, value))
        n_buckets = len(bucket_bounds(q_start, n, bucket_size))
        stats = torch.empty(batch, heads, n_buckets, ROW_FIELD_COUNT + len(edges) - 1, dtype=torch.float64)
        out = torch.empty(batch, n, heads, value.shape[-1], dtype=torch.float32) if with_output else None
        multipliers = multipliers.to(torch.float32).contiguous()
        job = Job(query.data_ptr(), key.data_ptr(), value.data_ptr(),
                  *_strides(query), *_strides(key), *_strides(value),
                  out.data_ptr() if out is not None else None,
                  *((out.stride(0), out.stride(2), out.stride(1)) if out is not None else (0, 0, 0)),
                  multipliers.data_ptr(), float(scaling), float(softcap or 0.0),
                  batch, heads, key.shape[1], n, dim, value.shape[-1], q_start, window, int(sliding or 0),
                  edges.data_ptr(), len(edges), int(bucket_size or 0), n_buckets, stats.data_ptr(), self._gemm,
                  torch.get_num_threads())
        status = self._run(ctypes.byref(job))
        if status != 0:
            raise MemoryError("the fused attention kernel could not allocate its buffers") if status == -1 else \
                ValueError(f"the fused attention kernel refused its arguments (status {status})")
        return out, stats


def _rows_contiguous(tensor: torch.Tensor) -> torch.Tensor:
    """float32 with a contiguous last axis (any other strides are passed to the kernel as they are)."""
    tensor = tensor.to(torch.float32)
    return tensor if tensor.stride(-1) == 1 else tensor.contiguous()


def _strides(tensor: torch.Tensor) -> tuple[int, int, int]:
    """(batch, head, position) strides; a batch of one gets stride 0, so every multiplier row reads it."""
    return (0 if tensor.shape[0] == 1 else tensor.stride(0)), tensor.stride(1), tensor.stride(2)


def _torch_gemm() -> int:
    """Address of the Fortran `sgemm_` that libtorch_cpu exports (MKL on x86 builds)."""
    library = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"))
    return ctypes.cast(library.sgemm_, ctypes.c_void_p).value


def _compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def _build_key(compiler: str) -> str:
    """What the built library depends on: the source, the flags, the compiler's version and this CPU."""
    version = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=False).stdout
    cpu = ""
    if Path("/proc/cpuinfo").is_file():
        cpu = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    parts = [SOURCE.read_text(), " ".join(FLAGS), " ".join(LINK_FLAGS), version, platform.machine(), cpu]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def build(folder: Path) -> Path:
    """Compile the kernel into `folder` (once: an existing build with the same key is reused) and return its path.
    Raises OSError or subprocess.CalledProcessError when it cannot be built."""
    compiler = _compiler()
    if compiler is None:
        raise OSError("no C compiler found (set $CC, or install gcc)")
    target = folder / f"fused-attention-{_build_key(compiler)}.so"
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as staging:
        built, compiled = Path(staging) / target.name, Path(staging) / "fused_attention.o"
        subprocess.run([compiler, *FLAGS, "-c", "-o", str(compiled), str(SOURCE)], check=True, capture_output=True,
                       text=True)
        subprocess.run([compiler, *LINK_FLAGS, "-o", str(built), str(compiled), "-lm"], check=True,
                       capture_output=True, text=True)
        os.replace(built, target)  # atomic: a concurrent build of the same key writes the same bytes
    return target


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
    from model_utils.loading import cache_root

    try:
        path = build(cache_root() / "kernels")
        return FusedKernel(ctypes.CDLL(str(path)), _torch_gemm(), path)
    except (OSError, AttributeError, subprocess.CalledProcessError) as error:
        detail = (getattr(error, "stderr", "") or str(error)).strip()
        reason = detail.splitlines()[0] if detail else type(error).__name__
        warnings.warn(f"the fused attention kernel is unavailable ({reason}); using the slower torch path",
                      RuntimeWarning, stacklevel=3)
        return None
