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


def portable_argument(argument: str, *, cwd: Path | None = None, home: Path | None = None) -> str:
    """An argument of a command as a result file records it, with no path of this machine: an absolute path (alone
    or after `--flag=`) inside the working folder becomes relative, one inside the home folder `~/...`; the rest
    is kept. The committed commands then run from the repository on any machine."""
    flag, equals, value = argument.rpartition("=") if argument.startswith("--") else ("", "", argument)
    if not value.startswith("/"):
        return argument
    cwd, home, path = (cwd or Path.cwd()).resolve(), (home or Path.home()).resolve(), Path(value)
    if path.is_relative_to(cwd):
        value = os.path.relpath(path, cwd)
    elif path.is_relative_to(home):
        value = "~/" + path.relative_to(home).as_posix()
    return flag + equals + value


def portable_command(arguments: list[str]) -> str:
    """`python -m model_utils ...` with every argument made portable (portable_argument)."""
    return " ".join(["python -m model_utils", *map(portable_argument, arguments)])
