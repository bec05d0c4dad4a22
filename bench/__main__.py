"""`make bench`: the engine against the usual way of capturing attention and against plain SDPA passes, measured
side by side in one run, plus the fused kernel's first use, the model in half precision, start-up, re-draw and the
command line.

Each case runs in its own process (bench/cases.py) so peak memory is its own. Prints the tables, writes
bench/RESULTS.md and the performance table of docs/PERFORMANCE.md. Never part of `make test`: timings on shared machines
are noisy, so the results are ratios of cases measured in the same run, and the targets are checked here.

    python -m bench [--sizes 512 2048 8192 16384] [--before c0d61d2]
    python -m bench --ratios-only [--sizes 8192]  # engine and floor alone, and the kernel's first use -> FLOOR.md
    python -m bench --only startup  # a short analyze, the Collapse inspector, each against a baseline -> STARTUP.md
    python -m bench --only recipes [--recipe-sizes 2048 16384]  # each distance remapping's pass -> RECIPES.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.readme import DOCS, replace_block
from bench.timings import record_timings
from model_utils.core.machine import usable_cores

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
N_LAYERS, N_HEADS = 30, 9  # the bundled SmolLM2-135M-Instruct
BYTES_PER_FLOAT = 4
REPEATS = {512: 3, 2048: 3, 8192: 2, 16384: 1}  # long cases take minutes each; their noise is relatively small
BEFORE = "c0d61d2"  # the last commit before the fused kernel
FLOOR_TARGET = 1.25  # the engine's time at most this many times the floor's, at every length (issue 25)
HALF_TOKENS = 512
STARTUP_REPEATS = 5  # whole-process runs of the short analyze, its baseline and its one-thread twin, alternating
RECIPE_SIZES = (2048,)  # 16,384 takes long: --recipe-sizes 2048 16384 (make bench BENCH_RECIPE_SIZES="2048 16384")
RECIPE_REPEATS = {2048: 3}  # rounds of every recipe in turn; 1 at longer lengths
TWO_BLOCKS = 2.0  # a remapping scores two blocks: at most about twice the plain pass on its path (issue 36)


def run_case(case: str, n_tokens: int, repeats: int, cwd: Path = ROOT, env: dict | None = None) -> dict:
    command = [sys.executable, "-m", "bench.cases", case, str(n_tokens), str(repeats)]
    print(f"  running {case} at {n_tokens} tokens ...", file=sys.stderr, flush=True)
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                          env=os.environ | {"PYTHONPATH": str(cwd)} | (env or {}))
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
    return (f"{usable_cores()} cores ({model}), {available_memory_gb():.0f} GB available, Python "
            f"{platform.python_version()}, 1-minute load average {os.getloadavg()[0]:.1f} (other work on it too)")


def fmt(value: float | None, unit: str = "", digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}{unit}"


def median(result: dict | None) -> float | None:
    return None if not result or "median" not in result else result["median"]


def profile_before(commit: str, n_tokens: int) -> dict:
    """The profile split of the engine at `commit`: its model_utils, today's bench, in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="bench-before-") as folder:
        archive = subprocess.run(["git", "archive", commit, "model_utils"], cwd=ROOT, capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        shutil.copytree(HERE, Path(folder) / "bench")
        text = Path(folder) / "text.txt"
        from model_utils.experiments.texts import builtin_text

        text.write_text(builtin_text("long"), encoding="utf-8")
        return run_case("profile", n_tokens, 1, cwd=Path(folder), env={"BENCH_TEXT": str(text)})


def collapse_case() -> dict:
    """bench/pages.collapse_after_warm_up in its own process, as a start-up row: the later openings of the Collapse
    inspector (times), its first (first_times), and the floor page's (baseline_times, floor_first_times)."""
    print("  running the Collapse inspector after the warm-up, against the floor page ...", file=sys.stderr,
          flush=True)
    done = subprocess.run([sys.executable, "-m", "bench.pages", "--collapse-only"], cwd=ROOT, capture_output=True,
                          text=True, env=os.environ | {"PYTHONPATH": str(ROOT)})
    if done.returncode != 0:
        return {"error": " / ".join(done.stderr.strip().splitlines()[-3:]) or f"exit {done.returncode}"}
    found = json.loads(done.stdout.strip().splitlines()[-1])
    later, floor = found["collapse"][1:], found["floor"][1:]
    return {"times": later, "median": statistics.median(later), "first_times": found["collapse"][:1],
            "baseline_times": floor, "baseline_median": statistics.median(floor),
            "floor_first_times": found["floor"][:1], "passes": found["passes"], "clean": found["clean"],
            "warm_up_s": found["warm_up_s"]}


def ray_startup() -> str:
    """bench/ray_startup.py's table: what Ray adds to a corpus tune before its first document."""
    print("  running Ray start-up ...", file=sys.stderr, flush=True)
    done = subprocess.run([sys.executable, "-m", "bench.ray_startup"], cwd=ROOT, capture_output=True, text=True,
                          env=os.environ | {"PYTHONPATH": str(ROOT)})
    table = done.stdout.strip() if done.returncode == 0 else f"failed: {done.stderr.strip().splitlines()[-1:]}"
    return f"\n## Ray for the corpus tuner (bench/ray_startup.py)\n\n{table}\n"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=list(REPEATS))
    parser.add_argument("--before", default=BEFORE, help="the commit whose engine the profile compares with")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    parser.add_argument("--ratios-only", action="store_true",
                        help="measure only the engine and the floor at --sizes and the kernel's first use, and print "
                             "them (to rerun a length that a busy machine disturbed); writes only --ratios-out")
    parser.add_argument("--ratios-out", default=str(HERE / "FLOOR.md"), help="where --ratios-only writes its table")
    parser.add_argument("--only", choices=["startup", "recipes"],
                        help="startup: only a short analyze as a whole process and the Collapse inspector after the "
                             "warm-up, each against its baseline in the same run; writes only --startup-out. "
                             "recipes: only a pass with each distance remapping against none, at --recipe-sizes; "
                             "writes only --recipes-out")
    parser.add_argument("--startup-out", default=str(HERE / "STARTUP.md"), help="where --only startup writes")
    parser.add_argument("--recipe-sizes", nargs="+", type=int, default=list(RECIPE_SIZES),
                        help="the lengths of the recipes' section (16384: six passes of 16,384 tokens a round, most "
                             "on the torch path: long)")
    parser.add_argument("--recipes-out", default=str(HERE / "RECIPES.md"), help="where --only recipes writes")
    args = parser.parse_args()
    if args.ratios_only:
        ratios_only(args.sizes, Path(args.ratios_out))
        return
    if args.only == "startup":
        startup_only(Path(args.startup_out))
        return
    if args.only == "recipes":
        recipes_only(args.recipe_sizes, Path(args.recipes_out))
        return

    print("checking that engine and peer agree before timing ...", file=sys.stderr)
    agreement = [run_case("agree", n, 1) for n in (512, 2048)]
    rows, notes = [], []
    for n in args.sizes:
        repeats = REPEATS.get(n, 1)
        results = {case: run_case(case, n, repeats) for case in ("engine", "floor")}
        fits, needed = peer_fits(n)
        if fits:
            results["peer"] = run_case("peer", n, repeats)
        else:
            notes.append(f"peer skipped at {n} tokens: its maps alone need about {needed:.0f} GB "
                         f"(available {available_memory_gb():.0f} GB)")
        rows.append((n, results))
    buckets = [run_case("buckets", n, 15 if n <= 2048 else 5) for n in (2048, 16384) if n in args.sizes]
    profiles = {"before": profile_before(args.before, 2048), "after": run_case("profile", 2048, 1)}
    startup = {case: run_case(case, 0, 3) for case in ("cold", "warm", "redraw", "cli", "build")}
    startup["collapse"] = collapse_case()
    half = run_case("half", HALF_TOKENS, 1)
    recipes = recipe_table(recipe_runs(args.recipe_sizes))
    ray = ray_startup()

    table = render(rows, buckets, profiles, startup, agreement, notes, args.before) + half_table(half) + recipes + ray
    print(table)
    Path(args.out).write_text(table)
    update_performance(rows, startup)
    record_timings({name: median(startup[case]) for name, case in (("cold-start", "cold"), ("warm-start", "warm"))
                    if median(startup[case]) is not None}, "make bench")
    print(f"\nwritten to {args.out}, bench/timings.json and docs/PERFORMANCE.md", file=sys.stderr)


def ratios_only(sizes: list[int], out: Path) -> None:
    """The engine against the floor at `sizes` (each pair measured back to back) and the fused kernel's first use on
    a fresh cache folder, printed and written to `out` as a markdown table."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    lines = [f"Machine: {machine()}. Commit {commit.stdout.strip() or '?'}, "
             f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}. Written by `python -m bench --ratios-only`: "
             "the engine and the floor (plain SDPA, no capture, one pass per temperature), each case in its own "
             f"process, median of {', '.join(f'{REPEATS.get(n, 1)} at {n:,}' for n in sizes)} runs.", "",
             "| tokens | engine s | floor s | engine / floor | target |", "|---:|---:|---:|---:|---|"]
    for n in sizes:
        engine, floor = (median(run_case(case, n, REPEATS.get(n, 1))) for case in ("engine", "floor"))
        ratio = engine / floor if engine and floor else None
        lines.append(f"| {n:,} | {fmt(engine)} | {fmt(floor)} | {fmt(ratio, 'x')} | "
                     f"{'met' if ratio is not None and ratio <= FLOOR_TARGET else 'missed'} (<= {FLOOR_TARGET}x) |")
        print(lines[-1], flush=True)
    build = run_case("build", 0, 3)
    runs = ", ".join(f"{t:.2f}" for t in build.get("times", [])) or build.get("error", "")
    parts = (f" (compiling {fmt(statistics.median(build['compile']))} s, the self-test in a child "
             f"{fmt(statistics.median(build['self_test']))} s)" if "compile" in build else "")
    lines += ["", "| case | median s | runs |", "|---|---:|---|",
              f"| the fused kernel's first use on a machine: build, self-test, checks at load{parts} | "
              f"{fmt(median(build))} | {runs} |"]
    table = "\n".join(lines) + "\n"
    print(table)
    out.write_text("# The engine against the floor\n\n" + table)


def startup_only(out: Path) -> None:
    """The two start-up targets alone (issue 32), each against its baseline in the same run, printed and written to
    `out` with the command that made them."""
    startup = {"cli": run_case("cli", 0, STARTUP_REPEATS), "collapse": collapse_case()}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    lines = ["# Start-up against its baselines", "",
             f"Machine: {machine()}. Commit {commit.stdout.strip() or '?'}, "
             f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}. Written by `python -m bench --only startup` "
             "(`make bench` measures the same rows with the rest). Each row's baseline is measured in the same "
             "minutes, taking turns with it: on a machine that other work keeps busy the seconds grow, and the "
             "ratios are what compares.", "", *startup_rows(startup)]
    lines += ["", "Targets (on a quiet 2-core machine):", "", *target_lines([], [], startup)]
    table = "\n".join(lines) + "\n"
    print(table)
    out.write_text(table)
    print(f"written to {out}", file=sys.stderr)


def recipe_runs(sizes: list[int]) -> list[dict]:
    """bench/cases.recipe_cost at each length, in its own process."""
    return [run_case("recipes", n, RECIPE_REPEATS.get(n, 1)) for n in sizes]


def recipes_only(sizes: list[int], out: Path) -> None:
    """The recipes' section alone, printed and written to `out` with the machine and the commit."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    table = (f"# What each distance remapping costs\n\nMachine: {machine()}. Commit "
             f"{commit.stdout.strip() or '?'}, {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}. Written by "
             f"`python -m bench --only recipes --recipe-sizes {' '.join(map(str, sizes))}` (`make bench` measures "
             "the same with the rest).\n" + recipe_table(recipe_runs(sizes)))
    print(table)
    out.write_text(table)
    print(f"written to {out}", file=sys.stderr)


def recipe_table(results: list[dict]) -> str:
    """A row per length and recipe (bench/cases.recipe_cost): its median pass and the ratios to no recipe on the
    fused kernel and on the torch path, measured in the same rounds; a target line per remapping."""
    from bench.cases import NO_RECIPE, NO_RECIPE_TORCH

    lines = ["", "## What each distance remapping costs per pass (bench/cases.recipe_cost)", "",
             "One in-model pass at T = 1 on the bundled model, every recipe in turn in each round: no recipe on the "
             "fused kernel (the baseline), no recipe on the torch path (ATTN_KERNEL=torch), and each distance "
             "remapping at the form's example parameters, which takes the torch path (the fused kernel scores one "
             "block of distances and remaps none; a remapping scores two).", "",
             "| tokens | recipe | path | median s | runs | / no recipe | / no recipe, torch path |",
             "|---:|---|---|---:|---|---:|---:|"]
    checks, notes = [], []
    for result in results:
        if "error" in result:
            notes.append(f"- recipes at {result['n_tokens']:,} tokens failed: {result['error']}")
            continue
        found = result["recipes"]
        base, torch_base = (statistics.median(found[label]["times"]) for label in (NO_RECIPE, NO_RECIPE_TORCH))
        for label, run in found.items():
            seconds = statistics.median(run["times"])
            lines.append(f"| {result['n_tokens']:,} | {label} | {run['kernel']} | {seconds:.2f} | "
                         + ", ".join(f"{t:.2f}" for t in run["times"])
                         + f" | {seconds / base:.2f}x | {seconds / torch_base:.2f}x |")
            if label not in (NO_RECIPE, NO_RECIPE_TORCH):
                ratio = seconds / torch_base
                checks.append(f"- {'met' if ratio <= TWO_BLOCKS else 'MISSED'}: {result['n_tokens']:,} tokens, "
                              f"{label}: {ratio:.2f}x the plain pass on the torch path (target about "
                              f"{TWO_BLOCKS:g}x or less), {seconds / base:.2f}x the fused kernel's")
    return "\n".join([*lines, "", *checks, *notes]) + "\n"


STARTUP_LABELS = {
    "cold": "cold start (dequantize the GGUF, write the cache)", "warm": "warm start (from the cache)",
    "redraw": "Attention maps re-draw, layer/head changed (AppTest)",
    "cli": "`python -m model_utils analyze` on 64 tokens, whole process (warm cache)",
    "build": "the fused kernel's first use on a machine: build, self-test in a child, checks at load",
    "collapse": "the Collapse inspector after the warm-up, to its last chart: a new browser session (later openings)"}
STARTUP_PARTS = {  # a case's parts, each as measured in its own runs
    "cli": (("import", "of which `import model_utils.__main__` (python -X importtime)"),
            ("baseline", "its baseline: a process that only imports torch and transformers' LlamaForCausalLM and "
                         "tokenizer, alternating with it"),
            ("one_thread", "the same analyze with torch on one thread (OMP_NUM_THREADS=1), alternating with it")),
    "build": (("compile", "of the first use: compiling and linking"),
              ("self_test", "of the first use: the self-test, a child process")),
    "collapse": (("first", "its first opening: the first page the server draws after its warm-up"),
                 ("baseline", "its baseline: the floor page (a bare Streamlit page with three plotly charts) on a "
                              "server of its own, a new session, alternating with it"),
                 ("floor_first", "the floor page's first opening on its server"))}


def startup_rows(startup: dict) -> list[str]:
    """The start-up table: a row per case (median and runs), then a row per part of it."""
    lines = ["| start-up | median s | runs |", "|---|---:|---|"]
    for case, result in startup.items():
        runs = ", ".join(f"{t:.2f}" for t in result.get("times", [])) or result.get("error", "")
        lines.append(f"| {STARTUP_LABELS[case]} | {fmt(median(result))} | {runs} |")
        for part, label in STARTUP_PARTS.get(case, ()):
            times = result.get(f"{part}_times", result.get(part))
            if times:
                lines.append(f"| {label} | {statistics.median(times):.2f} | "
                             + ", ".join(f"{t:.2f}" for t in times) + " |")
    collapse = startup.get("collapse", {})
    if "passes" in collapse:
        lines += ["", f"The Collapse inspector's server finished its warm-up {collapse['warm_up_s']:.0f} s after its "
                      f"first answer; the openings ran {collapse['passes']} model pass(es) of their own and "
                      f"{'all came up clean' if collapse['clean'] else 'SOME SHOWED AN ERROR'}."]
    return lines


def render(rows, buckets, profiles, startup, agreement, notes, before: str) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    lines = [
        "# Benchmark results",
        "",
        f"Machine: {machine()}. Commit {commit.stdout.strip() or '?'}, "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}. Written by `make bench`. The pages' time to their "
        "last chart in a browser, before and after the warm-up, is in [PAGES.md](PAGES.md) (`make bench-pages`).",
        "Bundled SmolLM2-135M-Instruct (Q4_1, dequantized), 4 temperatures (0.5, 1, 1.5, 2), in-model, statistics "
        "for all 30 layers x 9 heads; past 8,192 tokens the text runs beyond the trained length. Wall time: median "
        "of " + ", ".join(f"{r} at {n}" for n, r in REPEATS.items()) + " runs (after a warm-up below 8,192 "
        "tokens), each case in its own process.",
        "",
        "| tokens | engine s | usual way s | floor s | engine / usual way | engine / floor | engine RSS GB "
        "| usual way RSS GB | floor RSS GB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, results in rows:
        engine, peer, floor = (median(results.get(case)) for case in ("engine", "peer", "floor"))
        rss = [results.get(case, {}).get("peak_rss_gb") for case in ("engine", "peer", "floor")]
        lines.append(f"| {n:,} | {fmt(engine)} | {fmt(peer)} | {fmt(floor)} | "
                     f"{fmt(engine / peer if engine and peer else None, 'x')} | "
                     f"{fmt(engine / floor if engine and floor else None, 'x')} | "
                     + " | ".join(fmt(value) for value in rss) + " |")
        for case, result in results.items():
            if "error" in result:
                notes.append(f"{case} at {n} tokens failed: {result['error']}")
    lines += ["", "The floor is plain SDPA forward passes, one per temperature, without any capture; the usual "
              "way is an eager pass with output_attentions=True per temperature and the same statistics from the "
              "returned maps.", "", "What the context-length buckets (key-distance bins for every row, sums per "
              "bucket of 1,024 positions) add to the statistics pass (the fused kernel on one layer, 4 "
              "temperatures, alternating runs):", "", "| tokens | with buckets s | without s | ratio |",
              "|---:|---:|---:|---:|"]
    for result in buckets:
        if "error" in result:
            notes.append(f"buckets at {result['n_tokens']} tokens failed: {result['error']}")
            continue
        with_median = sorted(result["with"])[len(result["with"]) // 2]
        without_median = sorted(result["without"])[len(result["without"]) // 2]
        lines.append(f"| {result['n_tokens']:,} | {with_median:.3f} | {without_median:.3f} | "
                     f"{result['ratio']:.3f}x |")
    lines += ["", f"Where one 2,048-token analysis spends its time (pyinstrument), before (commit {before}) and "
              "after:", "", "| part | before s | after s |", "|---|---:|---:|"]
    for part in ("attention and statistics", "rest of the transformer", "output layer and loss", "total"):
        lines.append(f"| {part} | {fmt(profiles['before'].get(part))} | {fmt(profiles['after'].get(part))} |")
    notes += [f"profile {side} failed: {result['error']}" for side, result in profiles.items() if "error" in result]
    lines += ["", *startup_rows(startup)]
    lines += ["", "Agreement before timing (max abs difference, engine vs usual way, all layers, heads, "
              "temperatures):", ""]
    for result in agreement:
        diffs = result.get("max_abs_diff", {})
        shown = ", ".join(f"{name} {value:.1e}" for name, value in diffs.items()) or result.get("error", "")
        lines.append(f"- {result['n_tokens']} tokens: {shown}")
    at_512 = dict(rows).get(512, {})
    peer, floor = median(at_512.get("peer")), median(at_512.get("floor"))
    usual = (f": in this run the usual way is itself {peer / floor:.2f}x plain SDPA at 512 tokens, so 2x faster than "
             f"it would mean {2 * floor / peer:.2f}x as fast as the floor" if peer and floor else "")
    lines += ["", "Targets:", ""] + target_lines(rows, buckets, startup) + [
        "", "The 512-token target of the last performance issue, 2x as fast as the usual way, is withdrawn (issue "
        f"25){usual}. The target is the floor: at most "
        f"{FLOOR_TARGET}x plain SDPA at every length.", ""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def target_lines(rows, buckets, startup) -> list[str]:
    checks = []
    for n, results in rows:
        engine, floor = (median(results.get(case)) for case in ("engine", "floor"))
        if engine and floor:
            checks.append((engine / floor <= FLOOR_TARGET, f"{n:,} tokens: engine at {engine / floor:.2f}x the floor "
                                                           f"(target <= {FLOOR_TARGET}x)"))
    for n, results in rows:
        engine, peer, floor = (median(results.get(case)) for case in ("engine", "peer", "floor"))
        if engine and peer and floor:
            checks.append((peer / engine >= 1.0, f"{n:,} tokens: engine {peer / engine:.2f}x as fast as the usual "
                                                 f"way, itself at {peer / floor:.2f}x the floor (target >= 1x)"))
    by_size = dict(rows)
    at_16k = by_size.get(16384, {}).get("engine", {})
    if at_16k:
        ok = "median" in at_16k and at_16k["peak_rss_gb"] < 8
        checks.append((ok, f"16,384 tokens x 4 temperatures: peak RSS {fmt(at_16k.get('peak_rss_gb'))} GB "
                           "(target < 8 GB)"))
    for result in buckets:
        if "ratio" in result:
            checks.append((result["ratio"] <= 1.05, f"{result['n_tokens']:,} tokens: the buckets add "
                                                    f"{(result['ratio'] - 1) * 100:+.1f}% to the statistics pass "
                                                    "(target <= 5%)"))
    return [f"- {'met' if ok else 'MISSED'}: {text}" for ok, text in checks + startup_checks(startup)]


def startup_checks(startup: dict) -> list[tuple[bool, str]]:
    """(met, sentence) per start-up target, each with its ratio to the baseline measured in the same run."""
    limits = {"warm": (3.0, "warm start", ""), "redraw": (0.5, "layer/head re-draw, no model run", ""),
              "cli": (4.0, "short analyze as a whole process", "the import-only baseline"),
              "build": (30.0, "the fused kernel's first use (build and self-test, once per machine)", ""),
              "collapse": (3.0, "the Collapse inspector's charts after the warm-up, a new session", "the floor page")}
    checks = []
    for case, (limit, text, baseline_name) in limits.items():
        result = startup.get(case, {})
        value, baseline = median(result), result.get("baseline_median")
        if value is None:
            continue
        against = f"; {value / baseline:.2f}x {baseline_name}, {baseline:.2f} s" if baseline else ""
        if result.get("one_thread_times"):
            one_thread = statistics.median(result["one_thread_times"])
            against += f"; on one torch thread {one_thread / baseline:.2f}x" if baseline else ""
        checks.append((value < limit, f"{text}: {value:.2f} s (target < {limit:g} s{against})"))
    collapse = startup.get("collapse", {})
    if collapse.get("first_times") and collapse.get("floor_first_times"):
        first, floor = collapse["first_times"][0], collapse["floor_first_times"][0]
        checks.append((first < 3.0, f"the Collapse inspector as the first page after the warm-up: {first:.2f} s "
                                    f"(target < 3 s; {first / floor:.2f}x the floor page's first opening, "
                                    f"{floor:.2f} s)"))
    return checks


def half_table(result: dict) -> str:
    """The model in float16 and bfloat16 on the CPU against float32, on either path (bench/cases.half_precision)."""
    if "half" not in result:
        return f"\nHalf precision failed: {result.get('error', '?')}\n"
    lines = ["", f"## The model in half precision ({HALF_TOKENS} tokens, 4 temperatures, on the CPU)", "",
             "Statistics are computed in float32 from the half-precision queries and keys; the differences are the "
             "largest over the temperatures (loss, in nats per token; the loss at T = 1 is "
             f"{next(iter(result['half'].values()))['loss_at_1']:.3f}) and over every layer and head (statistics).",
             "", "| path, dtype | loss - float32's | statistics - float32's | s | float32 s |",
             "|---|---:|---:|---:|---:|"]
    for label, found in result["half"].items():
        lines.append(f"| {label} (report: {found['kernel']}) | {found['loss']:.1e} | {found['statistics']:.1e} | "
                     f"{found['seconds']:.1f} | {found['float32_seconds']:.1f} |")
    return "\n".join(lines) + "\n"


def update_performance(rows, startup) -> None:
    """Regenerate docs/PERFORMANCE.md's performance table (between the bench markers) from this run."""
    lines = ["| tokens | engine | usual way (eager + output_attentions) | plain SDPA passes, no "
             "capture |", "|---:|---:|---:|---:|"]
    for n, results in rows:
        engine, peer, floor = (results.get(case, {}) for case in ("engine", "peer", "floor"))
        peer_text = (f"{median(peer):.1f} s, {peer['peak_rss_gb']:.1f} GB ({median(peer) / median(engine):.1f}x "
                     "the engine's time)" if median(peer) and median(engine) else "does not fit: its maps alone "
                     f"need ~{peer_fits(n)[1]:.0f} GB")
        floor_text = (f"{median(floor):.1f} s (engine at {median(engine) / median(floor):.2f}x)"
                      if median(floor) and median(engine) else "-")
        engine_text = f"{median(engine):.1f} s, {engine['peak_rss_gb']:.1f} GB" if median(engine) else "-"
        lines.append(f"| {n:,} | {engine_text} | {peer_text} | {floor_text} |")
    warm, redraw, cli = (median(startup.get(case)) for case in ("warm", "redraw", "cli"))
    baseline = startup.get("cli", {}).get("baseline_median")
    against = (f" (a process that only imports torch and transformers' LlamaForCausalLM {fmt(baseline)} s)"
               if baseline else "")
    build = startup.get("build", {})
    first_use = (f" The fused kernel's first use on a machine {fmt(median(build))} s: compiling "
                 f"{fmt(statistics.median(build['compile']))} s, its self-test in a child process "
                 f"{fmt(statistics.median(build['self_test']))} s." if "compile" in build else "")
    collapse = startup.get("collapse", {})
    page = (f" The Collapse inspector after the warm-up draws its charts in {fmt(median(collapse))} s in a new browser "
            f"session (a bare Streamlit page with three charts {fmt(collapse['baseline_median'])} s)."
            if "baseline_median" in collapse else "")
    lines += ["", f"Warm start {fmt(warm)} s, a layer/head re-draw {fmt(redraw)} s, a short `analyze` as a whole "
              f"process {fmt(cli)} s{against}.{first_use}{page} bench/RESULTS.md has the rest."]
    if not replace_block("bench", lines, DOCS / "PERFORMANCE.md"):
        raise SystemExit("docs/PERFORMANCE.md has no <!-- bench:start --> block")


if __name__ == "__main__":
    main()
