"""The sweep document's record (core/records/sweep.py): the committed sweep (format 4: views by their labels) reads
with its views whole and writes back to itself, the older formats are read, a cached pass of either form reads, and a
missing key or another format is refused with a message that names it."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from model_utils.core.records import RecordError
from model_utils.core.records.base import OLD_VIEW_KEYS
from model_utils.core.records.run import RunInfo
from model_utils.core.records.sweep import FORMAT, BestEntry, SweepDocument, SweepPass, read_pass
from model_utils.core.records.verdict import ContextVerdict
from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule
from model_utils.core.views import View
from tests.support.records import verdict_by_labels

COMMITTED = Path(__file__).resolve().parents[2] / "assets" / "sweeps" / "bundled-16k.json"


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads(COMMITTED.read_text())


@pytest.fixture(scope="module")
def record(committed) -> SweepDocument:
    return SweepDocument.from_dict(committed)


@pytest.fixture(scope="module")
def written(record) -> dict:
    """The committed sweep in this format, as to_dict writes it."""
    return record.to_dict()


def without(data, path: tuple, key: str):
    """A copy of `data` (copied along `path` only) without `key` at `path`."""
    if not path:
        return {name: value for name, value in data.items() if name != key}
    copied = list(data) if isinstance(data, list) else dict(data)
    copied[path[0]] = without(data[path[0]], path[1:], key)
    return copied


def test_the_committed_sweep_round_trips_through_its_record(record, written):
    assert written["format"] == FORMAT
    again = SweepDocument.from_dict(json.loads(json.dumps(written, allow_nan=False)))
    assert again == record
    assert again.to_dict() == written


def but_verdict(data: dict) -> dict:
    return {key: value for key, value in data.items() if key != "verdict"}


def test_the_committed_sweep_is_read_as_written(committed, record, written):
    """The committed file (format 4) comes back key for key, its verdict too (given the cut-context reference by
    `make cut-context`), each result's view whole where it stored its label, temperature, schedule label and
    applied recipe, its verdict's passes whole where it named them by their labels, and the bootstrap's method as the
    fact where it stored its sentence; the bundled model has one layer type, so no layer has a window of its own."""
    assert committed["format"] == 4 and written["format"] == FORMAT == 6
    assert written["bootstrap"] == committed["bootstrap"] | {"method": "block-bootstrap"}
    assert committed["bootstrap"]["method"] == "moving-block bootstrap over the positions of each bucket"
    changed = ("format", "results", "text_name", "verdict", "bootstrap")
    assert {k: v for k, v in written.items() if k not in changed} == {
        k: v for k, v in committed.items() if k not in changed}
    # as committed, its passes by their labels, with what the file's own results fill in where it held none
    verdict = verdict_by_labels(written["verdict"])
    assert without(without(verdict, ("loss_break",), "past_nll"), ("decomposition",), "rows") == without(
        committed["verdict"], ("decomposition",), "rows")
    assert [without(row, (), "schedule") for row in verdict["decomposition"]["rows"]] == committed["verdict"][
        "decomposition"]["rows"]
    assert verdict["loss_break"]["past_nll"] == list(record.verdict.loss_break.past_nll)
    assert [row["schedule"]["name"] for row in verdict["decomposition"]["rows"] if row["kind"] == "schedule"] == [
        result.view.schedule.name for result in record.results if result.view.schedule is not None]
    assert written["text_name"] == "Python's pydoc_data.topics"
    for old, new in zip(committed["results"], written["results"], strict=True):
        assert View.from_dict(new["view"]).label == old["label"]
        applied = record.results[0].applied_rope() if old["rope"] is None else old["rope"]
        assert {k: v for k, v in new.items() if k not in ("view", "attention_factor", "rope_layer_types")} == {
            k: v for k, v in old.items() if k not in OLD_VIEW_KEYS}
        assert applied == SweepDocument.from_dict(written).results[written["results"].index(new)].applied_rope()
    schedules = [result.view for result in record.results if result.schedule is not None]
    assert schedules[:2] == [View(Schedule("yarn", 2.0)), View(Schedule("qwen-logn", 8192.0))]  # all:trained
    assert written["verdict"]["format"] == 6 and record.cut_context is not None
    assert record.layer_windows == (None,) * 30
    assert list(record.best_by_rope) == [Rope("yarn-rope", 2.0), Rope("self-extend", group=4, window=2048)]


def test_a_file_of_format_5_reads_its_methods_sentence_as_the_fact(written, record):
    """Format 5 stored the bootstrap's method as its sentence: read as the method it names; one this version does
    not know is refused."""
    older = written | {"format": 5, "bootstrap": written["bootstrap"] | {
        "method": "moving-block bootstrap over the positions of each bucket"}}
    assert SweepDocument.from_dict(older) == record
    with pytest.raises(RecordError, match="made its intervals by 'jackknife', a method this version does not know"):
        SweepDocument.from_dict(older | {"bootstrap": older["bootstrap"] | {"method": "jackknife"}})


def test_a_verdict_that_names_a_view_none_of_its_results_ran_is_refused(committed):
    """An older verdict's labels are matched to the document's own views, never parsed: one it does not hold is
    damage."""
    verdict = committed["verdict"]
    rows = [dict(row) for row in verdict["decomposition"]["rows"]]
    rows[3]["view"] = "yarn-rope (s=3) + T=1"
    damaged = committed | {"verdict": verdict | {"decomposition": verdict["decomposition"] | {"rows": rows}}}
    with pytest.raises(RecordError, match=r"names yarn-rope \(s=3\) \+ T=1, which none of the file's results ran"):
        SweepDocument.from_dict(damaged)


def test_a_file_of_format_2_reads_to_the_same_record_without_layer_windows(committed, record, written):
    """Format 2 did not record the layers' windows: read as None, every other key as written."""
    older = {key: value for key, value in committed.items() if key != "layer_windows"} | {"format": 2}
    read = SweepDocument.from_dict(older)
    assert read.layer_windows is None
    assert but_verdict(read.to_dict()) == but_verdict(written) | {"layer_windows": None}
    assert read.verdict == record.verdict


def test_a_file_of_format_1_reads_to_the_same_record(committed, record):
    """Format 1 (no number, no layer windows) wrote best_by_rope keyed by the recipe's label: read by matching it to
    a result's Rope, never by parsing it."""
    older = {key: value for key, value in committed.items() if key not in ("format", "best_by_rope", "layer_windows")}
    older["best_by_rope"] = {Rope.from_dict(entry["rope"]).label: entry["best"] for entry in committed["best_by_rope"]}
    assert SweepDocument.from_dict(older) == replace(record, layer_windows=None)


def test_the_record_holds_recipes_arrays_and_entries(committed, record):
    assert len(record.results) == len(committed["results"]) == 30
    yarn = next(result for result in record.results if result.label == "yarn (s=2) + T=1")
    assert yarn.rope == Rope("yarn", 2.0) and yarn.recipe == "yarn (s=2)"
    assert yarn.attention_factor == pytest.approx(0.1 * np.log(2) + 1)
    reference = record.reference()
    assert reference.label == "T=1" and reference.rope is None and reference.recipe is None
    heads = reference.heads["entropy"]
    assert heads.dtype == np.float64 and heads.shape == (16, 30, 9)  # [bucket, layer, head]
    np.testing.assert_array_equal(heads, committed["results"][3]["heads"]["entropy"])
    assert reference.distance_profile_layers.shape == (16, 30, len(record.distance_bins) - 1)
    assert record.buckets[0] == (1, 1024) and isinstance(record.best[0], BestEntry)
    assert record.best[0].bucket == (1, 1024) and record.best[0].positions == 1023
    assert record.run.machine.startswith("x86_64") and isinstance(record.verdict, ContextVerdict)


def test_a_result_differs_from_one_with_other_numbers(record):
    first = record.results[0]
    other = SweepDocument.from_dict(record.to_dict()).results[0]
    assert first == other
    other.heads["entropy"][0, 0, 0] += 1e-9
    assert first != other


@pytest.mark.parametrize("path, key, kind", [((), "trained_length", "sweep document"),
                                             ((), "layer_windows", "sweep document"),
                                             (("results", 0), "heads", "sweep document"),
                                             (("best", 3), "saved_interval", "sweep document"),
                                             (("bootstrap",), "block", "sweep document"),
                                             (("results", 15), "attention_factor", "sweep document"),
                                             (("run",), "machine", "run record")])
def test_a_missing_key_is_refused_by_name(written, path, key, kind):
    with pytest.raises(RecordError, match=f"{kind} has no '{key}'.*regenerate it"):
        SweepDocument.from_dict(without(written, path, key))


@pytest.mark.parametrize("found", [1, FORMAT + 1, "2", None])
def test_another_format_is_refused(written, found):
    with pytest.raises(RecordError, match=f"sweep document has format {found!r}; this version reads format 2, 3, "
                                          f"4, 5, {FORMAT}"):
        SweepDocument.from_dict(written | {"format": found})


def test_a_file_that_is_no_document_is_refused():
    with pytest.raises(RecordError, match="a sweep document must be a JSON object, got list"):
        SweepDocument.from_dict([1, 2])


def test_an_older_file_with_best_temperatures_on_a_recipe_it_did_not_run_is_refused(committed):
    damaged = {key: value for key, value in committed.items() if key != "format"} | {
        "best_by_rope": {"linear (s=4)": []}}
    with pytest.raises(RecordError, match=r"best temperatures on linear \(s=4\), a recipe none of its results ran"):
        SweepDocument.from_dict(damaged)


def test_a_pass_round_trips_and_names_a_missing_key(record):
    result = replace(record.results[15], multipliers=None)
    passed = SweepPass(result=result, n_tokens=11, trained_length=8, q_start=1, buckets=((1, 8), (8, 11)),
                       position_nll=np.full(10, 2.5))
    data = json.loads(json.dumps(passed.to_dict()))
    assert read_pass(data, result.view) == passed and passed.result.rope == Rope("yarn", 2.0)
    del data["position_nll"]
    with pytest.raises(RecordError, match="sweep pass has no 'position_nll'"):
        read_pass(data, result.view)


def test_a_pass_cached_before_views_were_stored_whole_reads_as_the_view_of_its_key(record):
    """The pass cache's older form is flat (the result's fields beside the pass's own, the view by its label and the
    recipe as applied): read as the view its key was made from, and refused when it holds another."""
    result = replace(record.results[15], multipliers=None)
    flat = {"label": result.label, "temperature": result.temperature, "schedule": None, "rope": result.applied_rope(),
            **{k: v for k, v in result.to_dict().items() if k not in ("view", "attention_factor", "rope_layer_types",
                                                                        "multipliers")},
            "position_nll": [2.5] * 10, "n_tokens": 11, "trained_length": 8, "q_start": 1, "buckets": [[1, 8], [8, 11]]}
    passed = read_pass(flat, result.view)
    assert passed.result == result and passed.position_nll.tolist() == [2.5] * 10
    with pytest.raises(RecordError, match=r"holds yarn \(s=2\) \+ T=1, not the view T=1 its key names"):
        read_pass(flat, View(1.0))


def test_the_run_record_round_trips():
    run = RunInfo(command="python -m model_utils sweep", date="2026-01-01T00:00:00", wall_seconds=1.5,
                  peak_rss_gb=2.0, machine="x86_64, 2 cores")
    assert RunInfo.from_dict(run.to_dict()) == run


def test_every_committed_sweep_pass_reads_as_the_view_it_was_cached_for():
    """The committed pass caches (Gemma's sweep and tune) are of the flat form, each under the key of its label; a
    pass reads as the view its key names (here matched from its label, as its key was made)."""
    from model_utils.core.records.base import old_view

    paths = sorted((COMMITTED.parents[1] / "passes").glob("gemma3-270m-*/*.json"))
    assert len(paths) >= 40
    for path in paths:
        data = json.loads(path.read_text())
        view = View.from_dict(old_view(data, (data["n_tokens"],), data["trained_length"], "sweep pass"))
        passed = read_pass(data, view)
        assert passed.result.label == data["label"] and passed.position_nll.shape == (data["n_tokens"] - 1,)
