"""How long each page takes to draw its last chart on a freshly started server, side by side in one run, written to
bench/PAGES.md: the code before the warm-up (commit b16a54a), the server as `make run` starts it with pages opened
at once and after its warm-up, new browser sessions alternated with a server that serves Streamlit's page unchanged,
and a floor (a bare Streamlit page with three plotly charts). The server logs count the model passes.

    make bench-pages        # .venv/bin/python -m bench.pages [--before b16a54a] [--out bench/PAGES.md]
    python -m bench.pages --collapse-only  # the Collapse inspector after the warm-up only (python -m bench uses it)"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.timings import record_timings
from components.pages import PAGES
from model_utils.core.machine import usable_cores
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, SCREENS, free_port, stop, wait_until_healthy

ROOT = Path(__file__).resolve().parent.parent  # the repository
TITLES = {spec.url_path: spec.title for spec in PAGES} | {"floor": "Floor"}  # every page, as the app lists them
FLOOR_CHARTS = 3  # bench/floor_app.py
FLOOR_RUNS = 5
SESSION_ROUNDS = 5  # new sessions per page and server, alternating between the two warmed servers
TARGET_SECONDS = 3.0  # every chart drawn within 3 s after the warm-up
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
            stop(process, timeout=30)


def _ready(path: str) -> str:
    """JavaScript: the page at `path` is drawn (title, all its charts, nothing stale) and its run has ended."""
    charts = FLOOR_CHARTS if path == "floor" else SCREENS[path][1]
    return (f"() => {{ const h = document.querySelector('h1'); return !!h && h.innerText.trim() === {TITLES[path]!r} "
            f"&& {DRAWN} >= {charts} && {RUN_ENDED} && !document.querySelector('[data-stale=\"true\"]'); }}")


def _clean(page) -> bool:
    return (page.locator('[data-testid="stException"]').count() == 0
            and page.locator('[data-testid="stAlertContentError"]').count() == 0)


def click_through(browser, server: Server, paths=tuple(SCREENS)) -> dict[str, tuple[float, bool]]:
    """One tab: open the app at its first page, then click each other page in the sidebar; seconds per page and
    whether it came up clean (no exception box, no error line)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    times = {}
    try:
        for path in paths:
            started = time.perf_counter()
            if not times:
                page.goto(f"{server.url}/{path}", wait_until="commit")
            else:
                page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').click()
            page.wait_for_function(_ready(path), timeout=PAGE_TIMEOUT_S * 1000, polling=100)
            times[path] = (time.perf_counter() - started, _clean(page))
            print(f"  {TITLES[path]}: {times[path][0]:.1f} s{'' if times[path][1] else ' (error on the page)'}",
                  flush=True)
    finally:
        context.close()
    return times


def open_page(context, server: Server, path: str) -> tuple[float, bool]:
    """`path` by its URL in a new tab of `context`: seconds to its last chart, and whether it came up clean."""
    page = context.new_page()
    try:
        started = time.perf_counter()
        page.goto(f"{server.url}/{path}", wait_until="commit")
        page.wait_for_function(_ready(path), timeout=PAGE_TIMEOUT_S * 1000, polling=100)
        return time.perf_counter() - started, _clean(page)
    finally:
        page.close()


def new_session(browser, server: Server, path: str) -> tuple[float, bool]:
    """`path` by its URL in a new browser session (an empty cache, as a first visit)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        return open_page(context, server, path)
    finally:
        context.close()


def alternating_sessions(browser, servers: dict[str, Server], rounds: int = SESSION_ROUNDS) -> dict[str, dict]:
    """Each page in `rounds` new sessions on each server, the servers taking turns (in reverse order every other
    round), so that a slow minute of the machine falls on both: per server and page, the median seconds and
    whether every opening came up clean."""
    seen = {name: {path: [] for path in SCREENS} for name in servers}
    for round_ in range(rounds):
        for path in SCREENS:
            for name in (list(servers) if round_ % 2 == 0 else list(reversed(servers))):
                seen[name][path].append(new_session(browser, servers[name], path))
    medians = {name: {path: (statistics.median(seconds for seconds, _ in runs), all(clean for _, clean in runs))
                      for path, runs in pages.items()} for name, pages in seen.items()}
    for path in SCREENS:
        print(f"  {TITLES[path]} (new sessions): " + ", ".join(
            f"{name} {medians[name][path][0]:.1f} s" for name in servers), flush=True)
    return medians


def new_tabs(browser, server: Server) -> dict[str, tuple[float, bool]]:
    """Each page by its URL in a new tab of one browser session that has opened the app once before, so that its
    cache holds Streamlit's and plotly's JavaScript, as a returning visitor's browser does."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        open_page(context, server, "")
        times = {path: open_page(context, server, path) for path in SCREENS}
    finally:
        context.close()
    for path, (seconds, _) in times.items():
        print(f"  {TITLES[path]} (new tab, cached): {seconds:.1f} s", flush=True)
    return times


def floor_times(browser) -> list[float]:
    """bench/floor_app.py opened FLOOR_RUNS times, each in a new browser session."""
    with serving(ROOT, ["-m", "streamlit", "run", "bench/floor_app.py"]) as server:
        return [new_session(browser, server, "floor")[0] for _ in range(FLOOR_RUNS)]


def collapse_after_warm_up(rounds: int = SESSION_ROUNDS) -> dict:
    """The Collapse inspector on a server as `make run` starts it, once its warm-up is done, each opening in a new
    browser session: the first page that server draws (a visitor who follows a link to it), then `rounds` more; and
    the floor page on a server of its own in the same minutes, its first opening, then taking turns with the
    collapse page. Seconds to the last chart; `passes`: the model passes the openings ran (0: all from the warm-up's
    cache); `clean`: whether every opening came up without an error."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        with (serving(ROOT, ["-m", "streamlit", "run", "bench/floor_app.py"]) as floor,
              serving(ROOT, ["-m", "components.serving.serve"]) as server):
            warm_up = server.wait_for("warm-up done")
            warm_up_passes = server.passes()
            openings = {"collapse": [new_session(browser, server, "collapse")],
                        "floor": [new_session(browser, floor, "floor")]}
            for _ in range(rounds):
                for name, where in (("collapse", server), ("floor", floor)):
                    openings[name].append(new_session(browser, where, name))
            passes = server.passes() - warm_up_passes
        browser.close()
    return {"warm_up_s": warm_up, "passes": passes, "clean": all(ok for runs in openings.values() for _, ok in runs),
            **{name: [seconds for seconds, _ in runs] for name, runs in openings.items()}}


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
        print(f"before ({before_commit}): streamlit run app.py, clicking through at once", flush=True)
        tree = before_tree(before_commit)
        app = (tree / "app.py").read_text()  # pages added since then are left out of the before column
        with serving(tree, ["-m", "streamlit", "run", "app.py"]) as server:
            results["before"] = click_through(browser, server, [path for path in SCREENS
                                                                 if f'url_path="{path or "softmax"}"' in app])
        print("now: python -m components.serving.serve, clicking through at once (during the warm-up)", flush=True)
        with serving(ROOT, ["-m", "components.serving.serve"]) as server:
            results["at_once"] = click_through(browser, server)
        print("now: python -m components.serving.serve, after the warm-up (and one with ATTN_EARLY_PLOTLY=0)",
              flush=True)
        with (serving(ROOT, ["-m", "components.serving.serve"]) as server,
              serving(ROOT, ["-m", "components.serving.serve"], env={"ATTN_EARLY_PLOTLY": "0"}) as unchanged):
            results["warm_up_s"] = server.wait_for("warm-up done")
            unchanged.wait_for("warm-up done")
            passes = server.passes() + unchanged.passes()
            results["warmed"] = click_through(browser, server)
            sessions = alternating_sessions(browser, {"early plotly": server, "unchanged": unchanged})
            results["warmed_new_sessions"], results["unchanged_new_sessions"] = sessions.values()
            results["warmed_new_tabs"] = new_tabs(browser, server)
            results["passes_during_visits"] = server.passes() + unchanged.passes() - passes
            results["warm_up_line"] = next(line for line in server.text().splitlines() if "warm-up done" in line)
        print("floor: a bare Streamlit page with three plotly charts, each open in a new session", flush=True)
        results["floor"] = floor_times(browser)
        browser.close()
    return results


def server_warm_up_seconds(line: str) -> float:
    """The seconds the server's own warm-up took, from its log line ("warm-up done: 3 of 3 default views ready in
    117.0 s; ..."): what the README quotes (bench/timings.json), the warm-up alone, not the server's start."""
    found = re.search(r"ready in ([0-9.]+) s", line)
    if found is None:
        raise SystemExit(f"the server's warm-up line says no time: {line!r}")
    return float(found[1])


def cell(result: tuple[float, bool] | None) -> str:
    if result is None:
        return "not there yet"
    seconds, clean = result
    return f"{seconds:.1f} s" + ("" if clean else " (error)")


def markdown(results: dict, before_commit: str) -> str:
    columns = ("before", "at_once", "warmed", "warmed_new_sessions", "unchanged_new_sessions", "warmed_new_tabs")
    rows = [f"| {TITLES[path]} | " + " | ".join(cell(results[column].get(path)) for column in columns) + " |"
            for path in SCREENS]
    first, *clicked = list(SCREENS)
    within = all(results["warmed"][path][0] <= TARGET_SECONDS and results["warmed"][path][1] for path in clicked)
    slowest_click = max(results["warmed"][path][0] for path in clicked)
    header = " | ".join(["page", f"before ({before_commit}, `streamlit run`), one tab",
                         "now, one tab at once (warm-up running)", "now, one tab after the warm-up",
                         f"now, after the warm-up, a new session per page (median of {SESSION_ROUNDS})",
                         f"the same with Streamlit's page unchanged (median of {SESSION_ROUNDS}, alternating)",
                         "now, after the warm-up, a new tab per page (cached JavaScript)"])
    load = ", ".join(f"{value:.1f}" for value in results["load"])
    fresh = [seconds for seconds, _ in results["warmed_new_sessions"].values()]
    tabs = [seconds for seconds, _ in results["warmed_new_tabs"].values()]
    floor = statistics.median(results["floor"])
    met = [TITLES[path] for path, (seconds, clean) in results["warmed_new_sessions"].items()
           if seconds <= TARGET_SECONDS and clean]
    early = [results["warmed_new_sessions"][path][0] / results["unchanged_new_sessions"][path][0] for path in SCREENS]
    return f"""# Time to a page's last chart on a fresh server

Written by `make bench-pages` (`bench/pages.py`); issue 14. Servers freshly started with the bundled model. A
teacher's tab opens the app at the Softmax lab (its URL) and clicks through the other pages in the sidebar; the time
runs from the navigation or the click until the page's title and all its plotly charts are drawn and its script run
has ended. The last three columns open each page by its URL instead: in a new browser
session (an empty cache, a first visit), on the server as `make run` starts it and on one started with
`ATTN_EARLY_PLOTLY=0`, the two taking turns; and in a new tab of a browser that has opened the app once.

| {header} |
|---|---:|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

After the warm-up, {"every" if within else "NOT every"} page the teacher clicked to drew all its charts within
{TARGET_SECONDS:g} s (the slowest in {slowest_click:.1f} s), and opening all the pages, in the tab, in new sessions and
in new tabs, ran {results['passes_during_visits']} model pass(es) (the server log counts them). The warm-up took
{results['warm_up_s']:.0f} s from the server's first answer: `{results['warm_up_line'].split(' ', 2)[-1]}`.

The first page of a tab ({TITLES[first]}: {results['warmed'][first][0]:.1f} s here, and every page of the last three
columns) also pays for the browser loading, parsing and starting Streamlit's and plotly's JavaScript. The floor
measures that in the same run: `bench/floor_app.py`, a bare Streamlit page with a title and three plotly charts of
three points, took {floor:.1f} s to its last chart in a new session (median of {len(results['floor'])}:
{", ".join(f"{t:.1f}" for t in results['floor'])} s). The app's pages took {min(fresh):.1f}-{max(fresh):.1f} s in a
new session ({min(fresh) / floor:.2f}-{max(fresh) / floor:.2f}x the floor) and {min(tabs):.1f}-{max(tabs):.1f} s in a
new tab of a browser that has the JavaScript cached; {len(met)} of {len(SCREENS)} met {TARGET_SECONDS:g} s in a new
session ({", ".join(met) if met else "none"}).

Streamlit imports plotly's code (4.7 MB) only when a page's first chart arrives over the websocket, and running it
takes the page's one thread most of a second on these machines. `make run` serves a page that imports it as soon as
Streamlit's own code has run, before the websocket opens (components/serving/serve.py, `early_plotly`). Against the same
page served unchanged, in the same minutes: {min(early):.2f}-{max(early):.2f}x the time to the last chart in a new
session, page by page.

"At once" is a visitor who comes before the warm-up ends: a model page shows the warm-up's progress (or its place
in the line, then its own pass) instead of a blank page and draws its charts when the pass ends, without a reload.
Those first minutes cost about what they cost before, since the warm-up does the work the first visitors' pages
did (and competes with them for the cores). The machine's load average when the run began (1, 5, 15 min): {load}
on {usable_cores()} cores shared with other work, so the seconds of the model pages vary from run to run.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="b16a54a", help="the commit to measure as 'before'")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "PAGES.md")
    parser.add_argument("--collapse-only", action="store_true",
                        help="only the Collapse inspector after the warm-up against the floor page "
                             "(collapse_after_warm_up): one JSON line on stdout, nothing written")
    args = parser.parse_args()
    if args.collapse_only:
        print(json.dumps(collapse_after_warm_up()))
        return
    results = measure(args.before)
    args.out.write_text(markdown(results, args.before))
    record_timings({"warm-up": server_warm_up_seconds(results["warm_up_line"])}, "make bench-pages")
    print(f"wrote {args.out} and bench/timings.json")


if __name__ == "__main__":
    main()
