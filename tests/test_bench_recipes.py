"""`make bench`'s recipes section (bench/cases.recipe_cost, bench/__main__.recipe_table) on the tiny model: every
distance remapping runs on the torch path against no recipe on either path, measured in the same rounds, and the
table's ratios are those of the medians."""

import os
import statistics

from bench.__main__ import recipe_table
from bench.cases import NO_RECIPE, NO_RECIPE_TORCH, recipe_cost
from model_utils.core.rope import EXAMPLES, REMAPS


def test_each_remapping_is_timed_against_no_recipe_on_its_path(tiny):
    kernel = os.environ.get("ATTN_KERNEL")
    found = recipe_cost(tiny, 1280, 1)
    assert os.environ.get("ATTN_KERNEL") == kernel  # the switch between paths does not outlive the case
    runs = found["recipes"]
    assert list(runs) == [NO_RECIPE, NO_RECIPE_TORCH, *(EXAMPLES[kind] for kind in REMAPS)]
    assert runs[NO_RECIPE_TORCH]["kernel"] == "torch"
    assert all(runs[EXAMPLES[kind]]["kernel"] == "torch" for kind in REMAPS)  # the fused kernel remaps nothing
    assert all(len(run["times"]) == 1 and min(run["times"]) > 0 for run in runs.values())
    table = recipe_table([found | {"n_tokens": 1280}, {"n_tokens": 16384, "error": "not run"}])
    row = next(line for line in table.splitlines() if line.startswith("| 1,280 | self-extend:2,1024 | torch |"))
    seconds = statistics.median(runs["self-extend:2,1024"]["times"])
    base = statistics.median(runs[NO_RECIPE]["times"])
    assert row.endswith(f" | {seconds / base:.2f}x | "
                        f"{seconds / statistics.median(runs[NO_RECIPE_TORCH]['times']):.2f}x |")
    assert sum(line.startswith(("- met: 1,280 tokens", "- MISSED: 1,280 tokens")) for line in table.splitlines()) == 4
    assert "- recipes at 16,384 tokens failed: not run" in table
