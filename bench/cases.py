"""One benchmark case in its own process: `python -m bench.cases CASE N_TOKENS REPEATS` prints one JSON line. Cases
(4 temperatures, in-model, every layer and head): engine (`analyze`), peer (the usual way: eager passes with
output_attentions, one per temperature), floor (plain SDPA passes), agree, buckets, profile, cold / warm loads,
redraw, cli, build (the fused kernel's first use on a machine), half (the model in float16 and bfloat16), recipes
(one pass at T = 1 per distance remapping against none); each case's function says what it measures. Wall times are
medians of REPEATS runs."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import numpy as np
import torch

TEMPERATURES = (0.5, 1.0, 1.5, 2.0)
WINDOW = 32
ROOT = Path(__file__).resolve().parent.parent  # the repository
ASSETS = ROOT / "assets"
WARM_UP_BELOW = 8192  # longer cases skip the warm-up run: first-call costs are nothing next to minutes of work


def fixed_text() -> str:
    """The same text for every case and size: Python's own documentation (model_utils.experiments.texts),
    100,000+ tokens; from the file $BENCH_TEXT when the run profiles an older engine that has no such module."""
    if os.environ.get("BENCH_TEXT"):
        return Path(os.environ["BENCH_TEXT"]).read_text(encoding="utf-8")
    from model_utils.experiments.texts import builtin_text

    return builtin_text("long")


def timed(run, repeats: int, warm_up: bool = True) -> list[float]:
    if warm_up:
        run()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return times


def set_temperature(model, temperature: float) -> None:
    """The usual hack: divide every attention module's scaling by T (global state on the model)."""
    for layer in model.model.layers:
        attention = layer.self_attn
        attention.scaling = attention.head_dim**-0.5 / temperature


def peer_statistics(model, ids: torch.Tensor, temperature: float) -> dict[str, np.ndarray]:
    """Eager pass with every layer's maps returned, then the statistics per layer from the maps."""
    from model_utils.engine.row_statistics import statistics_from_probabilities

    set_temperature(model, temperature)
    with torch.inference_mode():
        output = model(ids, labels=ids, output_attentions=True)
        per_layer = [statistics_from_probabilities(maps[0], WINDOW) for maps in output.attentions]
        torch.softmax(output.logits[0, -1], dim=-1).topk(5)  # the next-token guesses the report also carries
    return {name: np.stack([layer[name] for layer in per_layer]) for name in per_layer[0]} | {
        "loss": float(output.loss)}


def token_ids(loaded, n_tokens: int) -> torch.Tensor:
    from model_utils.engine.analyze import tokenize

    ids, _ = tokenize(loaded, fixed_text(), n_tokens)
    return torch.tensor(ids)[None]


def redraw_times(repeats: int) -> list[float]:
    """The Attention maps page on the bundled model: after the first (computing) run, re-draws that change only
    layer and head, timed through Streamlit's AppTest (script run, cache hit, map rebuild, figure)."""
    from streamlit.testing.v1 import AppTest

    os.environ["ATTN_MODEL"] = "bundled"
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    app.run()
    app.switch_page("components/pages/attention_maps.py")
    app.run()
    choices = [(3, 0), (20, "mean of heads"), (29, 8), (0, 4), (11, "mean of heads"), (7, 2)]
    times = []
    for layer, head in choices[: repeats + 1]:
        started = time.perf_counter()
        app.selectbox(key="maps_layer").set_value(layer)
        app.selectbox(key="maps_head").set_value(head)
        app.run()
        times.append(time.perf_counter() - started)
        if app.exception:
            raise RuntimeError(app.exception[0].value)
    return times[1:]  # the first re-draw is the warm-up


def analyze_bundled(loaded, n_tokens: int, **kwargs):
    from model_utils import analyze

    if n_tokens > loaded.max_positions:
        kwargs["beyond_trained"] = True
    return analyze(loaded, fixed_text(), temperatures=list(TEMPERATURES), window=WINDOW, max_tokens=n_tokens,
                   **kwargs)


def bucket_cost(loaded, n_tokens: int, repeats: int) -> dict:
    """The fused kernel on layer 15's real queries and keys at n_tokens, 4 temperatures, with the context-length
    buckets (distance bins, and sums per bucket of 1,024 positions) against without (one bin, one bucket): what
    the buckets add to the statistics pass. Measured alternately in this process; ratio of the medians."""
    from model_utils.core.statistics import distance_bins
    from model_utils.engine.kernel.library import load_kernel

    kernel = load_kernel()
    inputs = analyze_bundled(loaded, n_tokens, keep_maps=[(15, 0)]).kept[15]
    # numpy [4 temperatures, heads, n, d] as kept; the kernel takes tensors (the keys stand in for the values)
    query, key = torch.from_numpy(inputs.query), torch.from_numpy(inputs.key)
    multipliers = torch.tensor([[1.0 / t] * n_tokens for t in TEMPERATURES])
    full, single = torch.from_numpy(distance_bins(n_tokens)), torch.tensor([0, n_tokens])

    def run(edges, bucket_size):
        kernel.attention(query, key, key, multipliers, inputs.scaling, softcap=None, q_start=1, window=WINDOW,
                         sliding=None, edges=edges, bucket_size=bucket_size, with_output=True)

    run(full, 1024)
    with_buckets, without = [], []
    for _ in range(repeats):  # alternate, so that a drifting machine speed hits both alike
        without += timed(lambda: run(single, None), 1, warm_up=False)
        with_buckets += timed(lambda: run(full, 1024), 1, warm_up=False)
    return {"with": with_buckets, "without": without, "times": with_buckets,
            "ratio": statistics.median(with_buckets) / statistics.median(without)}


def recipe_cost(loaded, n_tokens: int, repeats: int) -> dict:
    """One in-model pass at T = 1 per recipe on n_tokens of the text, the recipes taking turns (so that a drifting
    machine speed hits all alike): no recipe on the fused kernel, the baseline; no recipe on the torch path
    (ATTN_KERNEL=torch); each distance remapping at the form's example parameters (core.rope.EXAMPLES), which takes
    the torch path. Times and the path each pass took (its report's kernel), by recipe."""
    from model_utils import analyze
    from model_utils.core.rope import EXAMPLES, REMAPS, parse_rope
    from model_utils.core.views import View

    cases = {NO_RECIPE: (None, "fused"), NO_RECIPE_TORCH: (None, "torch"),
             **{EXAMPLES[kind]: (parse_rope(EXAMPLES[kind]), "fused") for kind in REMAPS}}
    found = {label: {"times": [], "kernel": None} for label in cases}

    def run(label: str) -> None:
        rope, path = cases[label]
        os.environ["ATTN_KERNEL"] = path  # read by every pass (kernel.load_kernel)
        report = analyze(loaded, fixed_text(), temperatures=[1.0 if rope is None else View(1.0, rope)],
                         window=WINDOW, max_tokens=n_tokens, beyond_trained=n_tokens > loaded.max_positions)
        found[label]["kernel"] = report.kernel

    with mock.patch.dict(os.environ):  # ATTN_KERNEL as it was, after
        if n_tokens < WARM_UP_BELOW:
            for label in cases:
                run(label)
        for _ in range(repeats):
            for label in cases:
                found[label]["times"] += timed(lambda label=label: run(label), 1, warm_up=False)
    return {"recipes": found, "times": found[NO_RECIPE]["times"]}


NO_RECIPE, NO_RECIPE_TORCH = "no recipe", "no recipe, torch path"  # recipe_cost's two baselines


def profile_split(loaded, n_tokens: int) -> dict:
    """Seconds of one analysis by group, from a pyinstrument profile (frame names of this engine or an older)."""
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.005)
    profiler.start()
    analyze_bundled(loaded, n_tokens)
    profiler.stop()
    root = profiler.last_session.root_frame()
    groups = {"attention and statistics": ("probed_attention",),
              "output layer and loss": ("position_nll", "loss_and_last")}
    found = {group: 0.0 for group in groups}

    def walk(frame, inside: str | None = None):
        name = frame.function
        for group, names in groups.items():
            if inside is None and name in names:
                found[group] += frame.time
                inside = group
        for child in frame.children:
            walk(child, inside)

    walk(root)
    total = root.time
    return {"total": total, **found, "rest of the transformer": total - sum(found.values())}


def cli_times(repeats: int) -> dict:
    """A short analyze on the warm bundled model as a whole process, and `import model_utils` inside it; its
    baseline, measured alternately in the same run: a process that only imports torch and the transformers classes
    that run the model (LlamaForCausalLM, its tokenizer), which any Python tool running this model pays: most of
    the time, and the part that varies from machine to machine. Also alternating: the same analyze with torch on one
    thread (OMP_NUM_THREADS=1), which shows what waiting for a second thread on busy cores costs."""
    command = [sys.executable, "-m", "model_utils", "analyze", "--model", "bundled", "--max-tokens", "64",
               "--text", "The first token often collects a large share of the weight.", "--json", "-"]
    baseline = [sys.executable, "-c", "import torch; from transformers import LlamaForCausalLM, AutoTokenizer"]
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    subprocess.run(command, capture_output=True, check=True, env=env, cwd=ROOT)  # warm the cache

    def run(arguments: list[str], **extra: str) -> list[float]:
        return timed(lambda: subprocess.run(arguments, capture_output=True, check=True, env=env | extra, cwd=ROOT),
                     1, warm_up=False)

    wall, floor, one_thread = [], [], []
    for _ in range(repeats):
        wall += run(command)
        floor += run(baseline)
        one_thread += run(command, OMP_NUM_THREADS="1")
    imports = []
    for _ in range(repeats):
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import model_utils.__main__"],
                              capture_output=True, text=True, env=env, cwd=ROOT, check=True)
        top = next(line for line in done.stderr.splitlines()
                   if line.startswith("import time:") and line.split("|")[-1].strip() == "model_utils.__main__")
        imports.append(int(top.split("|")[1]) / 1e6)  # cumulative microseconds of the top-level import
    return {"times": wall, "import_times": imports, "import_median": statistics.median(imports),
            "baseline_times": floor, "baseline_median": statistics.median(floor), "one_thread_times": one_thread}


def first_use(repeats: int) -> dict:
    """The fused kernel's first use on a machine, in a fresh cache folder each time: compiling and linking it, its
    self-test in a child process (which imports torch and the torch path itself), and load_kernel() as a whole
    (both, and the checks at load)."""
    from model_utils.engine.kernel import build, library

    compiling, testing, whole = [], [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            built = build.compile_library(Path(folder) / "fused-attention.so")
            compiling.append(time.perf_counter() - started)
            started = time.perf_counter()
            refused = build.self_test(built)
            if refused is not None:
                raise RuntimeError(f"the fused kernel is refused: {refused}")
            testing.append(time.perf_counter() - started)
            os.environ["ATTN_CACHE_DIR"] = folder
            library._loaded.clear()
            started = time.perf_counter()
            if library.load_kernel() is None:
                raise RuntimeError("the fused kernel could not be had")
            whole.append(time.perf_counter() - started)
    return {"times": whole, "compile": compiling, "self_test": testing}


def half_precision(loaded, n_tokens: int) -> dict:
    """The bundled model cast to float16 and bfloat16 on the CPU, on either path: the largest difference of its loss
    (over the temperatures) and of its per-head statistics from float32's on the same path, and seconds per pass."""
    import copy
    from dataclasses import replace

    found = {}
    for path in ("fused", "torch"):
        os.environ["ATTN_KERNEL"] = path
        started = time.perf_counter()
        full = analyze_bundled(loaded, n_tokens)
        seconds = {"float32": time.perf_counter() - started}
        for dtype in (torch.float16, torch.bfloat16):
            half = replace(loaded, model=copy.deepcopy(loaded.model).to(dtype))
            started = time.perf_counter()
            report = analyze_bundled(half, n_tokens)
            name = str(dtype).removeprefix("torch.")
            seconds[name] = time.perf_counter() - started
            found[f"{path} {name}"] = {
                "kernel": report.kernel, "seconds": seconds[name], "float32_seconds": seconds["float32"],
                "loss": max(abs(a.loss - b.loss) for a, b in zip(report.results, full.results, strict=True)),
                "statistics": max(float(np.max(np.abs(a.heads[stat] - b.heads[stat])))
                                  for a, b in zip(report.results, full.results, strict=True)
                                  for stat in ("entropy", "normalized_entropy", "sink_mass", "recent_mass",
                                               "distant_mass")),
                "loss_at_1": full.results[1].loss}
            del half
    return found


def run_case(case: str, n_tokens: int, repeats: int) -> dict:
    from model_utils import load_model

    if case == "cold":
        times = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as folder:
                os.environ["ATTN_CACHE_DIR"] = folder
                started = time.perf_counter()
                load_model("bundled")
                times.append(time.perf_counter() - started)
        return {"times": times}
    if case == "redraw":
        return {"times": redraw_times(repeats)}
    if case == "cli":
        return cli_times(repeats)
    if case == "build":
        return first_use(repeats)
    if case == "warm":
        load_model("bundled")  # make sure the cache exists; the timed loads below read it
        return {"times": [load_model("bundled").load_seconds for _ in range(repeats)]}
    loaded = load_model("bundled")
    warm_up = n_tokens < WARM_UP_BELOW
    if case == "engine":
        return {"times": timed(lambda: analyze_bundled(loaded, n_tokens), repeats, warm_up)}
    if case == "buckets":
        return bucket_cost(loaded, n_tokens, repeats)
    if case == "recipes":
        return recipe_cost(loaded, n_tokens, repeats)
    if case == "half":
        return {"half": half_precision(loaded, n_tokens)}
    if case == "profile":
        return profile_split(loaded, n_tokens)
    # only here: an older engine's profile runs in a folder with no tests/ (bench/__main__.profile_before)
    from tests.support.models import reference_copy

    ids = token_ids(loaded, n_tokens)
    if case == "floor":
        model = reference_copy(loaded, "sdpa")

        def floor() -> None:
            with torch.inference_mode():
                for temperature in TEMPERATURES:
                    set_temperature(model, temperature)
                    model(ids, labels=ids)

        return {"times": timed(floor, repeats, warm_up)}
    if case == "peer":
        model = reference_copy(loaded, "eager")
        return {"times": timed(lambda: [peer_statistics(model, ids, t) for t in TEMPERATURES], repeats, warm_up)}
    if case == "agree":
        report = analyze_bundled(loaded, n_tokens)
        model = reference_copy(loaded, "eager")
        differences = {}
        for result, temperature in zip(report.results, TEMPERATURES, strict=True):
            peer = peer_statistics(model, ids, temperature)
            for name in ("entropy", "normalized_entropy", "sink_mass", "recent_mass", "distant_mass",
                         "log_top_ratio"):
                gap = float(np.max(np.abs(result.heads[name] - peer[name])))
                differences[name] = max(differences.get(name, 0.0), gap)
            differences["loss"] = max(differences.get("loss", 0.0), abs(result.loss - peer["loss"]))
        return {"max_abs_diff": differences}
    raise SystemExit(f"unknown case {case!r}")


def peak_rss_gb() -> float:
    """This process's peak resident memory; model_utils.core.machine's, or the same figure from `resource` under an
    older engine that has no such module."""
    try:
        from model_utils.core.machine import peak_rss_gb as engine_peak
    except ImportError:
        import resource

        return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9, 2)
    return engine_peak()


def main() -> None:
    case, n_tokens, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.manual_seed(0)
    outcome = run_case(case, n_tokens, repeats)
    if "times" in outcome:
        outcome["median"] = statistics.median(outcome["times"])
    outcome |= {"case": case, "n_tokens": n_tokens, "peak_rss_gb": peak_rss_gb()}
    print(json.dumps(outcome))


if __name__ == "__main__":
    main()
