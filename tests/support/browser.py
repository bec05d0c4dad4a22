"""Driving the served app in Debian's Chromium (Playwright): the browser's flags, a free port, a server that is
healthy or stopped; and what each page draws on opening. Used by the browser tests and bench/pages.py."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request

from components.pages import PAGES

CHROMIUM = "/usr/bin/chromium"
# without the background-networking flags Chromium keeps trying this machine's closed network
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
# plotly charts each page draws on opening, by script
CHARTS_ON_OPEN = {"softmax_lab": 3, "attention_maps": 2, "collapse_inspector": 4, "length_schedules": 4,
                  "context_length": 5, "retrieval": 2, "lesson": 0, "glossary": 0}
# url path -> (screenshot name, charts on opening); the Softmax lab is the default page, at "/"
SCREENS = {spec.url_path: (f"{number}-{spec.script.replace('_', '-')}", CHARTS_ON_OPEN[spec.script])
           for number, spec in enumerate(PAGES, start=1)}


def stop(process: subprocess.Popen, timeout: float = 20) -> None:
    """Ask a server to end, and end it if it does not within `timeout` s."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_healthy(url: str, process: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with status {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"streamlit did not answer at {url} within {timeout} s")
