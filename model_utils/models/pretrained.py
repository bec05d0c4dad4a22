"""A user's own model: a local Hugging Face model folder, or a hub id already in the local cache (or, where the hub
answers, downloaded). Remote code is never run; every failure becomes one ModelLoadError line."""

from __future__ import annotations

import re
import socket
import urllib.parse
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from model_utils.core.errors import ModelLoadError


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


def load_pretrained(name: str) -> tuple[torch.nn.Module, object, str]:
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

