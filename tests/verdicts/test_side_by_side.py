"""The committed sweeps side by side (words.side_by_side_rows): one row per sweep, each cell its own verdict's
number for the model it ran on, the untrained mass per layer type where the model has several."""

import json
from dataclasses import replace
from pathlib import Path

from model_utils.core.names import GEMMA
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.verdict import Dominant, LeverKind
from model_utils.core.views import View
from model_utils.verdicts.words import NO_VALUE, SIDE_BY_SIDE_COLUMNS, side_by_side_row, side_by_side_rows, signed, span

COMMITTED = Path(__file__).resolve().parents[2] / "assets" / "sweeps" / "bundled-16k.json"


def read(path: Path) -> SweepDocument:
    return SweepDocument.from_dict(json.loads(path.read_text()))


def test_the_committed_sweeps_row_is_its_verdict():
    document = read(COMMITTED)
    verdict = document.verdict
    decomposition = verdict.decomposition
    row = side_by_side_row(document)
    assert tuple(row) == SIDE_BY_SIDE_COLUMNS
    assert row["trained length"] == "8,192" and row["tokens"] == "16,384"
    assert row["loss at T = 1 breaks in"] == f"{span(verdict.loss_break.bucket)} ({verdict.loss_break.ratio:.3g}x)"
    assert row["loss rise"] == f"{verdict.rise:+.2f}"
    temperature = decomposition.best(LeverKind.TEMPERATURE)
    assert row["best T alone"] == signed(temperature.saved, temperature.interval)
    recipe = decomposition.lever(Dominant.RECIPE)
    assert not recipe.own_temperature  # a recipe alone, not YaRN with its own temperature
    assert row["best recipe alone"].endswith(signed(recipe.saved, recipe.interval))
    assert row["temperature on top"].count(";") == len(decomposition.on_top()) - 1
    # one layer type: T = 1's mass over every layer, as the decomposition's T = 1 row gives it
    assert row["untrained-distance mass at T = 1"] == f"{decomposition.row_of(View(1.0)).untrained_mass_past:.3f}"


def test_a_model_with_sliding_and_global_layers_gives_its_mass_per_type(tiny_gemma_sweep_file):
    document = replace(read(tiny_gemma_sweep_file), model=GEMMA)
    sliding, full = document.verdict.layer_types
    row = side_by_side_row(document)
    assert row["trained length"] == "64" and row["tokens"] == "256"
    assert row["untrained-distance mass at T = 1"] == f"sliding 8: 0.000; global: {full.untrained_mass_past:.3f}"
    assert sliding.untrained_mass_past == 0 < full.untrained_mass_past
    assert len(document.verdict.decomposition.on_top()) == 2  # a T on yarn-rope, and YaRN's own on its interpolation
    assert row["temperature on top"].count(";") == 1


def test_rows_keep_the_order_of_the_sweeps_and_a_sweep_without_verdict_has_no_numbers(tiny_gemma_sweep_file):
    bundled, gemma = read(COMMITTED), read(tiny_gemma_sweep_file)
    assert [row["trained length"] for row in side_by_side_rows([gemma, bundled])] == ["64", "8,192"]
    row = side_by_side_row(replace(gemma, verdict=None))
    assert [row[column] for column in SIDE_BY_SIDE_COLUMNS[4:]] == [NO_VALUE] * 6 and row["tokens"] == "256"
