"""Building the fused kernel: the system C compiler turns fused_attention.c into a shared library on first use
(about a second), in the cache folder, keyed by the source, the flags, the compiler and the CPU."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("fused_attention.c")
FLAGS = ("-O3", "-march=native", "-ffast-math", "-fopenmp", "-fPIC")
# Linked apart from the compile: `-ffast-math` on the link line also links gcc's crtfastmath.o, whose constructor
# sets flush-to-zero and denormals-are-zero for the whole process when the library is loaded, and every later
# float operation in Python, numpy and torch would then lose its subnormals.
LINK_FLAGS = ("-shared", "-fopenmp")


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


