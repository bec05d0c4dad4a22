"""The corpus-tune summary record on the committed summary.json (format 2: views by their labels): read with every
view whole and every number as committed, written back in this format and read again unchanged, and a file with a
missing key, of another format or with a recipe it cannot read refused with a RecordError that names the fix."""

import copy
import json
from pathlib import Path

import pytest

from model_utils.core.records import RecordError
from model_utils.core.records.base import OLD_VIEW_KEYS
from model_utils.core.records.tune import FORMAT, OLDER, TuneSummary, previous_runs
from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule
from model_utils.core.views import View, reference_index
from tests.support.records import verdict_by_labels

COMMITTED = Path(__file__).resolve().parents[3] / "assets" / "tune" / "bundled-builtin" / "summary.json"


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads(COMMITTED.read_text())


def without(entry: dict, keys) -> dict:
    return {key: value for key, value in entry.items() if key not in keys}


def test_the_committed_summary_reads_its_views_whole_and_round_trips(committed):
    summary = TuneSummary.from_dict(committed)
    written = summary.to_dict()
    assert TuneSummary.from_dict(json.loads(json.dumps(written))) == summary and written["format"] == FORMAT == 4
    viewed = ("results", "schedules", "recipes", "domains", "verdict", "bootstrap")
    assert without(written, ("format", *viewed)) == without(committed, ("format", *viewed))  # every other key kept
    # as committed, its passes by their labels, with what the summary's own results fill in where it held none
    verdict = verdict_by_labels(written["verdict"])
    rows = verdict["decomposition"]["rows"]
    assert verdict | {"loss_break": without(verdict["loss_break"], ("past_nll",)), "decomposition": verdict[
        "decomposition"] | {"rows": [without(row, ("schedule",)) for row in rows]}} == committed["verdict"]
    past = [i for i, (start, _) in enumerate(summary.buckets) if start >= summary.trained_length]
    reference = summary.results[reference_index([result.view for result in summary.results])]
    assert reference.view == View(1.0) and verdict["loss_break"]["past_nll"] == [reference.nll[i] for i in past]
    assert [(row["view"], Schedule.from_dict(row["schedule"]).label) for row in rows if row["kind"] == "schedule"] \
        == [(result.view.label,) * 2 for result in summary.results if result.view.schedule]
    pairs = [(old, new) for key in ("results", "schedules", "recipes") for old, new in
             zip(committed[key], written[key], strict=True)]
    pairs += [(old, new) for old_domain, new_domain in zip(committed["domains"], written["domains"], strict=True)
              for old, new in zip(old_domain["levers"], new_domain["levers"], strict=True)]
    assert len(pairs) == 10 + 3 + 2 + 4 * 9
    for old, new in pairs:  # the same numbers, the view whole where the label was
        assert View.from_dict(new["view"]).label == old["label"]
        assert without(new, ("view",)) == without(old, OLD_VIEW_KEYS)
    assert summary.results[5].view == View(Schedule("yarn", 2.0))  # yarn:trained, 16,384 tokens over 8,192
    assert summary.results[6].view == View(Schedule("qwen-logn", 8192.0))


@pytest.mark.parametrize("name", ["bundled-builtin", "gemma3-270m-builtin"])
def test_a_committed_summarys_method_sentence_reads_as_the_fact(name):
    """Formats 3 to 1 stored the bootstrap's method as its sentence, and 3 and 2 its spread beside it: read as the
    method, which says the spread (4 documents: their range; 8: a bootstrap over documents)."""
    committed = json.loads((COMMITTED.parent.parent / name / "summary.json").read_text())
    written = TuneSummary.from_dict(committed).to_dict()["bootstrap"]
    method = {"range": "range", "95% interval": "document-bootstrap"}[committed["bootstrap"]["spread"]]
    assert written == without(committed["bootstrap"], ("spread",)) | {"method": method}
    assert TuneSummary.from_dict(committed).bootstrap.spread.value == committed["bootstrap"]["spread"]


def test_a_method_sentence_this_version_does_not_know_is_refused(committed):
    damaged = committed | {"bootstrap": committed["bootstrap"] | {"method": "jackknife"}}
    with pytest.raises(RecordError, match="made its intervals by 'jackknife', a method this version does not know"):
        TuneSummary.from_dict(damaged)


def test_recipes_are_ropes_and_every_view_has_every_bucket(committed):
    summary = TuneSummary.from_dict(committed)
    on_recipes = [result for result in summary.results if result.rope is not None]
    assert [result.rope for result in on_recipes] == [Rope("yarn", 2.0), Rope("yarn-rope", 2.0)]
    assert [result.recipe for result in on_recipes] == ["yarn (s=2)", "yarn-rope (s=2)"]
    assert [entry.rope for entry in summary.recipes] == [Rope("yarn", 2.0), Rope("yarn-rope", 2.0)]
    assert all(entry.rope is None for entry in summary.schedules)
    assert [result.label for result in summary.results if result.rope is None and result.temperature == 1] == ["T=1"]
    assert len(summary.best) == len(summary.buckets) == len(summary.results[0].nll) == 16
    # the last run computed the four documents the first one had not, on two workers
    assert [run.computed_documents for run in summary.runs] == [2, 4] and summary.corpus.documents == 8
    assert [run.peak_rss_gb for run in summary.runs] == [2.25, 2.37]  # the latest run computed nothing


@pytest.mark.parametrize(("path", "key"), [((), "best"), (("results", 3), "nll_interval"),
                                           (("corpus", "listed", 0), "sha256"), (("runs", 0), "date"),
                                           (("settings",), "bucket_size")])
def test_a_missing_key_is_named(committed, path, key):
    damaged = copy.deepcopy(committed)
    holder = damaged
    for step in path:
        holder = holder[step]
    del holder[key]
    with pytest.raises(RecordError, match=rf"has no '{key}': it is damaged .* regenerate it"):
        TuneSummary.from_dict(damaged)


@pytest.mark.parametrize("found", [None, 0, FORMAT + 1, "1"])
def test_another_format_is_refused(committed, found):
    other = {key: value for key, value in committed.items() if key != "format"}
    if found is not None:
        other["format"] = found
    with pytest.raises(RecordError, match=rf"this corpus-tune summary has format {found!r}; this version reads "
                                          rf"format {', '.join(map(str, (*OLDER, FORMAT)))}: regenerate it"):
        TuneSummary.from_dict(other)


def test_a_recipe_it_cannot_read_is_refused(committed):
    damaged = copy.deepcopy(committed)
    damaged["results"][-1]["rope"] = "yarn-rope (s=2)"  # a label, as summaries wrote it before they had a format
    with pytest.raises(RecordError, match="cannot read"):
        TuneSummary.from_dict(damaged)
    damaged["results"][-1]["rope"] = {"recipe": "unknown", "factor": 2.0}
    with pytest.raises(RecordError, match="unknown RoPE recipe 'unknown'"):
        TuneSummary.from_dict(damaged)


def test_the_runs_of_a_summary_before_formats_are_kept(committed):
    """A summary written before summaries had a format number is refused, but a rerun that rebuilds it from its
    rows keeps the record of the runs that computed them (cli.commands.computing_runs)."""
    summary = TuneSummary.from_dict(committed)
    older = {key: value for key, value in committed.items() if key != "format"}
    assert previous_runs(older) == previous_runs(committed) == summary.runs
    assert previous_runs({key: value for key, value in older.items() if key != "runs"}) == ()
    with pytest.raises(RecordError, match="format 7"):
        previous_runs(committed | {"format": 7})


def test_a_summary_of_format_1_reads_as_a_bootstrap_without_layer_windows(committed):
    """Format 1 made a bootstrap interval over documents however few there were, and had no layer windows."""
    older = {key: value for key, value in committed.items() if key != "layer_windows"} | {"format": 1}
    older["bootstrap"] = {key: value for key, value in older["bootstrap"].items() if key != "spread"}
    summary = TuneSummary.from_dict(older)
    assert summary.layer_windows is None and summary.bootstrap.spread.value == "95% interval"
    assert summary.to_dict()["format"] == FORMAT  # written back in this format
