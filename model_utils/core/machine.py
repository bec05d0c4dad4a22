"""What the machine gives a run: its usable cores and the process's peak memory, measured one way everywhere."""

from __future__ import annotations

import os
import resource
import sys


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def peak_rss_gb() -> float:
    """This process's peak resident memory so far, in GB: getrusage counts KiB on Linux and bytes on macOS."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak * (1 if sys.platform == "darwin" else 1024) / 1e9, 2)
