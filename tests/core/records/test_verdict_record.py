"""The verdict as records: every committed result file (sweeps, corpus summaries, fits) reads through its record and
writes back to the same record, its verdict a ContextVerdict; the committed sweeps' format-3 verdicts upgrade to
rows whose words are the ones that format stored; and no field of a record is an untyped dict, a list of dicts or
Any."""

import importlib
import json
import pkgutil
import re
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest

import model_utils.core.records
import model_utils.verdicts
from model_utils.core.records.base import old_view
from model_utils.core.records.fit import FORMAT as FIT_FORMAT
from model_utils.core.records.fit import FitSummary
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import ContextVerdict
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.verdicts import words

ASSETS = Path(__file__).resolve().parents[3] / "assets"
COMMITTED = [*sorted((ASSETS / "sweeps").glob("*.json")), *sorted((ASSETS / "tune").glob("*/summary.json")),
             *sorted((ASSETS / "fit").glob("*/fit.json"))]
RECORD = {"sweeps": SweepDocument, "tune": TuneSummary, "fit": FitSummary}


def record_of(path: Path) -> type:
    return RECORD[path.relative_to(ASSETS).parts[0]]


@pytest.fixture(scope="module")
def raw() -> dict[Path, dict]:
    return {path: json.loads(path.read_text()) for path in COMMITTED}


def test_the_committed_results_are_the_ones_this_test_reads():
    assert {record_of(path) for path in COMMITTED} == set(RECORD.values()) and len(COMMITTED) >= 6


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: str(path.relative_to(ASSETS)))
def test_every_committed_result_round_trips_through_its_record(raw, path):
    record = record_of(path).from_dict(raw[path])
    written = record.to_dict()
    assert record_of(path).from_dict(json.loads(json.dumps(written, allow_nan=False))) == record
    if record_of(path) is not FitSummary:
        assert isinstance(record.verdict, ContextVerdict)
        assert written["verdict"]["format"] == 6
    if record_of(path) is FitSummary:  # written in format 3, upgraded (test_fit_record.py compares key for key)
        assert raw[path]["format"] == 3 and written["format"] == FIT_FORMAT


def views_of(stored: dict) -> list[View]:
    """The views a stored format-3 verdict names: T = 1 on each of its recipes, and its schedules, each label matched
    to the schedules such a run made (records.base.old_view), as the sweep that held it gives them."""
    old = stored["verdict"]
    lengths, trained = (old["past"][1],), old["trained_length"]
    schedules = [View.from_dict(old_view({"label": entry["label"], "temperature": None, "rope": None}, lengths,
                                         trained, "test")) for entry in old["schedules"]]
    return [*(View(1.0, Rope.from_dict(rope)) for rope in stored["ropes"].values()), *schedules]


def test_a_format_3_verdict_upgrades_to_the_words_it_stored():
    """The bundled sweep's verdict as committed in format 3 (tests/core/records/format3_verdict.json), which stored
    each row's name and description and each lever's share: the upgraded rows say the same through verdicts/words, and
    carry the same numbers."""
    stored = json.loads((Path(__file__).parent / "format3_verdict.json").read_text())
    old = stored["verdict"]
    verdict = ContextVerdict.from_dict(old, views=views_of(stored), block=stored["block"])
    table = verdict.decomposition.table
    assert [words.row_label(row) for row in table] == [row["label"] for row in old["decomposition"]["rows"]]
    assert [words.row_what(row, verdict) for row in table] == [row["what"] for row in old["decomposition"]["rows"]]
    assert [row.saved for row in table] == [row["saved"] for row in old["decomposition"]["rows"]]
    levers = verdict.decomposition.levers
    assert [words.row_label(row) for row in levers] == [lever["label"] for lever in old["decomposition"]["levers"]]
    assert [verdict.decomposition.share_of_rise(row) for row in levers] == [
        lever["share_of_rise"] for lever in old["decomposition"]["levers"]]
    assert [(row.view.label, row.saved) for row in verdict.decomposition.schedules()] == [
        (entry["label"], entry["saved"]) for entry in old["schedules"]]
    assert verdict.decomposition.dominant.value == old["decomposition"]["dominant"]
    assert words.scope(verdict.documents) == old["scope"] and words.resampling(verdict) == old["bootstrap"]
    assert verdict.loss_break.at == old["breaks_at"] and verdict.rise == old["rise"]


def test_a_format_2_verdict_reads_without_layer_types():
    """Format 2 had no layer types: read as None, every other number as stored (Gemma's format-3 verdict, which has
    two layer types, stripped of them: tests/core/records/format3_gemma_verdict.json)."""
    stored = json.loads((Path(__file__).parent / "format3_gemma_verdict.json").read_text())
    data = stored["verdict"]
    older = {key: value for key, value in data.items() if key != "layer_types"} | {"format": 2}
    verdict = ContextVerdict.from_dict(older, views=views_of(stored), block=stored["block"])
    current = ContextVerdict.from_dict(data, views=views_of(stored), block=stored["block"])
    assert current.layer_types is not None and verdict.layer_types is None
    assert verdict.decomposition.levers == current.decomposition.levers


# --- no untyped field ------------------------------------------------------------------------------------------------

UNTYPED = re.compile(r"\bAny\b|\bobject\b|\bdict\b(?!\[)|\b(?:list|tuple|Sequence)\[dict\b")


def record_fields() -> list[tuple[str, str]]:
    """(class.field, annotation) of every dataclass field declared in model_utils.core.records and
    model_utils.verdicts."""
    found = []
    for package in (model_utils.core.records, model_utils.verdicts):
        for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            for cls in vars(module).values():
                if isinstance(cls, type) and is_dataclass(cls) and cls.__module__ == module.__name__:
                    found += [(f"{cls.__name__}.{item.name}", str(item.type)) for item in fields(cls)]
    return found


def test_the_scan_tells_a_typed_field_from_an_untyped_one():
    assert [bool(UNTYPED.search(text)) for text in ("dict | None", "list[dict]", "tuple[dict, ...]", "Any",
                                                    "dict[str, object]")] == [True] * 5
    assert not any(UNTYPED.search(text) for text in ("dict[str, Gain]", "LossBreak | None", "tuple[float, ...]",
                                                     "Mapping[int, Interval]"))


def test_no_record_field_is_an_untyped_dict_or_any():
    scanned = record_fields()
    assert len(scanned) > 150  # every record of both packages, not a few
    assert [f"{name}: {annotation}" for name, annotation in scanned if UNTYPED.search(annotation)] == []

