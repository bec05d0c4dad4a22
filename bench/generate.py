"""What a continuation costs per token: the explorer's generation (a temperature inside every layer at every step,
one batch row per temperature, through the model's key-value cache) against transformers' own
`generate(do_sample=False)` on the same bundled model, prompt (256 and 2,048 tokens) and number of new tokens,
measured in one run (interleaved repeats, medians) and printed as ratios. `make bench` runs it. Writes
bench/GENERATE.md.

    .venv/bin/python -m bench.generate [--repeats 3] [--new-tokens 32]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import torch

from model_utils.core.machine import usable_cores
from model_utils.engine.generate import GenerationRequest, generate_continuations
from model_utils.engine.plugin import load_model
from model_utils.experiments.texts import builtin_text
from model_utils.models.load import load_plain_model

OUT = Path(__file__).with_name("GENERATE.md")
TARGET = 1.5  # the explorer's generation at most 1.5x transformers' per token
PROMPTS = (256, 2048)  # tokens of prompt: a sentence's worth of context and a long one


def hf_seconds(plain, ids: list[int], rows: int, new_tokens: int) -> float:
    inputs = torch.tensor([ids] * rows)
    started = time.perf_counter()
    with torch.inference_mode():
        plain.model.generate(inputs, attention_mask=torch.ones_like(inputs), max_new_tokens=new_tokens,
                             min_new_tokens=new_tokens, do_sample=False, pad_token_id=plain.tokenizer.eos_token_id)
    return time.perf_counter() - started


def engine_seconds(loaded, text: str, temperatures: list[float], new_tokens: int, prompt: int) -> float:
    request = GenerationRequest(temperatures=temperatures, max_new_tokens=new_tokens, max_tokens=prompt)
    started = time.perf_counter()
    generate_continuations(loaded, text, request)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--new-tokens", type=int, default=32)
    args = parser.parse_args()
    loaded, plain = load_model("bundled"), load_plain_model("bundled")
    ids = loaded.tokenizer(builtin_text("long"))["input_ids"]
    cases = [(prompt, [1.0]) for prompt in PROMPTS] + [(PROMPTS[0], [0.5, 1.0, 2.0])]
    times: dict[tuple[str, int, int], list[float]] = {}
    for _ in range(args.repeats):  # interleaved, so a slow minute on a shared machine hits both sides
        for prompt, temperatures in cases:
            text = loaded.tokenizer.decode(ids[:prompt])  # the same prompt for both
            prompt_ids = loaded.tokenizer(text)["input_ids"][:prompt]
            rows = len(temperatures)
            times.setdefault(("transformers", prompt, rows), []).append(
                hf_seconds(plain, prompt_ids, rows, args.new_tokens))
            times.setdefault(("explorer", prompt, rows), []).append(
                engine_seconds(loaded, text, temperatures, args.new_tokens, prompt))
    lines = ["# A continuation per token: the explorer against transformers' generate", "",
             f"Machine: {usable_cores()} cores, Python {platform.python_version()}, torch {torch.__version__}, "
             f"1-minute load average {os.getloadavg()[0]:.1f} at the end (other work on it inflates the absolute "
             "times; the ratios are the measure). "
             f"Written by `python -m bench.generate --repeats {args.repeats} --new-tokens {args.new_tokens}`: the "
             f"bundled model, prompts of the built-in text, {args.new_tokens} greedy tokens, medians of "
             f"{args.repeats} interleaved runs (prompt included, as a page pays it). Target: the explorer at most "
             f"{TARGET}x transformers per token.", "",
             "| prompt tokens | temperatures (batch rows) | transformers ms/token | explorer ms/token | "
             "explorer / transformers | target |", "|---:|---|---:|---:|---:|---|"]
    for prompt, temperatures in cases:
        rows = len(temperatures)
        hf = statistics.median(times[("transformers", prompt, rows)]) / args.new_tokens * 1000
        ours = statistics.median(times[("explorer", prompt, rows)]) / args.new_tokens * 1000
        ratio = ours / hf
        met = "met" if ratio <= TARGET else "missed"
        lines.append(f"| {prompt:,} | {', '.join(f'{t:g}' for t in temperatures)} ({rows}) | {hf:.1f} | "
                     f"{ours:.1f} | {ratio:.2f}x | {met} (<= {TARGET}x) |")
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
