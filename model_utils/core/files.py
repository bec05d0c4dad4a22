"""A result file written whole or not at all: the one stage-then-rename write every floor uses (the pass cache, the
tuner's and the fitter's rows, their summaries, a model cache's side files), so no reader ever sees half a file and
a crash leaves the old file, never a half-new one. Standard library only: it sits on the lowest floor."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path


def write_atomic(path: str | Path, content: str | Callable[[Path], object]) -> None:
    """Write `content` (UTF-8 text, or a function that writes the file it is given, as pyarrow's write_table) to a
    fresh file beside `path`, then rename it over `path` in one step. The staging file sits in the same folder (a
    rename within one file system is atomic) under a dot name unique to this call (a folder listing, pyarrow.dataset
    and a concurrent writer pass it by). A failure or an interrupt mid-write leaves the old file as it was and no
    staging file. A symlink stays a symlink: the file it points to is replaced."""
    target = Path(os.path.realpath(path))
    staging = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.partial")
    try:
        if isinstance(content, str):
            staging.write_text(content, encoding="utf-8")
        else:
            content(staging)
        os.replace(staging, target)
    finally:
        staging.unlink(missing_ok=True)  # only there if the write failed or was interrupted
