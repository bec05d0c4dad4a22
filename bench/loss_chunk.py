"""The loss's lm_head chunk: position_nll on the same hidden states with chunks of 2^24 floats (64 positions of one
Gemma 3 row, the earlier size) against 2^26 (256), alternating, in one process. Gemma 3 270M when installed (`make
models`; its 262k vocabulary is why the chunk matters), else the bundled model. Writes bench/LOSS_CHUNK.md.

    .venv/bin/python -m bench.loss_chunk [--positions 4096] [--rounds 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from model_utils.core import names
from model_utils.core.machine import peak_rss_gb
from model_utils.engine import analyze as analysis
from model_utils.engine.plugin import load_model

OUT = Path(__file__).with_name("LOSS_CHUNK.md")
SIZES = {"2^24 floats (before)": 1 << 24, "2^26 floats (now)": 1 << 26}


def timed(loaded, hidden: torch.Tensor, ids: torch.Tensor, elements: int) -> tuple[float, torch.Tensor]:
    analysis.LOSS_CHUNK_ELEMENTS = elements
    started = time.perf_counter()
    nll, _ = analysis.position_nll(loaded, hidden, ids)
    return time.perf_counter() - started, nll


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    name = "gemma3-270m" if names.package_installed(names.GEMMA_PACKAGE) else "bundled"
    loaded = load_model(name)
    vocab = loaded.text_config.vocab_size
    generator = torch.Generator().manual_seed(0)
    hidden = torch.randn(1, args.positions, loaded.text_config.hidden_size, generator=generator)
    ids = torch.randint(0, vocab, (args.positions,), generator=generator)
    seconds = {label: [] for label in SIZES}
    results = {}
    with torch.inference_mode():
        for _ in range(args.rounds):  # alternating, so a change in the machine's speed falls on both
            for label, elements in SIZES.items():
                spent, results[label] = timed(loaded, hidden, ids, elements)
                seconds[label].append(spent)
    before, now = (min(seconds[label]) for label in SIZES)
    first, second = (results[label] for label in SIZES)
    gap = float((first - second).abs().max())
    lines = [f"# The loss's lm_head chunk ({loaded.name}, vocabulary {vocab:,}, {args.positions:,} positions of one "
             f"row, {torch.get_num_threads()} threads, best of {args.rounds} alternating rounds)", "",
             "| chunk | positions per chunk | seconds | per 49,152 positions |", "|---|---:|---:|---:|"]
    for label, elements in SIZES.items():
        best = min(seconds[label])
        lines.append(f"| {label} | {max(1, elements // vocab):,} | {best:.2f} | "
                     f"{best * 49_152 / args.positions:.0f} s |")
    lines += ["", f"Before / now: **{before / now:.2f}x**. Largest difference in a position's NLL: {gap:.1e}. "
              f"Peak RSS of the process: {peak_rss_gb():.2f} GB.", "",
              "Command: `.venv/bin/python -m bench.loss_chunk`", ""]
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
