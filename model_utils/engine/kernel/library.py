"""The fused attention-and-statistics kernel (fused_attention.c), loaded with ctypes and checked before its first
call: one call per layer computes the attention output and every row's statistics, summed per query-position
bucket. Loading refuses a library whose Job struct differs from the ctypes mirror here, whose sgemm (torch's own,
found by name in libtorch_cpu) gets a known product wrong, or whose OpenMP runtime is not torch's; `load_kernel()`
then logs one line saying why and returns None, and the engine takes its torch path (as it does where the kernel
cannot be built, failed its self-test, or $ATTN_KERNEL=torch). Why, and how each check works: docs/KERNEL.md."""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from pathlib import Path

import torch

from model_utils.core.paths import cache_root
from model_utils.core.statistics import ROW_FIELDS, bucket_bounds
from model_utils.engine.kernel.build import KernelUnavailableError, built_library

ROW_FIELD_COUNT = len(ROW_FIELDS)  # the per-row quantities, in the C enum's order; the distance bins follow
MAX_BINS = 48  # as in the C source: enough for contexts up to 2^46 tokens
CHECK_SHAPE = (7, 5, 3)  # keys, queries, dimensions of the product checked at every load

log = logging.getLogger(__name__)
_int = ctypes.c_int64
_pointer = ctypes.c_void_p


class Job(ctypes.Structure):
    """Mirror of the C `Job` struct: one layer's call. check_layout compares it with the library's own."""

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
    """The loaded library, checked (check_layout, check_gemm, check_openmp), and torch's sgemm. Stateless between
    calls: safe to share between threads. Raises KernelUnavailableError when a check fails."""

    def __init__(self, path: Path):
        try:
            library = ctypes.CDLL(str(path))
        except OSError as error:
            raise KernelUnavailableError(f"it could not be loaded ({error})") from None
        check_layout(library)
        self._gemm = torch_gemm()
        check_gemm(library, self._gemm, CHECK_SHAPE, torch.get_num_threads())
        check_openmp(library)
        self._library = library
        self._run = library.fused_attention
        self._run.argtypes = [ctypes.POINTER(Job)]
        self._run.restype = ctypes.c_int
        self.path = path

    def attention(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, multipliers: torch.Tensor,
                  scaling: float, *, softcap: float | None, q_start: int, window: int, sliding: int | None,
                  edges: torch.Tensor, bucket_size: int | None, with_output: bool, untrained_bin: int | None = None
                  ) -> tuple[torch.Tensor | None, torch.Tensor]:
        """Attention output [B, n, H, dv] (None unless `with_output`) and the row statistics of queries
        q_start..n-1 summed per query-position bucket (core.statistics.bucket_bounds; bucket_size 1 gives every row):
        [B, H, buckets, ROW_FIELD_COUNT + bins] (float64).

        query [B or 1, H, n, d], key / value [B or 1, KV, n, d] on the CPU, any float dtype (computed in float32):
        a batch of 1 is shared by every multiplier row (isolated mode); multipliers [B, n]; edges int64
        distance-bin edges starting at 0; the bins from `untrained_bin` on lie at distances >= the trained length
        (core.statistics.untrained_bin; None: none do).
        """
        batch, heads, n, dim = multipliers.shape[0], query.shape[1], query.shape[2], query.shape[3]
        query, key, value = (_rows_contiguous(t) for t in (query, key, value))
        n_buckets = len(bucket_bounds(q_start, n, bucket_size))
        stats = torch.empty(batch, heads, n_buckets, ROW_FIELD_COUNT + len(edges) - 1, dtype=torch.float64)
        out = torch.empty(batch, n, heads, value.shape[-1], dtype=torch.float32) if with_output else None
        multipliers = multipliers.to(torch.float32).contiguous()
        edges = edges.to(torch.int64).contiguous()
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

    def check_gemm(self, shape: tuple[int, int, int], threads: int) -> None:
        """check_gemm on this library and its sgemm (the self-test runs it at the kernel's own tile shape)."""
        check_gemm(self._library, self._gemm, shape, threads)


def _rows_contiguous(tensor: torch.Tensor) -> torch.Tensor:
    """float32 with a contiguous last axis (any other strides are passed to the kernel as they are)."""
    tensor = tensor.to(torch.float32)
    return tensor if tensor.stride(-1) == 1 else tensor.contiguous()


def _named_strides(prefix: str, tensor: torch.Tensor) -> dict[str, int]:
    """The Job's (batch, head, position) strides of `tensor`; a batch of one gets stride 0, so every multiplier row
    reads it."""
    strides = (0 if tensor.shape[0] == 1 else tensor.stride(0)), tensor.stride(1), tensor.stride(2)
    return dict(zip((f"{prefix}_sb", f"{prefix}_sh", f"{prefix}_sn"), strides, strict=True))


def _exported(library: ctypes.CDLL, name: str, restype, *argtypes):
    try:
        function = getattr(library, name)
    except AttributeError:
        raise KernelUnavailableError(f"it does not export {name}") from None
    function.restype, function.argtypes = restype, list(argtypes)
    return function


def check_layout(library: ctypes.CDLL) -> None:
    """Refuse a library whose Job is not the ctypes mirror's (size; every field's name, offset and size, in order)
    or whose row fields and bins differ from core.statistics.ROW_FIELDS and MAX_BINS."""
    size = _exported(library, "fused_attention_job_size", _int)()
    count = _exported(library, "fused_attention_job_fields", _int)()
    field = _exported(library, "fused_attention_job_field", ctypes.c_char_p, _int, ctypes.POINTER(_int),
                      ctypes.POINTER(_int))
    offset, width = _int(), _int()
    in_c = [(field(i, ctypes.byref(offset), ctypes.byref(width)).decode(), offset.value, width.value)
            for i in range(count)]
    mirror = [(name, getattr(Job, name).offset, getattr(Job, name).size) for name, _ in Job._fields_]
    if size != ctypes.sizeof(Job) or in_c != mirror:
        first = next(i for i in range(max(len(in_c), len(mirror)) + 1) if i >= len(in_c) or i >= len(mirror)
                     or in_c[i] != mirror[i])
        shown = [layout[first] if first < len(layout) else "nothing" for layout in (in_c, mirror)]
        raise KernelUnavailableError(f"its Job struct differs from the ctypes mirror ({size} against "
                                     f"{ctypes.sizeof(Job)} bytes; field {first}: {shown[0]} in C, {shown[1]} in "
                                     "Python)")
    row_fields = _exported(library, "fused_attention_row_fields", _int)()
    max_bins = _exported(library, "fused_attention_max_bins", _int)()
    if (row_fields, max_bins) != (ROW_FIELD_COUNT, MAX_BINS):
        raise KernelUnavailableError(f"it computes {row_fields} row fields and at most {max_bins} bins, the engine "
                                     f"reads {ROW_FIELD_COUNT} and {MAX_BINS}")


def _torch_cpu() -> ctypes.CDLL:
    """torch's CPU library, whose symbol lookup also searches the libraries it depends on."""
    folder = Path(torch.__file__).parent / "lib"
    found = sorted(folder.glob("libtorch_cpu.*"))
    if not found:
        raise KernelUnavailableError(f"torch has no libtorch_cpu library in {folder}")
    return ctypes.CDLL(str(found[0]))


def torch_gemm() -> int:
    """Address of the Fortran `sgemm_` that torch's CPU library resolves: the BLAS torch's own float32 products run
    on (MKL, linked in statically, on the x86 Linux wheels)."""
    try:
        return ctypes.cast(_torch_cpu().sgemm_, ctypes.c_void_p).value
    except AttributeError:
        raise KernelUnavailableError("torch's CPU library exports no sgemm_ (a build without a Fortran BLAS)") \
            from None


def check_gemm(library: ctypes.CDLL, gemm: int, shape: tuple[int, int, int], threads: int) -> None:
    """Refuse an sgemm that gets the kernel's two products wrong on an exact integer check (fused_attention.c)."""
    check = _exported(library, "fused_attention_check_gemm", _int, _pointer, _int, _int, _int, _int)
    wrong = check(gemm, *shape, threads)
    if wrong != 0:
        what = "could not allocate its check" if wrong < 0 else f"gets {wrong} entries of a known product wrong"
        keys, queries, dim = shape
        raise KernelUnavailableError(f"the sgemm_ of torch's CPU library {what} ({keys} keys x {queries} queries "
                                     f"x {dim} dimensions)")


def check_openmp(library: ctypes.CDLL) -> None:
    """Refuse a library bound to another OpenMP runtime than torch's: two thread pools would run threads x threads.
    The same function address means the same loaded runtime."""
    bound = _exported(library, "fused_attention_openmp", _pointer)()
    try:
        torch_runtime = ctypes.cast(_torch_cpu().omp_get_max_threads, ctypes.c_void_p).value
    except AttributeError:
        raise KernelUnavailableError("torch runs on no OpenMP runtime the kernel could share") from None
    if bound != torch_runtime:
        raise KernelUnavailableError(f"its OpenMP runtime ({library_file(bound)}) is not torch's "
                                     f"({library_file(torch_runtime)}): two thread pools")


class _SymbolInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p), ("sname", ctypes.c_char_p),
                ("saddr", ctypes.c_void_p)]


def library_file(address: int) -> str:
    """The file of the loaded library that holds `address` (dladdr), or the address where that is unknown."""
    info = _SymbolInfo()
    try:
        found = ctypes.CDLL(None).dladdr(ctypes.c_void_p(address), ctypes.byref(info))
    except (AttributeError, OSError):
        found = 0
    return info.fname.decode() if found and info.fname else hex(address)


_lock = threading.Lock()
_loaded: dict[str, FusedKernel | None] = {}


def load_kernel() -> FusedKernel | None:
    """The fused kernel, built and self-tested on first use on this machine; None when it is switched off or cannot
    be had (see the module doc), after one log line saying why."""
    if os.environ.get("ATTN_KERNEL", "fused") == "torch":
        return None
    with _lock:
        if "kernel" not in _loaded:
            _loaded["kernel"] = _load()
        return _loaded["kernel"]


def _load() -> FusedKernel | None:
    try:
        return FusedKernel(built_library(cache_root() / "kernels"))
    except (KernelUnavailableError, OSError) as error:
        log.warning("the fused attention kernel is unavailable (%s); using the torch path", error)
        return None
