"""Building the fused kernel: the system C compiler turns fused_attention.c into a shared library on first use
(about a second), which then runs its self-test in a child process (kernel/selftest.py: a crash there cannot take
the caller down) before it is installed in the cache folder. The key of a build is the source, the flags, the
compiler, the CPU and torch's build (whose sgemm and OpenMP runtime the library uses); the verdict is kept under it:
an installed library passed, a `.refused` file holds why one failed. docs/KERNEL.md."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from model_utils.core.files import write_atomic

SOURCE = Path(__file__).with_name("fused_attention.c")
FLAGS = ("-O3", "-march=native", "-ffast-math", "-fopenmp", "-fPIC")
# Linked apart from the compile: `-ffast-math` on the link line also links gcc's crtfastmath.o, whose constructor
# sets flush-to-zero and denormals-are-zero for the whole process when the library is loaded, and every later
# float operation in Python, numpy and torch would then lose its subnormals.
LINK_FLAGS = ("-shared", "-fopenmp")
SELF_TEST = "model_utils.engine.kernel.selftest"  # run as `python -m`, in a child process
SELF_TEST_THREADS = 2  # enough for the threads to meet in the kernel's sums and in torch's OpenMP pool
SELF_TEST_TIMEOUT = 300  # seconds; it takes a few on a busy 2-core machine


class KernelUnavailableError(Exception):
    """The fused kernel cannot be used on this machine; the message says why, in one line."""


def _compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def build_key(compiler: str, source: Path) -> str:
    """What a built library and its verdict depend on: the source, the flags, the compiler's version, this CPU, and
    torch's build (the library calls torch's sgemm and runs on torch's OpenMP runtime)."""
    try:
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=False).stdout
    except OSError:  # no such compiler: compile_library says so
        version = ""
    cpu = ""
    if Path("/proc/cpuinfo").is_file():
        cpu = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    torch_build = f"{torch.__version__} {getattr(torch.version, 'git_version', '')}"
    parts = [source.read_text(), " ".join(FLAGS), " ".join(LINK_FLAGS), version, platform.machine(), cpu,
             torch_build]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def compile_library(target: Path, source: Path = SOURCE, compiler: str | None = None) -> Path:
    """Compile and link `source` into the shared library `target` (its folder must exist). Raises
    KernelUnavailableError with the compiler's first line of complaint."""
    compiler = compiler or _compiler()
    if compiler is None:
        raise KernelUnavailableError("no C compiler found (set $CC, or install gcc)")
    compiled = target.with_suffix(".o")
    try:
        subprocess.run([compiler, *FLAGS, "-c", "-o", str(compiled), str(source)], check=True, capture_output=True,
                       text=True)
        subprocess.run([compiler, *LINK_FLAGS, "-o", str(target), str(compiled), "-lm"], check=True,
                       capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as error:
        detail = (getattr(error, "stderr", "") or str(error)).strip()
        first = detail.splitlines()[0] if detail else str(error)
        raise KernelUnavailableError(f"{compiler} could not build it: {first}") from None
    finally:
        compiled.unlink(missing_ok=True)
    return target


def self_test(library: Path) -> str | None:
    """Run the self-test of the built `library` in a child process; None when it passed, else why not (one line).
    A crash, a hang or a mismatch in the child is a failed test, never the caller's."""
    package_root = str(Path(__file__).resolve().parents[3])  # the folder holding model_utils
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    try:
        done = subprocess.run([sys.executable, "-m", SELF_TEST, str(library), str(SELF_TEST_THREADS)], env=env,
                              capture_output=True, text=True, timeout=SELF_TEST_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return f"its self-test did not finish within {SELF_TEST_TIMEOUT} s"
    if done.returncode < 0:
        return f"it crashed in its self-test ({signal.Signals(-done.returncode).name})"
    lines = done.stdout.strip().splitlines()
    try:
        verdict = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return f"its self-test ended without a verdict ({last})"
    return None if verdict["passed"] else verdict["reason"]


def built_library(folder: Path) -> Path:
    """The kernel's library for this machine in `folder`: compiled, self-tested and installed on first use, read
    from there afterwards. Raises KernelUnavailableError when it cannot be built or failed its self-test (here or in an
    earlier process: the verdict is kept, so a failing library is not built and tested again)."""
    compiler = _compiler()
    if compiler is None:
        raise KernelUnavailableError("no C compiler found (set $CC, or install gcc)")
    target = folder / f"fused-attention-{build_key(compiler, SOURCE)}.so"
    refused = target.with_suffix(".refused")
    if target.is_file():
        return target
    if refused.is_file():
        raise KernelUnavailableError(f"{refused.read_text().strip()}; recorded in {refused}, delete it to test "
                                     "again")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as staging:
        built = compile_library(Path(staging) / target.name, SOURCE, compiler)
        reason = self_test(built)
        if reason is not None:
            write_atomic(refused, reason + "\n")
            raise KernelUnavailableError(reason)
        os.replace(built, target)  # atomic: a concurrent build of the same key writes the same bytes
    return target

