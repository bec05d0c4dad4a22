"""`make bench`: the engine against the usual way of capturing attention, measured side by side in one run.

Each case runs in its own process (bench/cases.py) so peak memory is its own. Prints the table and writes
bench/RESULTS.md. Never part of `make test`: timings on shared machines are noisy, so the results are ratios of
cases measured in the same run, and the targets are checked here, not in a test.

    python -m bench [--sizes 512 2048 4096 8192] [--repeats 3]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
N_LAYERS, N_HEADS = 30, 9  # the bundled SmolLM2-135M
BYTES_PER_FLOAT = 4


def run_case(case: str, n_tokens: int, repeats: int) -> dict:
    command = [sys.executable, "-m", "bench.cases", case, str(n_tokens), str(repeats)]
    print(f"  running {case} at {n_tokens} tokens ...", file=sys.stderr, flush=True)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=os.environ | {"PYTHONPATH": str(ROOT)})
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        return {"case": case, "n_tokens": n_tokens, "error": " / ".join(tail) or f"exit {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def available_memory_gb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024 / 1e9
    return float("inf")


def peer_fits(n_tokens: int) -> tuple[bool, float]:
    """The peer holds every layer's maps at once (plus the statistics' working copies of one layer)."""
    maps = N_LAYERS * N_HEADS * n_tokens**2 * BYTES_PER_FLOAT / 1e9
    needed = maps * 1.15 + 3.0  # the last layer's temporaries and the model itself
    return needed < 0.85 * available_memory_gb(), needed


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    memory = f"{available_memory_gb():.0f} GB available"
    return f"{os.cpu_count()} cores ({model}), {memory}, Python {platform.python_version()}"


def fmt(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.2f}{unit}"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[512, 2048, 4096, 8192])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = parser.parse_args()

    print("checking that engine and peer agree before timing ...", file=sys.stderr)
    agreement = [run_case("agree", n, 1) for n in (512, 2048)]
    rows, notes = [], []
    for n in args.sizes:
        results = {case: run_case(case, n, args.repeats) for case in ("engine", "floor")}
        fits, needed = peer_fits(n)
        if fits:
            results["peer"] = run_case("peer", n, args.repeats)
        else:
            notes.append(f"peer skipped at {n} tokens: its maps alone need about {needed:.0f} GB "
                         f"(available {available_memory_gb():.0f} GB)")
        rows.append((n, results))
    startup = {case: run_case(case, 0, args.repeats) for case in ("cold", "warm", "redraw")}

    table = render(rows, startup, agreement, notes, args.repeats)
    print(table)
    Path(args.out).write_text(table)
    print(f"\nwritten to {args.out}", file=sys.stderr)


def median(result: dict | None) -> float | None:
    return None if not result or "median" not in result else result["median"]


def render(rows, startup, agreement, notes, repeats) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    lines = [
        "# Benchmark results",
        "",
        f"Machine: {machine()}. Commit {commit.stdout.strip() or '?'}, "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}.",
        f"Bundled SmolLM2-135M, 4 temperatures (0.5, 1, 1.5, 2), in-model, statistics for all 30 layers x 9 heads. "
        f"Wall time: median of {repeats} runs after a warm-up, each case in its own process.",
        "",
        "| tokens | engine s | peer s | floor s | engine / peer | engine / floor | engine RSS GB | peer RSS GB "
        "| floor RSS GB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, results in rows:
        engine, peer, floor = (median(results.get(case)) for case in ("engine", "peer", "floor"))
        rss = [results.get(case, {}).get("peak_rss_gb") for case in ("engine", "peer", "floor")]
        lines.append(
            f"| {n} | {fmt(engine)} | {fmt(peer)} | {fmt(floor)} | "
            f"{fmt(engine / peer if engine and peer else None, 'x')} | "
            f"{fmt(engine / floor if engine and floor else None, 'x')} | "
            + " | ".join(fmt(value) for value in rss) + " |")
        for case, result in results.items():
            if "error" in result:
                notes.append(f"{case} at {n} tokens failed: {result['error']}")
    lines += ["", "| start-up | median s | runs |", "|---|---:|---|"]
    labels = {"cold": "cold start (dequantize the GGUF, write the cache)", "warm": "warm start (from the cache)",
              "redraw": "Attention maps re-draw, layer/head changed (AppTest)"}
    for case, result in startup.items():
        runs = ", ".join(f"{t:.2f}" for t in result.get("times", [])) or result.get("error", "")
        lines.append(f"| {labels[case]} | {fmt(median(result))} | {runs} |")
    lines += ["", "Agreement before timing (max abs difference, engine vs peer, all layers, heads, temperatures):", ""]
    for result in agreement:
        diffs = result.get("max_abs_diff", {})
        shown = ", ".join(f"{name} {value:.1e}" for name, value in diffs.items()) or result.get("error", "")
        lines.append(f"- {result['n_tokens']} tokens: {shown}")
    lines += ["", "Targets:", ""] + target_lines(rows, startup) + [""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def target_lines(rows, startup) -> list[str]:
    by_size = dict(rows)
    checks = []
    at_2048 = by_size.get(2048, {})
    engine, peer, floor = (median(at_2048.get(case)) for case in ("engine", "peer", "floor"))
    if engine and peer and floor:
        checks.append((peer / engine >= 3, f"2048 tokens: engine {peer / engine:.1f}x faster than peer (target >= 3x)"))
        checks.append((engine / floor <= 2, f"2048 tokens: engine at {engine / floor:.2f}x the floor (target <= 2x)"))
    if at_2048.get("engine", {}).get("peak_rss_gb"):
        rss = at_2048["engine"]["peak_rss_gb"]
        checks.append((rss <= 2.5, f"2048 tokens: engine peak RSS {rss:.2f} GB (target <= 2.5 GB)"))
    at_8192 = by_size.get(8192, {}).get("engine", {})
    if at_8192:
        ok = "median" in at_8192 and at_8192["peak_rss_gb"] < 8
        checks.append((ok, f"8192 tokens: engine completes, peak RSS {fmt(at_8192.get('peak_rss_gb'))} GB (< 8 GB)"))
    if median(startup.get("warm")) is not None:
        checks.append((median(startup["warm"]) < 3, f"warm start {median(startup['warm']):.2f} s (target < 3 s)"))
    if median(startup.get("redraw")) is not None:
        value = median(startup["redraw"])
        checks.append((value < 0.5, f"layer/head re-draw {value:.2f} s (target < 0.5 s, no model run)"))
    return [f"- {'met' if ok else 'MISSED'}: {text}" for ok, text in checks]


if __name__ == "__main__":
    main()
