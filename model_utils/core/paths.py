"""Where the explorer keeps what it computes once per machine: converted weights, built kernels, cached passes."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """$ATTN_CACHE_DIR, else the user's cache directory ($XDG_CACHE_HOME or ~/.cache)."""
    if os.environ.get("ATTN_CACHE_DIR"):
        return Path(os.environ["ATTN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attention-temperature-explorer"
