"""What stands between the fused kernel and the engine: the self-test in a child process at the first build (a crash
or a wrong number there leaves the caller running on the torch path, with one log line, and the verdict is kept next
to the build so no later process repeats it), and the checks at every load (the Job struct against its ctypes
mirror, torch's sgemm on a known product, one OpenMP runtime). Broken kernels are built from the real source with one
line changed."""

import ctypes
import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from model_utils import analyze
from model_utils.engine.kernel import build, library, selftest
from model_utils.engine.kernel.build import KernelUnavailableError
from tests.support import ROOT, SAMPLE_TEXT

LOGGER = "model_utils.engine.kernel.library"


@pytest.fixture(scope="module")
def kernel():
    built = library.load_kernel()
    assert built is not None, "the fused kernel must build on this machine (gcc is part of the machine image)"
    return built


def variant(tmp_path: Path, old: str, new: str) -> Path:
    """The kernel's source with `old` (which must occur once) replaced by `new`."""
    text = build.SOURCE.read_text()
    assert text.count(old) == 1, old
    path = tmp_path / "fused_attention.c"
    path.write_text(text.replace(old, new))
    return path


def compiled(tmp_path: Path, old: str, new: str) -> Path:
    return build.compile_library(tmp_path / "variant.so", variant(tmp_path, old, new))


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A fresh cache folder and no kernel loaded in this process yet; the folder the kernels are built in."""
    monkeypatch.setenv("ATTN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ATTN_KERNEL", "fused")
    monkeypatch.setattr(library, "_loaded", {})
    return tmp_path / "cache" / "kernels"


def test_the_self_test_passes_here_in_a_child_process(kernel):
    done = subprocess.run([sys.executable, "-m", build.SELF_TEST, str(kernel.path), "2"], capture_output=True,
                          text=True, cwd=ROOT, timeout=600, check=True)
    verdict = json.loads(done.stdout.strip().splitlines()[-1])
    assert verdict["passed"] and verdict["reason"] == "", verdict
    assert set(verdict["worst"]) == set(selftest.TOLERANCE)
    assert all(verdict["worst"][name] <= selftest.TOLERANCE[name] / 10 for name in selftest.TOLERANCE), verdict
    assert build.self_test(kernel.path) is None


def test_the_self_test_covers_what_the_engine_asks_of_the_kernel():
    cases = selftest.CASES
    assert any(case.kv_heads < case.heads for case in cases)  # grouped-query heads
    assert any(case.sliding for case in cases) and any(case.softcap for case in cases)
    assert any(case.shared for case in cases)  # isolated mode: one batch row, several multiplier rows
    assert any(case.n > 512 for case in cases)  # past a query block (256) and a key tile (512)
    assert any(case.trained and case.trained < case.n for case in cases) and any(case.bucket_size for case in cases)


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("int fused_attention(const Job *job) {", "int fused_attention(const Job *job) {\n    if (job->n > 100) abort();",
     "it crashed in its self-test (SIGABRT)"),
    ("? exp((double)st->sink_logit - (double)st->top1) / total :",
     "? 1.5 * exp((double)st->sink_logit - (double)st->top1) / total :",
     "it failed its self-test: sink_mass differs from the torch path"),
    ("#pragma omp parallel num_threads((int)(job->threads > 0 ? job->threads : 1))\n    {\n        float *tile",
     "#pragma omp parallel num_threads((int)job->threads + 1)\n    {\n        float *tile",
     "started 1 thread(s) beyond torch's pool (two thread pools)"),
])
def test_a_kernel_that_fails_its_self_test_leaves_the_engine_on_the_torch_path(fresh, tmp_path, monkeypatch,
                                                                                caplog, tiny, old, new, reason):
    monkeypatch.setattr(build, "SOURCE", variant(tmp_path, old, new))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        report = analyze(tiny, SAMPLE_TEXT, temperatures=[0.5, 1.0])
    assert report.kernel == "torch"
    messages = [record.getMessage() for record in caplog.records if record.name == LOGGER]
    assert len(messages) == 1 and reason in messages[0] and messages[0].endswith("; using the torch path")
    refused = list(fresh.glob("fused-attention-*.refused"))
    assert len(refused) == 1 and not list(fresh.glob("*.so")) and reason in refused[0].read_text()
    # a later process finds the verdict, keyed like the build, and neither builds nor tests again
    monkeypatch.setattr(library, "_loaded", {})
    monkeypatch.setattr(build, "compile_library", lambda *args: pytest.fail("built again"))
    monkeypatch.setattr(build, "self_test", lambda *args: pytest.fail("tested again"))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert library.load_kernel() is None
    assert reason in caplog.records[0].getMessage() and str(refused[0]) in caplog.records[0].getMessage()


def test_a_kernel_that_passes_is_installed_and_found_by_the_next_process(fresh, monkeypatch):
    kernel = library.load_kernel()
    assert kernel is not None and kernel.path.parent == fresh and kernel.path.suffix == ".so"
    assert [path.name for path in fresh.iterdir()] == [kernel.path.name]  # no staging folder, no verdict file
    monkeypatch.setattr(library, "_loaded", {})
    monkeypatch.setattr(build, "self_test", lambda *args: pytest.fail("tested again"))
    assert library.load_kernel().path == kernel.path


@pytest.mark.parametrize(("old", "new", "shown"), [
    ("    int64_t q_start; /* statistics for queries q_start..n-1 */\n    int64_t window;",
     "    int64_t window;\n    int64_t q_start; /* statistics for queries q_start..n-1 */", "field 25"),
    ("    int64_t threads;\n} Job;", "    int64_t threads;\n    int64_t spare;\n} Job;", "296 against 288 bytes"),
    ("enum { F_ENTROPY, F_NORMALIZED, F_SINK, F_RECENT, F_DISTANT, F_GAP, F_UNTRAINED, F_EFFECTIVE, N_FIELDS };",
     "enum { F_ENTROPY, F_NORMALIZED, F_SINK, F_RECENT, F_DISTANT, F_GAP, F_UNTRAINED, N_FIELDS, F_EFFECTIVE };",
     "7 row fields"),
])
def test_a_library_whose_struct_is_not_the_mirrors_is_refused_before_any_call(tmp_path, old, new, shown):
    """The C side reports sizeof(Job) and every field's offset and size (offsetof, so the truth of the build);
    moving a field, adding one, or dropping a row field is refused by name."""
    path = compiled(tmp_path, old, new)
    with pytest.raises(KernelUnavailableError, match=r"Job struct differs|row fields") as refused:
        library.FusedKernel(path)
    assert shown in str(refused.value)


def test_the_mirror_is_checked_against_the_library_from_the_python_side(kernel, monkeypatch):
    swapped = list(library.Job._fields_)
    swapped[25], swapped[26] = swapped[26], swapped[25]  # q_start and window

    class Swapped(ctypes.Structure):
        _fields_ = swapped

    monkeypatch.setattr(library, "Job", Swapped)
    with pytest.raises(KernelUnavailableError, match=r"field 25: \('q_start', 200, 8\) in C, \('window', 200, 8\)"):
        library.check_layout(ctypes.CDLL(str(kernel.path)))


def test_an_sgemm_that_gets_the_known_product_wrong_is_refused(kernel, monkeypatch):
    kernel.check_gemm(selftest.TILE, 2)  # torch's own passes, at the kernel's tile shape too
    signature = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 13)
    calls = []
    wrong = signature(lambda *arguments: calls.append(1))  # writes nothing: every entry of the product is wrong
    monkeypatch.setattr(library, "torch_gemm", lambda: ctypes.cast(wrong, ctypes.c_void_p).value)
    with pytest.raises(KernelUnavailableError, match=r"gets \d+ entries of a known product wrong"):
        library.FusedKernel(kernel.path)
    assert calls  # the check really called it


def test_the_kernel_runs_on_torchs_openmp_runtime_loaded_once(kernel):
    files = {line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines() if "/" in line}
    runtimes = {file for file in files if re.match(r"lib(g|i|)omp\b", Path(file).name)}  # GNU, Intel, LLVM
    assert len(runtimes) == 1, runtimes
    assert Path(next(iter(runtimes))).parent.resolve() == (Path(torch.__file__).parent / "lib").resolve()
    bound = library._exported(ctypes.CDLL(str(kernel.path)), "fused_attention_openmp", ctypes.c_void_p)()
    assert Path(library.library_file(bound)).resolve() == Path(next(iter(runtimes))).resolve()


def test_a_library_bound_to_another_openmp_runtime_is_refused(tmp_path):
    path = compiled(tmp_path, "void *fused_attention_openmp(void) { return (void *)omp_get_max_threads; }",
                    "void *fused_attention_openmp(void) { return (void *)fused_attention_max_bins; }")
    with pytest.raises(KernelUnavailableError, match=r"OpenMP runtime .* is not torch's .*: two thread pools"):
        library.FusedKernel(path)
