"""The committed sweeps side by side (verdicts/side_by_side.py): one row per sweep, each cell its own verdict's
number for the model it ran on, the untrained mass per layer type where the model has several."""

import json
from dataclasses import replace
from pathlib import Path

from model_utils.core.names import GEMMA
from model_utils.core.records.sweep import SweepDocument
from model_utils.verdicts import NO_VALUE
from model_utils.verdicts.context import context_verdict
from model_utils.verdicts.side_by_side import COLUMNS, sweep_row, sweep_rows

COMMITTED = Path(__file__).resolve().parents[2] / "assets" / "sweeps" / "bundled-16k.json"


def read(path: Path) -> SweepDocument:
    return SweepDocument.from_dict(json.loads(path.read_text()))


def interval(lever) -> str:
    low, high = lever.interval
    return f"{lever.saved:+.3f} ({low:+.3f} to {high:+.3f})"


def test_the_committed_sweeps_row_is_its_verdict():
    document = read(COMMITTED)
    verdict = context_verdict(document)
    row = sweep_row(document)
    assert tuple(row) == COLUMNS
    assert row["model"] == "SmolLM2-135M" and row["trained length"] == "8,192" and row["tokens"] == "16,384"
    assert row["text"] == "Python's pydoc_data.topics"
    assert row["loss at T = 1 breaks at"] == f"{verdict.breaks_at:,} ({verdict.breaks['ratio']:.3g}x)"
    assert row["loss rise"] == f"{verdict.rise:+.2f}"
    temperature = verdict.decomposition.best(("temperature",))
    assert temperature.label == "best T per bucket (cross-fit on one text)"
    assert row["best T alone"] == interval(temperature)
    recipe = verdict.decomposition.lever("recipe")
    assert not recipe.own_temperature  # a recipe alone, not YaRN with its own temperature
    assert row["best recipe alone"] == f"{recipe.label}: {interval(recipe)}"
    on_top = [lever for lever in verdict.decomposition.levers if lever.kind == "on_top"]
    assert "yarn (s=2) + T=1 vs yarn-rope (s=2) + T=1" in [lever.label for lever in on_top]
    assert row["temperature on top"] == "; ".join(f"{lever.label}: {interval(lever)}" for lever in on_top)
    # one layer type: T = 1's mass over every layer, as the decomposition's T = 1 row gives it
    assert row["untrained-distance mass at T = 1"] == f"{verdict.decomposition.rows[0]['untrained_mass_past']:.3f}"


def test_a_model_with_sliding_and_global_layers_gives_its_mass_per_type(tiny_gemma_sweep_file):
    document = replace(read(tiny_gemma_sweep_file), model=GEMMA)
    verdict = context_verdict(document)
    row = sweep_row(document)
    sliding, full = verdict.layer_types
    assert row["model"] == "Gemma 3 270M" and row["trained length"] == "64" and row["tokens"] == "256"
    assert row["untrained-distance mass at T = 1"] == f"sliding 8: 0.000; global: {full.untrained_mass_past:.3f}"
    assert sliding.untrained_mass_past == 0 < full.untrained_mass_past
    tops = row["temperature on top"].split("; ")
    assert [top.split(": ")[0] for top in tops] == [
        lever.label for lever in verdict.decomposition.levers if lever.kind == "on_top"]
    assert len(tops) == 2  # a temperature on yarn-rope, and YaRN's own on top of its interpolation


def test_rows_keep_the_order_of_the_sweeps_and_a_sweep_without_verdict_says_so(tiny_gemma_sweep_file):
    bundled, gemma = read(COMMITTED), read(tiny_gemma_sweep_file)
    assert [row["trained length"] for row in sweep_rows([gemma, bundled])] == ["64", "8,192"]
    short = replace(gemma, verdict=None)
    row = sweep_row(short)
    assert [row[column] for column in COLUMNS[4:]] == [NO_VALUE] * 6 and row["tokens"] == "256"
