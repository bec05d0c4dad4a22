"""One benchmark case in its own process: `python -m bench.cases CASE N_TOKENS REPEATS` prints one JSON line.

Cases (4 temperatures, in-model, statistics for every layer and head):
- engine: `analyze(...)`, the explorer's way.
- peer: the usual way (bertviz, Ecco, Inseq, most notebooks): an eager forward pass with output_attentions=True
  per temperature (T set by dividing each attention module's `scaling`), then the same statistics from the maps.
- floor: plain SDPA forward passes, one per temperature, no capture at all.
- agree: engine and peer statistics side by side (max abs differences), before anything is timed.
- cold / warm: loading the bundled model from the GGUF (into an empty cache) / from the converted cache.
Wall times are the median of REPEATS runs after one warm-up run; peak RSS is the process's maximum.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

TEMPERATURES = (0.5, 1.0, 1.5, 2.0)
WINDOW = 32
ASSETS = Path(__file__).resolve().parent.parent / "assets"


def fixed_text() -> str:
    """The same text for every case and size: the two long assets, repeated past 8192 tokens."""
    base = (ASSETS / "essay.txt").read_text() + "\n\n" + (ASSETS / "needle.txt").read_text() + "\n\n"
    return base * 4


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # ru_maxrss is in KiB on Linux


def timed(run, repeats: int) -> list[float]:
    run()  # warm-up
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
    from model_utils.metrics import statistics_from_probabilities

    set_temperature(model, temperature)
    with torch.inference_mode():
        output = model(ids, labels=ids, output_attentions=True)
        per_layer = [statistics_from_probabilities(maps[0], WINDOW) for maps in output.attentions]
        torch.softmax(output.logits[0, -1], dim=-1).topk(5)  # the next-token guesses the report also carries
    return {name: np.stack([layer[name] for layer in per_layer]) for name in per_layer[0]} | {
        "loss": float(output.loss)}


def token_ids(loaded, n_tokens: int) -> torch.Tensor:
    from model_utils.analysis import tokenize

    ids, _ = tokenize(loaded, fixed_text(), n_tokens)
    return torch.tensor(ids)[None]


def redraw_times(repeats: int) -> list[float]:
    """The Attention maps page on the bundled model: after the first (computing) run, re-draws that change only
    layer and head, timed through Streamlit's AppTest (script run, cache hit, map rebuild, figure)."""
    from streamlit.testing.v1 import AppTest

    os.environ["ATTN_MODEL"] = "bundled"
    app = AppTest.from_file(str(ASSETS.parent / "app.py"), default_timeout=900)
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


def run_case(case: str, n_tokens: int, repeats: int) -> dict:
    from model_utils import analyze, load_model
    from model_utils.loading import reference_copy

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
    if case == "warm":
        load_model("bundled")  # make sure the cache exists; the timed loads below read it
        return {"times": [load_model("bundled").load_seconds for _ in range(repeats)]}
    loaded = load_model("bundled")
    ids = token_ids(loaded, n_tokens)
    if case == "engine":
        text = fixed_text()
        times = timed(lambda: analyze(loaded, text, temperatures=list(TEMPERATURES), window=WINDOW,
                                      max_tokens=n_tokens), repeats)
        return {"times": times}
    if case == "floor":
        model = reference_copy(loaded, "sdpa")

        def floor() -> None:
            with torch.inference_mode():
                for temperature in TEMPERATURES:
                    set_temperature(model, temperature)
                    model(ids, labels=ids)

        return {"times": timed(floor, repeats)}
    if case == "peer":
        model = reference_copy(loaded, "eager")
        return {"times": timed(lambda: [peer_statistics(model, ids, t) for t in TEMPERATURES], repeats)}
    if case == "agree":
        report = analyze(loaded, fixed_text(), temperatures=list(TEMPERATURES), window=WINDOW, max_tokens=n_tokens)
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
