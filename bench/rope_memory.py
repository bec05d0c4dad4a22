"""Peak memory of RoPE recipes: one process per case (so each peak is its own), the bundled model on 2,048 tokens of
the built-in text, T = 1 on the model's own positions against the same pass plus four recipes (each a pass of its
own). A recipe builds a rotary module (frequencies only), so the peaks should differ by far less than the weights'
540 MB. Writes bench/ROPE.md.

    .venv/bin/python -m bench.rope_memory
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).with_name("ROPE.md")
CASES = {"T = 1, own positions": [], "T = 1 and 4 recipes (5 passes)": ["yarn:2", "yarn-rope:2", "dynamic:2",
                                                                          "linear:2"]}
CHILD = """
import json, sys
from model_utils import analyze, load_model
from model_utils.core.machine import peak_rss_gb
from model_utils.core.rope import parse_rope
from model_utils.core.views import View
from model_utils.experiments.texts import builtin_text
loaded = load_model("bundled")
loaded_at = peak_rss_gb()
views = [1.0] + [View(1.0, parse_rope(recipe)) for recipe in sys.argv[1:]]
report = analyze(loaded, builtin_text("long"), temperatures=views, max_tokens=2048, window=32)
weights = sum(p.numel() * p.element_size() for p in loaded.model.parameters()) / 1e9
print(json.dumps({"loaded": loaded_at, "peak": peak_rss_gb(), "weights": weights, "seconds": report.seconds,
                  "losses": [round(r.loss, 4) for r in report.results]}))
"""


def measure(recipes: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, *recipes], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[1])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    results = {name: measure(recipes) for name, recipes in CASES.items()}
    plain, recipes = results.values()
    lines = ["# Peak memory of RoPE recipes", "",
             "Written by `python -m bench.rope_memory`: one process per case, the bundled model, 2,048 tokens of the "
             "built-in text. A recipe is a pass of its own on a rotary module built from a copy of the config; the "
             "weights are shared.", "",
             "| case | after loading | peak | weights | seconds |", "|---|---:|---:|---:|---:|"]
    lines += [f"| {name} | {r['loaded']:.2f} GB | {r['peak']:.2f} GB | {r['weights']:.2f} GB | {r['seconds']:.1f} |"
              for name, r in results.items()]
    lines += ["", f"Four recipes more raise the peak by {recipes['peak'] - plain['peak']:+.2f} GB "
                  f"({recipes['peak'] / plain['peak']:.2f}x); a copy of the weights per recipe would add "
                  f"4 x {recipes['weights']:.2f} GB. Losses (T = 1, then the recipes in order): "
                  f"{', '.join(map(str, recipes['losses']))}; dynamic NTK equals T = 1 within the trained length."]
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
