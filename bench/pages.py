"""How long each page takes to draw its last chart on a freshly started server, as a visitor who opens it sees it
(issue 14), side by side in one run, written to bench/PAGES.md:

- before: the code before the warm-up (commit b16a54a, from `git archive`), `streamlit run app.py`, each page
  opened right after the server answers;
- now, at once: `python -m components.serve` (what `make run` starts), each page opened right after the server
  answers, while the warm-up runs;
- now, warmed: the same, each page opened once the server's log says the warm-up is done.

Each page is opened by its URL in a new browser context (a new session, as a student following a link), in the
order softmax lab, attention maps, collapse inspector, length schedules; the clock runs from the navigation until
its plotly charts are all drawn and the script run has ended. The server log counts the model passes the visits ran.

    make bench-pages        # .venv/bin/python -m bench.pages [--before b16a54a] [--out bench/PAGES.md]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, PAGES, free_port, wait_until_healthy

ROOT = Path(__file__).resolve().parent.parent
TITLES = {"": "Softmax lab", "maps": "Attention maps", "collapse": "Collapse inspector",
          "schedules": "Length schedules"}
TARGET_SECONDS = 3.0  # issue 14: every chart drawn within 3 s after the warm-up
PAGE_TIMEOUT_S = 900
RUN_ENDED = "!document.querySelector('[data-testid=\"stStatusWidget\"]')"
DRAWN = "[...document.querySelectorAll('.js-plotly-plot')].filter(p => p.querySelector('.main-svg')).length"


@dataclass
class Server:
    url: str
    pid: int
    log: Path

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def passes(self) -> int:
        return len(re.findall(r"model pass \d+ for", self.text()))

    def wait_for(self, line: str, timeout: float = PAGE_TIMEOUT_S) -> float:
        started = time.monotonic()
        while line not in self.text():
            if time.monotonic() - started > timeout:
                raise TimeoutError(f"no {line!r} in the server log within {timeout} s")
            time.sleep(0.2)
        return time.monotonic() - started

    def peak_rss_gb(self) -> float:
        """VmHWM: the most memory the server process has held since it started."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / 1e9
        raise RuntimeError("no VmHWM")


@contextlib.contextmanager
def serving(root: Path, command: list[str], env: dict[str, str] | None = None) -> Iterator[Server]:
    """A server started in `root` by `command` (streamlit options appended), stopped when the block ends."""
    port = free_port()
    log = Path(tempfile.mkdtemp(prefix="bench-server-")) / "server.log"
    options = ["--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
               "--browser.gatherUsageStats", "false"]
    with log.open("w") as output:
        process = subprocess.Popen([sys.executable, *command, *options], cwd=root, stdout=output,
                                   stderr=subprocess.STDOUT, env=os.environ | {"ATTN_MODEL": "bundled"} | (env or {}))
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_healthy(url, process)
            yield Server(url, process.pid, log)
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def open_and_time(browser, url: str, charts: int) -> tuple[float, bool]:
    """Seconds from navigating to `url` (a new session) until `charts` charts are drawn and the run has ended;
    and whether the page came up clean (no exception box, no error line)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        started = time.perf_counter()
        page.goto(url, wait_until="commit")
        page.wait_for_function(f"() => {DRAWN} >= {charts} && {RUN_ENDED}", timeout=PAGE_TIMEOUT_S * 1000, polling=100)
        seconds = time.perf_counter() - started
        clean = (page.locator('[data-testid="stException"]').count() == 0
                 and page.locator('[data-testid="stAlertContentError"]').count() == 0)
        return seconds, clean
    finally:
        context.close()


def visit_pages(browser, server: Server) -> dict[str, tuple[float, bool]]:
    times = {}
    for path, (_, charts) in PAGES.items():
        times[path] = open_and_time(browser, f"{server.url}/{path}", charts)
        print(f"  {TITLES[path]}: {times[path][0]:.1f} s{'' if times[path][1] else ' (error on the page)'}",
              flush=True)
    return times


def before_tree(commit: str) -> Path:
    """The app as it was at `commit`, unpacked from git into a temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix=f"bench-before-{commit[:7]}-"))
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def measure(before_commit: str) -> dict:
    from playwright.sync_api import sync_playwright

    results = {"load": os.getloadavg()}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        print(f"before ({before_commit}): streamlit run app.py, pages opened at once", flush=True)
        with serving(before_tree(before_commit), ["-m", "streamlit", "run", "app.py"]) as server:
            results["before"] = visit_pages(browser, server)
        print("now: python -m components.serve, pages opened at once (during the warm-up)", flush=True)
        with serving(ROOT, ["-m", "components.serve"]) as server:
            results["at_once"] = visit_pages(browser, server)
            server.wait_for("warm-up done")
        print("now: python -m components.serve, pages opened after the warm-up", flush=True)
        with serving(ROOT, ["-m", "components.serve"]) as server:
            results["warm_up_s"] = server.wait_for("warm-up done")
            passes = server.passes()
            results["warmed"] = visit_pages(browser, server)
            results["passes_during_visits"] = server.passes() - passes
            results["warm_up_line"] = next(line for line in server.text().splitlines() if "warm-up done" in line)
        browser.close()
    return results


def cell(result: tuple[float, bool]) -> str:
    seconds, clean = result
    return f"{seconds:.1f} s" + ("" if clean else " (error)")


def markdown(results: dict, before_commit: str) -> str:
    rows = [f"| {TITLES[path]} | {cell(results['before'][path])} | {cell(results['at_once'][path])} | "
            f"{cell(results['warmed'][path])} |" for path in PAGES]
    warmed = results["warmed"].values()
    verdict = ("every page drew all its charts within " if all(s <= TARGET_SECONDS and ok for s, ok in warmed)
               else "NOT every page drew all its charts within ")
    load = ", ".join(f"{value:.1f}" for value in results["load"])
    return f"""# Time to a page's last chart on a fresh server

Written by `make bench-pages` (`bench/pages.py`); issue 14. Each page is opened by its URL in a new headless
Chromium session, in this order, on a freshly started server with the bundled model; the time runs from the
navigation until all its plotly charts are drawn and the script run has ended.

| page | before ({before_commit}, `streamlit run`) | now, opened at once (warm-up running) | now, after the warm-up |
|---|---:|---:|---:|
{chr(10).join(rows)}

After the warm-up {verdict}{TARGET_SECONDS:g} s, and opening the four pages ran
{results['passes_during_visits']} model pass(es) (the server log counts them). The warm-up took
{results['warm_up_s']:.0f} s from the server's first answer: `{results['warm_up_line'].split(' ', 2)[-1]}`.

"Opened at once" is a visitor who comes before the warm-up ends: a model page shows the warm-up's progress (or its
place in the line, then its own pass) instead of a blank page, and draws its charts when the pass ends, without a
reload. The machine's load average when the run began (1, 5, 15 min): {load} on {os.cpu_count()} cores shared
with other work, so the seconds of the model pages vary from run to run; the ratios and the warmed column do not.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="b16a54a", help="the commit to measure as 'before'")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "PAGES.md")
    args = parser.parse_args()
    results = measure(args.before)
    args.out.write_text(markdown(results, args.before))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
