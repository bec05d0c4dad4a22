"""The timings that README.md and docs/*.md quote (the cold start, the warm start, the warm-up), in seconds, as the
benchmarks measured them: bench/timings.json, whose entries `make bench` (bench/__main__.py) and `make bench-pages`
(bench/pages.py) each write beside their Markdown, and `python -m bench.readme figures` reads. Each entry keeps its
command and commit, so a number is never read back out of a Markdown table."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from model_utils.core.files import write_atomic

TIMINGS = Path(__file__).resolve().parent / "timings.json"


def record_timings(seconds: dict[str, float], command: str, path: Path = TIMINGS) -> None:
    """Write `seconds` (by the name a figure marker uses: "cold-start") as measured by `command` at this commit,
    keeping the entries the other benchmarks wrote."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=path.parent, capture_output=True, text=True)
    entries = read_timings(path) if path.is_file() else {}
    entries |= {name: {"seconds": value, "command": command, "commit": commit.stdout.strip() or "?"}
                for name, value in seconds.items()}
    write_atomic(path, json.dumps(entries, indent=2, sort_keys=True) + "\n")


def read_timings(path: Path = TIMINGS) -> dict[str, dict]:
    """The entries by name: each one's seconds, the command that measured them and its commit."""
    return json.loads(path.read_text(encoding="utf-8"))
