"""Load test: N headless Chromium sessions open the collapse page on the bundled model at once, with admission control
as shipped, with K = 1 and off, each on a fresh server -> bench/LOAD.md: correct results, time to the first chart,
the server's peak RSS, and what happens to a session that leaves mid-pass or while it waits.

    make loadtest        # .venv/bin/python -m bench.loadtest [--sessions 8] [--settings default 1 off]"""

from __future__ import annotations

import argparse
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.pages import CHROMIUM, CHROMIUM_ARGS, DRAWN, ROOT, RUN_ENDED, Server, serving
from components.serving.settings import CORES, max_concurrent

BASE = (0.5, 1.0, 1.5)  # every session compares these with its own fourth temperature
OWN = (2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0, 1.25, 1.75, 2.25, 2.75)  # the fourth temperature of session i
LEAVING_MID_PASS, LEAVING_IN_LINE = 0.2, 0.3  # the fourth temperature of the two sessions that leave
TEXT = ROOT / "assets" / "needle.txt"  # the collapse page's default prompt, cut to its default 2,048 tokens
TOKENS, WINDOW = 2048, 32
TIMEOUT_S = 1800


def temperatures_text(own: float) -> str:
    return ",".join(f"{t:g}" for t in (*BASE, own))


@dataclass
class Session:
    own: float
    context: object = None
    page: object = None
    opened: float = 0.0
    first_chart: float | None = None
    labels: list[str] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    clean: bool = False


# --- before the runs: the engine's own numbers, and the cores check ----------------------------------------------


def reference_losses(sessions: int) -> dict[str, float]:
    """label -> loss of every temperature the sessions ask for, from the engine in this process (in-model rows are
    independent, so 8 temperatures per pass give each one's loss as a pass of its own would)."""
    from model_utils import analyze, load_model

    loaded = load_model("bundled")
    wanted = list(dict.fromkeys((*BASE, *OWN[:sessions])))
    losses = {}
    for start in range(0, len(wanted), 8):
        report = analyze(loaded, TEXT.read_text(), temperatures=wanted[start : start + 8], window=WINDOW,
                         max_tokens=TOKENS)
        losses |= {result.label: result.loss for result in report.results}
    return losses


def _thread_cpu() -> dict[str, float]:
    ticks = os.sysconf("SC_CLK_TCK")
    seconds = {}
    for thread in os.listdir("/proc/self/task"):
        try:
            fields = Path(f"/proc/self/task/{thread}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[thread] = (int(fields[11]) + int(fields[12])) / ticks
    return seconds


def cores_check(tokens: int = 1024) -> list[dict]:
    """Passes at once with a given torch thread count each (set in the pass's own thread, as components/serving/cache.py
    does): wall time and the CPU seconds of every OS thread that worked, read while the pass threads still live."""
    import torch

    from model_utils import analyze, load_model

    loaded = load_model("bundled")
    analyze(loaded, "warm the kernel up", temperatures=[1.0])
    rows = []
    for passes, threads in ((1, 2), (2, 1), (2, 2)):
        done, finished, walls = threading.Event(), [], []

        def one(threads=threads, done=done, finished=finished, walls=walls):
            torch.set_num_threads(threads)
            started = time.perf_counter()
            analyze(loaded, TEXT.read_text(), temperatures=[*BASE, 2.0], window=WINDOW, max_tokens=tokens)
            walls.append(time.perf_counter() - started)
            finished.append(threading.get_native_id())
            done.wait()

        before = _thread_cpu()
        workers = [threading.Thread(target=one) for _ in range(passes)]
        for worker in workers:
            worker.start()
        while len(finished) < passes:
            time.sleep(0.05)
        after = _thread_cpu()
        done.set()
        for worker in workers:
            worker.join()
        busy = sorted((after[t] - before.get(t, 0.0) for t in after if after[t] - before.get(t, 0.0) > 0.5),
                      reverse=True)
        rows.append({"passes": passes, "threads": threads, "wall": max(walls), "busy": busy})
        print(f"  {passes} pass(es), {threads} thread(s) each: {max(walls):.1f} s, CPU s per busy OS thread "
              f"{[round(b, 1) for b in busy]}", flush=True)
    return rows


# --- one run against a fresh server ------------------------------------------------------------------------------


def _open(browser, server: Server, own: float) -> Session:
    session = Session(own)
    session.context = browser.new_context(viewport={"width": 1400, "height": 900})
    session.page = session.context.new_page()
    session.opened = time.perf_counter()
    session.page.goto(f"{server.url}/collapse?t={temperatures_text(own)}", wait_until="commit")
    return session


def _progress(session: Session) -> str:
    return " ".join(session.page.locator('[data-testid="stProgress"]').all_inner_texts())


FAILED = "document.querySelector('[data-testid=\"stException\"], [data-testid=\"stAlertContentError\"]')"


def _read_result(session: Session) -> None:
    page = session.page
    page.wait_for_function(f"() => ({DRAWN} >= 4 && {RUN_ENDED}) || !!{FAILED}", timeout=TIMEOUT_S * 1000,
                           polling=250)
    session.clean = not page.evaluate(f"!!{FAILED}")
    if session.clean:
        outcome = page.evaluate("(() => { const d = document.querySelector('.st-key-collapse_outcome "
                                ".js-plotly-plot').data[0]; return [Array.from(d.x), Array.from(d.y)]; })()")
        session.labels, session.losses = list(outcome[0]), [float(v) for v in outcome[1]]


def run(browser, setting: str, sessions: int) -> dict:
    env = {"ATTN_WARMUP": "0", "ATTN_MAX_CONCURRENT": "" if setting == "default" else setting}
    with serving(ROOT, ["-m", "components.serving.serve"], env) as server:
        # the session that will leave mid-pass opens first, so that it holds a slot when the others arrive
        leaver = _open(browser, server, LEAVING_MID_PASS)
        deadline = time.monotonic() + TIMEOUT_S
        while "Layer 2 of" not in _progress(leaver) and "Layer 3 of" not in _progress(leaver):
            assert time.monotonic() < deadline, "the leaving session's pass never started"
            time.sleep(0.2)
        started = time.perf_counter()
        crowd = [_open(browser, server, own) for own in OWN[:sessions]]  # at the same moment
        waiter = _open(browser, server, LEAVING_IN_LINE)
        leaver.context.close()  # closed mid-pass: its pass must stop at the next layer and free the slot
        left_at = time.perf_counter()
        while not any(word in _progress(waiter) for word in ("Queued", "Layer")):
            assert time.monotonic() < deadline, "the waiting session never showed its place"
            time.sleep(0.2)
        waiter_saw = _progress(waiter)
        waiter.context.close()  # closed while waiting (or, without admission control, while running)
        pending = list(crowd)
        while pending:
            assert time.monotonic() < deadline, "sessions did not finish"
            for session in list(pending):
                if session.page.evaluate(DRAWN) >= 1:
                    session.first_chart = time.perf_counter() - session.opened
                    pending.remove(session)
                elif session.page.evaluate(f"!!{FAILED}"):  # an error box instead of a chart: counted as failed
                    pending.remove(session)
            time.sleep(0.25)
        all_done = time.perf_counter() - started
        for session in crowd:
            _read_result(session)
            session.context.close()
        log = server.text()
        return {"setting": setting, "sessions": crowd, "all_done": all_done, "peak_rss": server.peak_rss_gb(),
                "passes": len(re.findall(r"model pass \d+ for", log)), "log": log, "waiter_saw": waiter_saw,
                "leaver_closed_after": left_at - leaver.opened}


# --- the report --------------------------------------------------------------------------------------------------


def correct(session: Session, reference: dict[str, float]) -> bool:
    labels = [f"T={t:g}" for t in (*BASE, session.own)]
    return (session.clean and session.labels == labels
            and all(abs(loss - reference[label]) <= 1e-4 * abs(reference[label])
                    for label, loss in zip(labels, session.losses, strict=True)))


def describe(setting: str) -> str:
    slots = max_concurrent("" if setting == "default" else setting, CORES)
    if slots is None:
        return f"off: every pass at once, {CORES} torch threads each"
    shipped = " (as shipped)" if setting == "default" else ""
    return f"on{shipped}: K = {slots}, the {CORES} cores shared by the passes running"


def log_lines(log: str, pattern: str) -> list[str]:
    return [line.split(" ", 2)[-1] for line in log.splitlines() if re.search(pattern, line)]


def markdown(runs: list[dict], reference: dict[str, float], cores: list[dict], sessions: int, load) -> str:
    def times(result):  # of the sessions that drew a chart
        return np.array([s.first_chart for s in result["sessions"] if s.first_chart is not None] or [np.nan])

    header = "| | " + " | ".join(describe(r["setting"]) for r in runs) + " |"
    rows = [
        ("sessions with their own correct result, no error box",
         lambda r: f"{sum(correct(s, reference) for s in r['sessions'])} of {len(r['sessions'])}"),
        ("time to the first chart, p50", lambda r: f"{np.percentile(times(r), 50):.0f} s"),
        ("p95", lambda r: f"{np.percentile(times(r), 95):.0f} s"),
        ("max", lambda r: f"{times(r).max():.0f} s"),
        ("all sessions done after", lambda r: f"{r['all_done']:.0f} s"),
        ("server peak RSS (VmHWM)", lambda r: f"{r['peak_rss']:.1f} GB"),
        ("model passes run (the sessions, and the two that left)", lambda r: str(r["passes"])),
    ]
    table = "\n".join([header, "|---|" + "---:|" * len(runs)]
                      + [f"| {name} | " + " | ".join(cell(r) for r in runs) + " |" for name, cell in rows])
    per_session = "\n".join(
        f"| {temperatures_text(s.own)} | " + " | ".join(
            (f"{r['sessions'][i].first_chart:.0f} s" if r['sessions'][i].first_chart is not None else "no chart")
            + ("" if correct(r['sessions'][i], reference) else " (error box or wrong result)")
            for r in runs) + " |"
        for i, s in enumerate(runs[0]["sessions"]))
    leaving = []
    for r in runs:
        stopped = log_lines(r["log"], r"ended by StopException")
        left = log_lines(r["log"], r"left the queue")
        after = r["log"].split("ended by StopException", 1)[-1]  # who got the freed slot
        admitted = log_lines(after, r"admitted after")[:1]
        leaving.append(f"- **{describe(r['setting'])}**. Closed {r['leaver_closed_after']:.0f} s after it opened, in "
                       f"the middle of its pass; the one that waited saw: \"{r['waiter_saw']}\". Server log:\n"
                       + "\n".join(f"  - `{line}`" for line in (stopped[:1] + admitted + stopped[1:2] + left[:1])))
    check = "\n".join(f"| {c['passes']} | {c['threads']} | {c['wall']:.1f} s | {len(c['busy'])} | "
                      f"{', '.join(f'{b:.1f}' for b in c['busy'])} |" for c in cores)
    load_text = ", ".join(f"{value:.1f}" for value in load)
    return f"""# Load test: {sessions} sessions at once on the collapse page

Written by `make loadtest` (`bench/loadtest.py`); issue 13. {sessions} headless Chromium sessions open the collapse
page on the bundled model at the same moment, each with its own temperatures ({BASE[0]:g}, {BASE[1]:g},
{BASE[2]:g} and one of {', '.join(f'{t:g}' for t in OWN[:sessions])}), on its default prompt (1,953 tokens) and
window; each run on a fresh server (`python -m components.serving.serve`, warm-up off so that only these requests run).
"Correct" means the session's outcome chart shows exactly its four temperatures and their losses equal the
engine's own, computed in this process beforehand, to 1e-4; and no error box.

{table}

Per session (time to its first chart):

| temperatures | """ + " | ".join(describe(r["setting"]) for r in runs) + """ |
|---|""" + "---:|" * len(runs) + f"""
{per_session}

## Sessions that leave

Two more sessions open the page in every run: one first, closed once its pass is running (after layer 2 or 3);
one with the others, closed as soon as its page shows its place in the line (without admission control, as soon as
its pass runs). The server log shows the first one's pass stopped between layers, the next in line admitted in its
slot, and the second one leaving the line.

{chr(10).join(leaving)}

## Does dividing torch threads divide the cores?

Passes of 1,024 tokens x 4 temperatures in one process, each setting its own thread count with
`torch.set_num_threads` in the thread that runs it (as `components/serving/cache.py` does at admission and between
layers). OpenMP keeps the count per calling thread and the fused kernel reads it there (`torch.get_num_threads()`),
so two passes with 1 thread each keep 2 OS threads busy, and two with 2 threads each keep 4 busy on {CORES} cores:

| passes at once | torch threads each | wall (slowest) | OS threads that worked | CPU seconds each |
|---:|---:|---:|---:|---|
{check}

The machine's load average when the run began (1, 5, 15 min): {load_text}, on {CORES} cores shared with other
work: seconds vary between runs, the comparison within one run holds.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--settings", nargs="+", default=["default", "1", "off"],
                        help="ATTN_MAX_CONCURRENT per run: 'default' (as shipped), a number, or 'off'")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "LOAD.md")
    args = parser.parse_args()
    if not 1 <= args.sessions <= len(OWN):
        parser.error(f"--sessions must be between 1 and {len(OWN)}")
    from playwright.sync_api import sync_playwright

    load = os.getloadavg()
    print("the cores check", flush=True)
    cores = cores_check()
    print("the engine's own losses, for the correctness check", flush=True)
    reference = reference_losses(args.sessions)
    runs = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for setting in args.settings:
            print(f"run: {describe(setting)}", flush=True)
            result = run(browser, setting, args.sessions)
            runs.append(result)
            print(f"  first charts after {sorted(round(s.first_chart or -1) for s in result['sessions'])} s, "
                  f"{sum(correct(s, reference) for s in result['sessions'])} correct, peak RSS "
                  f"{result['peak_rss']:.1f} GB", flush=True)
        browser.close()
    args.out.write_text(markdown(runs, reference, cores, args.sessions, load))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
