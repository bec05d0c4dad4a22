"""The Context length page: it opens on the committed sweep without running the model, keeps its view in the
link, runs a sweep of its own on the tiny model, refuses bad requests with an error line, draws a corpus summary."""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import components.serving.cache
import model_utils.experiments.sweep
from components.pages import PAGES
from components.present.text import plain
from components.serving import settings
from components.serving.cache import SweepRequest, cached_sweep
from model_utils import Schedule
from model_utils.core.records.fit import FORMAT as FIT_FORMAT
from model_utils.core.records.sweep import SweepDocument, SweepResult
from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import Dominant, RowKind
from model_utils.core.rope import Rope
from model_utils.core.statistics import STATISTIC_LABELS
from model_utils.core.views import View
from model_utils.experiments.sweep import SweepSettings, sweep
from model_utils.experiments.texts import builtin_corpus, builtin_text
from model_utils.verdicts import words
from tests.support.apptest import APP, array, assert_clean, chart, charts, traces
from tests.verdicts import synthetic
from tests.verdicts.synthetic import fit_summary

PAGE = "components/pages/context_length.py"


COMMITTED = settings.ASSETS / "sweeps" / "bundled-16k.json"




POSITION_CHARTS = ("context_nll", "context_best", "context_statistic_chart", "context_untrained", "context_distance")


@pytest.fixture
def runs(tiny_env):
    """Counts what runs the model: sweeps started and model passes computed (model_utils.experiments.sweep calls
    analyze once per temperature or schedule it does not find in its pass cache)."""
    cached_sweep.clear()
    counted = {"sweeps": 0, "passes": 0}
    real_sweep, real_analyze = model_utils.experiments.sweep.sweep, model_utils.experiments.sweep.analyze

    def counting_sweep(*args, **kwargs):
        counted["sweeps"] += 1
        return real_sweep(*args, **kwargs)

    def counting_analyze(*args, **kwargs):
        counted["passes"] += 1
        return real_analyze(*args, **kwargs)

    tiny_env.setattr(model_utils.experiments.sweep, "sweep", counting_sweep)
    tiny_env.setattr(model_utils.experiments.sweep, "analyze", counting_analyze)
    tiny_env.setattr(components.serving.cache, "analyze", counting_analyze)
    return counted


def open_page(query: dict[str, str] | None = None) -> AppTest:
    """The app opened straight on the page (with `query` in the link)."""
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()  # the app's first run draws its default page; a link to the page lands there after it
    at.switch_page(PAGE)
    return at.run()


def verdict_lines(at: AppTest) -> list[str]:
    shown = [m.value for m in at.markdown if m.value.startswith("**What this sweep measured")]
    assert len(shown) == 1, [m.value[:80] for m in at.markdown]
    return [line.removeprefix("- ") for line in shown[0].splitlines()[1:]]


def trained_line_positions(figure: dict) -> list[float]:
    return [shape["x0"] for shape in figure["layout"].get("shapes", []) if shape.get("line", {}).get("dash") == "dash"]


def submit(at: AppTest, *, builtin: bool = True, text: str = "", tokens: int = 1536, bucket: int = 256,
           schedules: tuple[str, ...] = (), beyond: bool = True, recipe: str = "none",
           factor: float = 2.0, **remap: float) -> AppTest:
    """Fill in the form and run it; `remap` sets a distance remapping's parameters (group, window, slope, sinks)."""
    for name, value in remap.items():
        at.number_input(key=f"context_{name}").set_value(value)
    at.checkbox(key="context_builtin").set_value(builtin)
    at.text_area(key="context_text").set_value(text)
    at.number_input(key="context_tokens").set_value(tokens)
    at.number_input(key="context_bucket").set_value(bucket)
    at.multiselect(key="context_schedules").set_value(list(schedules))
    at.selectbox(key="context_recipe").set_value(recipe)
    at.number_input(key="context_factor").set_value(factor)
    at.checkbox(key="context_beyond").set_value(beyond)
    at.button(key="context_run").click()
    return at.run()


def test_the_page_opens_on_the_committed_sweep_without_running_the_model(runs, document):
    at = open_page()
    assert_clean(at)
    assert runs == {"sweeps": 0, "passes": 0}, "opening the page must not run the model"
    assert [title.value for title in at.title] == ["Context length"]
    # every chart is there and every position chart draws the trained length
    for key in POSITION_CHARTS:
        assert trained_line_positions(chart(at, key)) == [1024] * (2 if key == "context_distance" else 1), key
    assert "context_view" not in [radio.key for radio in at.radio]  # nothing to choose between before a run
    # the verdict is the document's own, in words.py's words (escaped for markdown)
    assert verdict_lines(at) == [plain(sentence) for sentence in words.sentences(document.verdict)]
    # the charts draw the document's numbers
    nll = traces(chart(at, "context_nll"), "scatter")
    assert [trace["name"] for trace in nll] == [result.label for result in document.results]
    for trace, result in zip(nll, document.results, strict=True):
        np.testing.assert_allclose(array(trace["y"]).astype(float), result.nll)
    best = traces(chart(at, "context_best"), "scatter")[0]
    np.testing.assert_array_equal(array(best["y"]), [entry.temperature for entry in document.best])
    caption = next(c.value for c in at.caption if c.value.startswith("tiny\\-random on 2,048 tokens"))
    assert "trained length 1,024" in caption and "8 buckets" in caption

    at.selectbox(key="context_layer").set_value(2).run()  # a re-draw never runs the model either
    at.selectbox(key="context_statistic").set_value("sink_mass").run()
    assert_clean(at)
    assert runs == {"sweeps": 0, "passes": 0}


def test_the_view_is_in_the_link(tiny_env, document):
    at = open_page({"layer": "1", "statistic": "distant_mass", "compare": "T=0.8"})
    assert_clean(at)
    assert at.selectbox(key="context_layer").value == 1
    assert at.selectbox(key="context_statistic").value == "distant_mass"
    assert at.selectbox(key="context_compare").value == "T=0.8"
    drawn = [array(trace["y"]).astype(float) for trace in traces(chart(at, "context_statistic_chart"), "scatter")]
    for series, result in zip(drawn, document.results, strict=True):
        expected = result.heads["distant_mass"][:, 1].mean(axis=1)  # layer 1, mean of its heads
        np.testing.assert_allclose(series, expected, rtol=1e-6)
    titles = [a["text"] for a in chart(at, "context_distance")["layout"]["annotations"]]
    assert titles[:2] == ["T=1", "T=0.8"]

    at.selectbox(key="context_layer").set_value("mean of layers").run()
    at.selectbox(key="context_compare").set_value("logn (base=1024)").run()
    assert_clean(at)
    assert "layer" not in at.query_params  # the default view leaves the link
    assert at.query_params["compare"] == "logn (base=1024)"
    assert at.query_params["statistic"] == "distant_mass"


def test_a_mangled_link_falls_back_to_the_default_view(tiny_env):
    at = open_page({"layer": "99", "statistic": "nonsense", "compare": "T=7"})
    assert_clean(at)
    assert at.selectbox(key="context_layer").value == "mean of layers"
    assert at.selectbox(key="context_statistic").value == "normalized_entropy"
    assert at.selectbox(key="context_compare").value == "T=1.25"  # the best T of the last bucket


def test_without_a_committed_sweep_the_page_says_where_it_would_be(tiny_env, tmp_path, runs):
    tiny_env.setattr(settings, "CONTEXT_SWEEP", tmp_path / "missing.json")
    at = open_page()
    assert_clean(at)
    assert any("There is no committed sweep at" in info.value and "make sweep" in info.value for info in at.info)
    assert not at.get("plotly_chart") and runs["passes"] == 0


@pytest.mark.skipif(not COMMITTED.is_file(), reason=f"{COMMITTED} is not committed yet (make sweep writes it)")
def test_the_committed_bundled_sweep_loads_and_renders(tiny_env, runs):
    tiny_env.setattr(settings, "CONTEXT_SWEEP", COMMITTED)
    document = SweepDocument.from_dict(json.loads(COMMITTED.read_text()))
    at = open_page()
    assert_clean(at)
    assert runs == {"sweeps": 0, "passes": 0}
    for key in POSITION_CHARTS:
        assert set(trained_line_positions(chart(at, key))) == {document.trained_length}, key
    if document.verdict is not None:
        assert verdict_lines(at) == [plain(sentence) for sentence in words.sentences(document.verdict)]
    recipes = list(dict.fromkeys(label.split(" + ")[0] for label in (r.label for r in document.results)
                                 if " + " in label))
    if recipes:  # the main figure: T = 1, the best T per bucket and each recipe at T = 1
        lines = [trace["name"] for trace in traces(chart(at, "context_nll"), "scatter")]
        assert lines == ["T=1", "best constant T per bucket", *(f"{recipe} + T=1" for recipe in recipes)]


def test_a_run_on_the_tiny_model_shows_its_own_sweep_and_verdict(runs, tiny):
    at = open_page()
    at.text_input(key="temperatures").set_value("0.8, 1, 1.25").run()
    progress = []
    real_progress = components.serving.cache.st.progress

    def recording_progress(value, text=None):
        bar = real_progress(value, text=text)
        progress.append(text)
        real_update = bar.progress
        bar.progress = lambda value, text=None: progress.append(text) or real_update(value, text=text)
        return bar

    runs_before = dict(runs)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(components.serving.cache.st, "progress", recording_progress)
        submit(at, tokens=1536, schedules=("logn",))
    assert_clean(at)
    assert runs["sweeps"] == runs_before["sweeps"] + 1 and runs["passes"] == 4  # 3 temperatures and one schedule
    passes = [text for text in progress if text and text.startswith("Pass ")]  # (the model load has a bar too)
    assert passes[0] == "Pass 1 of 4: T=0.8"
    assert any(text.startswith("Pass 4 of 4: logn (base=1024), layer 3 of 3; about ") and
               text.endswith(" s left for the sweep") for text in passes), passes
    assert at.radio(key="context_view").value == "your run"
    expected = sweep(tiny, builtin_text("long"), [0.8, 1.0, 1.25, Schedule("logn", 1024.0)],
                     SweepSettings(max_tokens=1536, bucket_size=256, window=32, beyond_trained=True),
                     cache_dir=settings.SWEEP_PASSES)
    assert runs["passes"] == 4  # the same passes, from the page's pass cache: the page ran what it said
    caption = next(c.value for c in at.caption if c.value.startswith("tiny\\-random on 1,536 tokens"))
    assert "trained length 1,024" in caption
    for trace, result in zip(traces(chart(at, "context_nll"), "scatter"), expected.results, strict=True):
        assert trace["name"] == result.label
        np.testing.assert_allclose(array(trace["y"]).astype(float), result.nll)
    assert verdict_lines(at) == [plain(sentence) for sentence in words.sentences(expected.verdict)]

    at.selectbox(key="context_layer").set_value(0).run()  # a re-draw of the run: from the cache
    assert_clean(at)
    assert runs["passes"] == 4 and at.radio(key="context_view").value == "your run"

    at.radio(key="context_view").set_value("the committed sweep").run()  # back to the committed result
    assert_clean(at)
    assert any(c.value.startswith("tiny\\-random on 2,048 tokens") for c in at.caption)


def test_a_run_within_the_trained_length_says_there_is_nothing_past_it(runs):
    at = open_page()
    submit(at, tokens=600, beyond=False)
    assert_clean(at)
    assert not [m for m in at.markdown if m.value.startswith("**What this sweep measured")]
    (info,) = [info.value for info in at.info if info.value.startswith("No verdict")]
    assert "this text ends at 600 tokens, within the trained length of 1,024" in info
    assert runs["passes"] == 4  # the sidebar's four temperatures
    assert any("4 constant temperatures (T=0.5, T=1, T=1.5, T=2) and no schedule, each its own" in c.value.replace(
        "\\", "") for c in at.caption)


def test_a_run_whose_last_bucket_past_the_trained_length_has_no_loss_gets_a_reason_not_a_traceback(runs):
    at = open_page()
    at.text_input(key="temperatures").set_value("0.8, 1").run()
    submit(at, tokens=1025)  # positions 1,024.. hold only the last token, which has nothing to predict
    assert_clean(at)
    (info,) = [info.value for info in at.info if info.value.startswith("No verdict")]
    assert "positions 1,024 to 1,024 past the trained length holds only the text's last token" in info


def test_a_last_bucket_holding_only_the_last_token_does_not_hide_the_verdict_of_the_buckets_before_it(runs):
    at = open_page()
    at.text_input(key="temperatures").set_value("0.8, 1").run()
    submit(at, tokens=1281)  # positions 1,024-1,279 past the trained length have losses; 1,280 is the last token
    assert_clean(at)
    assert not [info.value for info in at.info if info.value.startswith("No verdict")]
    assert "(positions 1,024-1,279)." in verdict_lines(at)[1].replace("\\", "")


@pytest.mark.parametrize(("request_kwargs", "temperatures", "message"), [
    ({"bucket": 0}, None, "bucket_size must be >= 1, got 0"),
    ({"tokens": 2048, "beyond": False}, None,
     "the text runs to 2,048 tokens (or more), past the model's trained length of 1,024"),
    ({"tokens": 8192, "schedules": ("yarn", "qwen-logn", "llama4", "ssmax", "logn")}, "0.8, 1, 1.25",
     "This server runs at most {work:,} tokens x passes per request, and this sweep asks for 8,192 tokens x 8 passes "
     "(3 temperatures + 5 schedules)"),
    ({}, "0.5, 2", "a sweep compares every temperature with T = 1: include 1 in the temperatures"),  # the sweep's own
    ({"builtin": False, "text": "   "}, None, "the text is empty"),
    ({"tokens": 600, "schedules": ("yarn",), "beyond": False}, None,
     "yarn:trained scales the context by tokens / trained length = 600 / 1024 <= 1, where YaRN does nothing; run "
     "past the trained length, leave YaRN out"),
])
def test_bad_requests_are_error_lines_before_any_pass_and_the_committed_view_stays(runs, request_kwargs, temperatures,
                                                                                   message):
    at = open_page()
    if temperatures is not None:
        at.text_input(key="temperatures").set_value(temperatures).run()
    submit(at, **request_kwargs)
    assert not at.exception, [e.value for e in at.exception]
    errors = [error.value for error in at.error]
    assert len(errors) == 1 and plain(message.format(work=settings.MAX_WORK)) in errors[0], errors
    assert runs["passes"] == 0, "a refused sweep must not run the model"
    assert set(POSITION_CHARTS) <= {key.rsplit("-", 1)[-1] for key in charts(at)}  # the committed view stays
    assert "context_view" not in [radio.key for radio in at.radio]


def test_over_budget_refusal_names_the_most_tokens_that_fit(runs):
    at = open_page()
    at.text_input(key="temperatures").set_value("0.8, 1, 1.25").run()
    submit(at, tokens=8192, schedules=("yarn", "qwen-logn", "llama4", "ssmax", "logn"))
    assert plain(f"Ask for at most {settings.MAX_WORK // 8:,} tokens") in at.error[0].value


def test_a_corpus_summary_is_drawn_next_to_the_single_text(tiny_env, runs, summary_file):
    tiny_env.setattr(settings, "CORPUS_SUMMARY", summary_file)
    summary = TuneSummary.from_dict(json.loads(summary_file.read_text()))
    at = open_page()
    assert_clean(at)
    assert runs["passes"] == 0
    nll = chart(at, "context_corpus_nll")
    lines = [trace for trace in traces(nll, "scatter") if trace.get("mode") == "lines+markers"]
    bands = [trace for trace in traces(nll, "scatter") if trace.get("fill") == "tonexty"]
    assert [trace["name"] for trace in lines] == [result.label for result in summary.results]
    assert len(bands) == 3  # one band per constant temperature; the schedules are lines only
    for line, result in zip(lines, summary.results, strict=True):
        np.testing.assert_allclose(array(line["y"]).astype(float), result.nll)
    best = traces(chart(at, "context_corpus_best"), "scatter")[0]
    np.testing.assert_array_equal(array(best["y"]), [entry.temperature for entry in summary.best])
    np.testing.assert_allclose(array(best["error_y"]["arrayminus"]),
                               [entry.temperature - entry.temperature_interval[0] for entry in summary.best])
    # the summary does not record the trained length (the tuner ran with the model's own): the tiny sweep's is used
    assert trained_line_positions(nll) == [1024]
    caption = next(c.value for c in at.caption if c.value.startswith("Corpus\\:"))
    assert "2 documents \\(2,048 tokens each, 4,096 in all\\)" in caption and "documents resampled" in caption
    names = ", ".join(f"builtin {name}" for name, _ in builtin_corpus()[:2])  # the documents the tuner ran
    assert plain(f"({names})") in caption
    # per domain: the two documents share one, and the table holds the summary's savings past the trained length
    assert [entry.domain for entry in summary.domains] == ["reference documentation"]
    assert any(header.value == "Per domain of the corpus" for header in at.subheader)
    domains = next(table.value for table in at.table if "domain" in table.value.columns)
    lever = summary.domains[0].levers[0]
    assert list(domains["domain"]) == ["reference documentation"]
    assert domains[lever.label].iloc[0].startswith(f"{lever.saved:+.3f} (")


def test_a_corpus_of_another_model_draws_no_trained_length_it_does_not_know(tiny_env, tmp_path, summary_file):
    summary = json.loads(summary_file.read_text()) | {"model": "another-model"}
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(summary))
    tiny_env.setattr(settings, "CORPUS_SUMMARY", path)
    at = open_page()
    assert_clean(at)
    assert trained_line_positions(chart(at, "context_corpus_nll")) == []
    assert any("does not record the trained length" in c.value for c in at.caption)


def test_a_summary_or_fit_of_another_format_is_an_error_line_naming_the_fix(tiny_env, tmp_path, summary_file):
    older = json.loads(summary_file.read_text())
    del older["format"]  # as summaries were written before they had a format number
    (tmp_path / "summary.json").write_text(json.dumps(older))
    (tmp_path / "fits" / "old").mkdir(parents=True)
    (tmp_path / "fits" / "old" / "fit.json").write_text(json.dumps(fit_summary().to_dict() | {"format": 1}))
    tiny_env.setattr(settings, "CORPUS_SUMMARY", tmp_path / "summary.json")
    tiny_env.setattr(settings, "FIT_DIR", tmp_path / "fits")
    at = open_page()
    assert not at.exception
    errors = [error.value for error in at.error]
    assert len(errors) == 2, errors
    assert plain("this corpus-tune summary has format None") in errors[0] and "regenerate it" in errors[0]
    assert plain(f"this fit has format 1; this version reads format {FIT_FORMAT}") in errors[1]
    assert not any("context_corpus_nll" in key or "context_fit_law" in key for key in charts(at))


def test_committed_fits_are_a_table_a_chart_against_yarns_law_and_their_verdicts(tiny_env, runs, tmp_path):
    on_recipe = fit_summary(values=(0.86, 0.9))
    own = fit_summary(rope=None, gains={"plain": (0.05, -0.01, 0.1)})
    for name, fit in (("yarn", on_recipe), ("own", own)):
        (tmp_path / "fits" / name).mkdir(parents=True)
        (tmp_path / "fits" / name / "fit.json").write_text(json.dumps(fit.to_dict()))
    tiny_env.setattr(settings, "FIT_DIR", tmp_path / "fits")
    at = open_page()
    assert_clean(at)
    assert runs["passes"] == 0
    assert any(header.value.startswith("Fitted temperature") for header in at.subheader)
    table = at.table[-1].value
    assert table.to_dict("records") == [words.fit_row(on_recipe), words.fit_row(own)]  # recipes first
    assert list(table["saved vs T = 1"]) == ["+2.000 (+1.900 to +2.100)", "+0.050 (-0.010 to +0.100)"]
    law, point = traces(chart(at, "context_fit_law"), "scatter")
    assert law["name"].startswith("YaRN's law") and array(point["y"])[0] == pytest.approx(1 / 0.88)
    said = next(m.value for m in at.markdown if m.value.startswith(f"**{plain(words.fit_point_label(on_recipe))}"))
    assert said.splitlines()[1:] == [f"- {plain(sentence)}" for sentence in words.fit_sentences(on_recipe)]


def test_without_fits_the_page_shows_no_fit_section(tiny_env, runs):
    at = open_page()
    assert_clean(at)
    assert not any(header.value.startswith("Fitted temperature") for header in at.subheader)


# --- RoPE recipes: the committed view per recipe, the untrained-distance mass, the form's recipe -------------------

MAIN = "T = 1, the best T per bucket and each recipe at T = 1"
OWN = "the model's own positions"


@pytest.fixture
def recipe_env(tiny_env, tiny_recipe_sweep_file):
    """The page opening on the tiny model's sweep with recipes (conftest.tiny_recipe_sweep_file)."""
    tiny_env.setattr(settings, "CONTEXT_SWEEP", tiny_recipe_sweep_file)
    return tiny_env


def by_label(document: SweepDocument) -> dict[str, SweepResult]:
    return {result.label: result for result in document.results}


def line_names(figure: dict) -> list[str]:
    return [trace["name"] for trace in traces(figure, "scatter")]


def test_the_main_figure_draws_t1_the_best_t_and_each_recipe_at_t1(recipe_env, runs, recipe_document):
    at = open_page()
    assert_clean(at)
    assert runs == {"sweeps": 0, "passes": 0}
    assert at.selectbox(key="context_lines").value == MAIN
    assert at.selectbox(key="context_lines").options == [MAIN, OWN, "yarn (s=2)", "yarn-rope (s=2)", "linear (s=2)"]
    figure = chart(at, "context_nll")
    assert line_names(figure) == ["T=1", "best constant T per bucket", "yarn (s=2) + T=1", "yarn-rope (s=2) + T=1",
                                  "linear (s=2) + T=1"]
    lines = traces(figure, "scatter")
    results = by_label(recipe_document)
    for trace in lines[:1] + lines[2:]:
        np.testing.assert_allclose(array(trace["y"]).astype(float), results[trace["name"]].nll)
    best = recipe_document.best
    assert [entry.bucket for entry in best] == list(recipe_document.buckets)
    np.testing.assert_allclose(array(lines[1]["y"]).astype(float), [entry.nll for entry in best])
    assert lines[1]["line"]["dash"] == "dot" and lines[1]["line"]["color"] == "#000000"
    # the best T of each bucket is the lowest of the constant temperatures on the model's own positions
    # (two computations of one mean: the best's from the per-position NLL the document stores to 5 decimals, the
    # results' from the engine's float32 values, so they agree to that rounding, 5e-6, not to float64's 1e-7)
    own = np.array([results[f"T={t:g}"].nll for t in (0.8, 1, 1.25)])
    np.testing.assert_allclose(array(lines[1]["y"]).astype(float), own.min(axis=0), rtol=0, atol=5e-6)
    # one colour per recipe, none of them a temperature's
    colours = [trace["line"]["color"] for trace in lines[2:]]
    assert len(set(colours)) == 3 and not set(colours) & {trace["line"]["color"] for trace in lines[:2]}
    assert trained_line_positions(figure) == [1024]
    assert any("chosen on the very positions it is scored on" in c.value for c in at.caption)


def test_the_lines_choice_draws_a_recipes_passes_next_to_the_plain_t1_and_stays_in_the_link(recipe_env,
                                                                                               recipe_document):
    at = open_page()
    at.selectbox(key="context_lines").set_value("yarn-rope (s=2)").run()
    assert_clean(at)
    names = line_names(chart(at, "context_nll"))
    assert names == ["T=1", "yarn-rope (s=2) + T=0.9", "yarn-rope (s=2) + T=1", "yarn-rope (s=2) + T=1.1"]
    styles = {trace["name"]: trace["line"] for trace in traces(chart(at, "context_nll"), "scatter")}
    assert styles["yarn-rope (s=2) + T=0.9"]["dash"] == "dot" and styles["yarn-rope (s=2) + T=1.1"]["dash"] == "dash"
    assert styles["yarn-rope (s=2) + T=1"]["dash"] == "solid"
    assert at.query_params["lines"] == "yarn-rope (s=2)"
    at.selectbox(key="context_lines").set_value(OWN).run()
    assert line_names(chart(at, "context_nll")) == [r.label for r in recipe_document.results if r.rope is None]

    linked = open_page({"lines": "linear (s=2)", "best_on": "nonsense"})
    assert_clean(linked)
    assert line_names(chart(linked, "context_nll")) == ["T=1", "linear (s=2) + T=1"]
    assert linked.selectbox(key="context_best_on").value == OWN  # a mangled choice falls back to the default


def test_the_best_temperature_can_be_read_on_each_recipe_against_its_own_t1(recipe_env, recipe_document):
    at = open_page()
    assert at.selectbox(key="context_best_on").options == [OWN, "yarn-rope (s=2)"]  # the recipes of best_by_rope
    plain_best = traces(chart(at, "context_best"), "scatter")[0]
    np.testing.assert_array_equal(array(plain_best["y"]), [e.temperature for e in recipe_document.best])
    assert list(chart(at, "context_best")["layout"]["yaxis"]["tickvals"]) == [0.8, 1, 1.25]

    at.selectbox(key="context_best_on").set_value("yarn-rope (s=2)").run()
    assert_clean(at)
    figure = chart(at, "context_best")
    entries = recipe_document.best_by_rope[Rope("yarn-rope", 2.0)]
    points = traces(figure, "scatter")[0]
    np.testing.assert_array_equal(array(points["y"]), [entry.temperature for entry in entries])
    assert list(figure["layout"]["yaxis"]["tickvals"]) == [0.9, 1, 1.1]  # the temperatures run on that recipe
    assert figure["layout"]["title"]["text"] == "This text, on yarn-rope (s=2)"
    assert any("against yarn\\-rope \\(s=2\\) at T = 1" in c.value for c in at.caption)
    assert at.query_params["best_on"] == "yarn-rope (s=2)"


def test_the_untrained_distance_mass_is_shown_for_every_pass_and_is_a_statistic(recipe_env, recipe_document):
    at = open_page()
    assert STATISTIC_LABELS["untrained_mass"] in at.selectbox(key="context_statistic").options
    heatmap = chart(at, "context_untrained")
    (cells,) = traces(heatmap, "heatmap")
    assert list(cells["y"]) == [result.label for result in recipe_document.results]  # every pass, in order
    expected = np.array([result.heads["untrained_mass"].mean(axis=(1, 2)) for result in recipe_document.results])
    np.testing.assert_allclose(array(cells["z"]).astype(float), expected, rtol=1e-6)
    inside = [index for index, (_, stop) in enumerate(recipe_document.buckets) if stop <= 1024]
    assert np.all(expected[:, inside] == 0) and np.all(expected[:, len(inside):] > 0)  # 0 by definition inside
    assert trained_line_positions(heatmap) == [1024]
    assert any("at least 1,024 tokens back" in c.value for c in at.caption)

    at.selectbox(key="context_statistic").set_value("untrained_mass").run()
    at.selectbox(key="context_layer").set_value(2).run()
    at.selectbox(key="context_statistic_lines").set_value("yarn-rope (s=2)").run()
    assert_clean(at)
    lines = traces(chart(at, "context_statistic_chart"), "scatter")
    assert [trace["name"] for trace in lines] == ["T=1", "yarn-rope (s=2) + T=0.9", "yarn-rope (s=2) + T=1",
                                                  "yarn-rope (s=2) + T=1.1"]
    results = by_label(recipe_document)
    for trace in lines:
        layer_two = results[trace["name"]].heads["untrained_mass"][:, 2].mean(axis=1)
        np.testing.assert_allclose(array(trace["y"]).astype(float), layer_two, rtol=1e-6)
    (cells,) = traces(chart(at, "context_untrained"), "heatmap")  # the heatmap follows the layer too
    np.testing.assert_allclose(array(cells["z"]).astype(float)[0],
                               recipe_document.results[0].heads["untrained_mass"][:, 2].mean(axis=1),
                               rtol=1e-6)


def test_the_distance_heatmap_compares_t1_with_any_pass_a_recipe_first(recipe_env, recipe_document):
    at = open_page()
    compare = at.selectbox(key="context_compare")
    assert compare.value == "yarn (s=2) + T=1"
    assert compare.options == [r.label for r in recipe_document.results if r.label != "T=1"]
    compare.set_value("yarn-rope (s=2) + T=1.1").run()
    assert_clean(at)
    _, right = traces(chart(at, "context_distance"), "heatmap")
    np.testing.assert_allclose(array(right["z"]).astype(float),
                               by_label(recipe_document)["yarn-rope (s=2) + T=1.1"].distance_profile.T)


def page_order(node) -> list[str]:
    """The page's elements top to bottom (depth first), as 'type' or 'type:what' for charts, expanders and text."""
    kind = node.type
    said = {"plotly_chart": lambda: node.proto.id.rsplit("-", 1)[-1], "expander": lambda: node.label,
            "markdown": lambda: node.value[:30], "metric": lambda: node.label}.get(kind)
    order = [f"{kind}:{said()}" if said else kind]
    for index in sorted(getattr(node, "children", None) or {}):
        order += page_order(node.children[index])
    return order


def test_the_page_opens_with_the_answer_and_the_loss_chart_before_the_words(recipe_env):
    """Title, one paragraph, the form folded away, the answer (one sentence) and its chart, then the loss by
    position; the verdict in full and the method come in an expander under it."""
    at = open_page()
    order = page_order(at.main)

    def where(prefix: str) -> int:
        return next(index for index, entry in enumerate(order) if entry.startswith(prefix))

    chart_at = where("plotly_chart:context_nll")
    before = [entry for entry in order[:chart_at] if entry.startswith("markdown:")]
    assert len(before) == 2 and before[0].startswith("markdown:How does a model do"), before  # the lead
    assert before[1].startswith("markdown:**One text, the committed"), before  # and the answer, no more words
    assert where("expander:Run the sweep on your own text") < chart_at  # folded: one line high
    assert chart_at < where("expander:What this sweep measured, and how") < where("markdown:**What this sweep") \
        < where("markdown:How it was measured")


def opening(at: AppTest) -> list[str]:
    """The page top to bottom as page_order names it, the folded form as one entry (its widgets are hidden)."""
    order = []
    for index in sorted(at.main.children):
        flat = page_order(at.main.children[index])
        order += flat[:1] if flat[0].startswith("expander:Run the sweep") else flat
    return order


def answer_line(at: AppTest, title: str) -> str:
    (line,) = [m.value for m in at.markdown if m.value.startswith(f"**{plain(title)}.** ")]
    return line.removeprefix(f"**{plain(title)}.** ")


def bars(figure: dict) -> dict[str, float]:
    """A decomposition chart's bars: lever label -> what it saves."""
    return {label: float(x) for trace in traces(figure, "bar") for label, x in zip(trace["y"], array(trace["x"]),
                                                                                 strict=True)}


def test_the_page_opens_on_the_answer_sentence_then_its_decomposition_chart(recipe_env, recipe_document):
    """Right after the title and the lead (and the folded form): the verdict's answer in one sentence, then the
    decomposition chart of the same verdict, then the headline numbers, then the loss by position."""
    at = open_page()
    assert_clean(at)
    order = opening(at)
    assert order[0] == "title" and order[1].startswith("markdown:How does a model do past the"), order[:2]
    assert order[2] == "expander:Run the sweep on your own text and model", order[2]
    assert order[3].startswith("markdown:**One text, the committed")
    assert order[4] == "plotly_chart:context_decomposition"
    assert order.index("plotly_chart:context_decomposition") < min(
        i for i, entry in enumerate(order) if entry.startswith("metric:")) < order.index("plotly_chart:context_nll")
    verdict = recipe_document.verdict
    assert answer_line(at, "One text, the committed sweep (cross-fit on one text)") == plain(words.answer(verdict))
    decomposition = verdict.decomposition
    figure = chart(at, "context_decomposition")
    assert bars(figure) == pytest.approx({words.row_label(lever): lever.saved for lever in decomposition.levers
                                          if lever.saved is not None})
    rise = [shape["x0"] for shape in figure["layout"]["shapes"] if shape.get("line", {}).get("dash") == "dash"]
    assert rise == ([pytest.approx(decomposition.rise)] if decomposition.rise > 0 else [])


# a rise of 1.2 nats per token past the trained length (3.7 against 2.5 in the second half of the trained context)
RECIPE_WINS = [(1.0, synthetic.plain([3.4, 3.6, 3.8, 4.0])), (0.8, synthetic.plain([3.5, 3.7, 3.9, 4.1])),
               (1.25, synthetic.plain([3.35, 3.55, 3.75, 3.95])), (synthetic.yarn_rope(), synthetic.plain([2.5] * 4))]
TEMPERATURE_WINS = [(1.0, synthetic.plain([3.4, 3.6, 3.8, 4.0])), (0.8, synthetic.plain([3.5, 3.7, 3.9, 4.1])),
                    (1.25, synthetic.plain([2.6, 2.6, 2.7, 2.7])),
                    (synthetic.yarn_rope(), synthetic.plain([3.3, 3.5, 3.7, 3.9]))]


def open_on_synthetic(tiny_env, tmp_path: Path, views: list) -> tuple[AppTest, SweepDocument]:
    """The page opened clean on a synthetic sweep (tests/verdicts/synthetic.document of `views`) as its committed
    one, and that sweep."""
    written, _ = synthetic.document(views)
    (tmp_path / "synthetic.json").write_text(json.dumps(written.to_dict(), allow_nan=False))
    tiny_env.setattr(settings, "CONTEXT_SWEEP", tmp_path / "synthetic.json")
    at = open_page()
    assert_clean(at)
    return at, written


@pytest.mark.parametrize(("views", "dominant"), [(RECIPE_WINS, Dominant.RECIPE),
                                                 (TEMPERATURE_WINS, Dominant.TEMPERATURE)])
def test_the_headline_leads_with_the_dominant_lever(tiny_env, tmp_path, views, dominant):
    at, written = open_on_synthetic(tiny_env, tmp_path, views)
    verdict = written.verdict
    decomposition = verdict.decomposition
    assert decomposition.dominant == dominant
    lever = decomposition.lever(decomposition.dominant)
    assert answer_line(at, "One text, the committed sweep (cross-fit on one text)") == plain(words.answer(verdict))
    shown = at.get("metric")
    assert shown[0].value == plain(f"{lever.saved:+.3f} nats/token")  # the lead's number, big
    assert shown[0].label.endswith(plain(words.row_label(lever)))
    assert [m.label for m in shown] == [plain(h.label) for h in words.headlines(verdict)]


SELF_EXTEND = View(1.0, Rope("self-extend", group=2, window=512))
SINKS = View(1.0, Rope("sink-window", sinks=4, window=1024))
FAR = {"untrained_mass": [0] * 4 + [0.5] * 4}  # as far back in the text as T = 1's, whatever the remapping does
FAR_PLAIN = [(spec, means, FAR) for spec, means in RECIPE_WINS]
NEAR = FAR | {"effective_untrained_mass": [0.0] * 8}  # once remapped, no key at an untrained distance
REMAP_WINS = [*FAR_PLAIN[:3], (synthetic.yarn_rope(), synthetic.plain([3.0, 3.2, 3.3, 3.4])),
              (SELF_EXTEND, synthetic.plain([2.5] * 4), NEAR),
              (SINKS, synthetic.plain([2.9] * 4), {"untrained_mass": [0] * 4 + [0.01] * 4,
                                                   "effective_untrained_mass": [0.0] * 8})]
REMAP_LOSES = [*FAR_PLAIN, (SELF_EXTEND, synthetic.plain([3.3, 3.5, 3.6, 3.7]), NEAR)]


@pytest.mark.parametrize(("views", "lead"), [(REMAP_WINS, "self-extend (G=2, W=512) + T=1"),
                                             (REMAP_LOSES, "yarn-rope (s=2) + T=1")])
def test_the_answer_names_the_recipe_family_that_recovers_the_most(tiny_env, tmp_path, views, lead):
    """A sweep with a distance remapping besides the interpolation: the answer names the family the numbers pick,
    the chart colours each family, the table gives a remapping's untrained mass on both distances."""
    at, written = open_on_synthetic(tiny_env, tmp_path, views)
    verdict = written.verdict
    answer = answer_line(at, "One text, the committed sweep (cross-fit on one text)")
    assert answer == plain(words.answer(verdict)) and verdict.decomposition.lever(Dominant.RECIPE).view == lead
    names = {trace["name"] for trace in traces(chart(at, "context_decomposition"), "bar")}
    assert {"frequency change (interpolation) at T = 1", "distance remapping at T = 1"} <= names
    table = next(t.value for t in at.table if "view" in t.value.columns)
    cells = dict(zip(table["view"], table["untrained-distance mass past it"], strict=True))
    assert cells["self-extend (G=2, W=512) + T=1"] == "0.000 (goes away) on the remapped distances; 0.500 in the text"
    assert any(plain("on the remapped distances (what the model meets") in c.value for c in at.caption)


def test_a_sweep_with_remappings_offers_each_family_and_marks_the_remapped_rows(tiny_env, tiny_remap_sweep_file,
                                                                                 remap_document):
    tiny_env.setattr(settings, "CONTEXT_SWEEP", tiny_remap_sweep_file)
    at = open_page()
    assert_clean(at)
    options = at.selectbox(key="context_lines").options
    assert options[:4] == [MAIN, "T = 1 and each frequency change (interpolation) at T = 1",
                           "T = 1 and each distance remapping at T = 1", "T = 1 and each sink + window at T = 1"]
    at.selectbox(key="context_lines").set_value(options[2]).run()
    assert line_names(chart(at, "context_nll")) == ["T=1", "self-extend (G=2, W=256) + T=1"]
    rows = list(traces(chart(at, "context_untrained"), "heatmap")[0]["y"])
    assert "self-extend (G=2, W=256) + T=1 (remapped distances)" in rows and "T=1" in rows
    assert any(plain("marked (remapped distances)") in c.value for c in at.caption)


def test_with_a_corpus_its_answer_comes_first_held_out_over_documents_and_its_numbers_lead(tiny_env, summary_file,
                                                                                           document):
    tiny_env.setattr(settings, "CORPUS_SUMMARY", summary_file)
    at = open_page()
    assert_clean(at)
    corpus = TuneSummary.from_dict(json.loads(summary_file.read_text())).verdict
    order = opening(at)
    assert order[3].startswith("markdown:**The corpus") and order[4] == "plotly_chart:context_corpus_decomposition"
    assert order[5].startswith("markdown:**One text, the committed")
    assert order[6] == "plotly_chart:context_decomposition"
    assert answer_line(at, "The corpus (held out over documents)") == plain(words.answer(corpus))
    assert answer_line(at, "One text, the committed sweep (cross-fit on one text)") == plain(
        words.answer(document.verdict))
    assert bars(chart(at, "context_corpus_decomposition")) == pytest.approx(
        {words.row_label(lever): lever.saved for lever in corpus.decomposition.levers if lever.saved is not None})
    # the headline numbers are the corpus's
    assert [m.label for m in at.get("metric")] == [plain(h.label) for h in words.headlines(corpus)]
    assert any("held out over documents" in m.label for m in at.get("metric"))


def test_the_sweep_request_is_a_frozen_keyword_only_record_and_the_cache_key():
    request = SweepRequest(model="tiny-random", text="some text", source="your text", temperatures=(0.8, 1.0),
                           schedules=(Schedule("logn", 1024.0),), rope=Rope("yarn-rope", 2.0), max_tokens=1280,
                           bucket_size=256, window=32, beyond_trained=True)
    with pytest.raises(FrozenInstanceError):
        request.max_tokens = 4096
    with pytest.raises(TypeError):
        SweepRequest("tiny-random", "some text")  # keyword-only: no positional request
    assert request.specs == [0.8, 1.0, Schedule("logn", 1024.0), View(0.8, Rope("yarn-rope", 2.0)),
                             View(1.0, Rope("yarn-rope", 2.0))]
    assert request == replace(request) and hash(request) == hash(replace(request))
    # st.cache_data keys on the request's fields: an equal request is the same entry, another recipe another one
    keys = [cache_key(r) for r in (request, replace(request), replace(request, rope=Rope("yarn-rope", 4.0)))]
    assert keys[0] == keys[1] != keys[2]


def cache_key(request: SweepRequest) -> str:
    """The key st.cache_data makes of cached_sweep's argument (its own hashing of a dataclass: by its fields)."""
    from streamlit.runtime.caching.cache_type import CacheType
    from streamlit.runtime.caching.hashing import update_hash

    hasher = hashlib.new("md5", usedforsecurity=False)
    update_hash(request, hasher=hasher, cache_type=CacheType.DATA)
    return hasher.hexdigest()


def test_no_page_passes_a_long_tuple_or_splats_one():
    """A request travels as a record: no page splats a sequence into a call or passes a tuple of more than 3 items
    to one or keeps one in the session."""
    for spec in PAGES:
        tree = ast.parse(Path(spec.path).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                assert not any(isinstance(arg, ast.Starred) for arg in node.args), (spec.script, ast.unparse(node))
                values = [*node.args, *(keyword.value for keyword in node.keywords)]
                assert not any(isinstance(v, ast.Tuple) and len(v.elts) > 3 for v in values), ast.unparse(node)
            if isinstance(node, ast.Assign) and "session_state" in ast.unparse(node.targets[0]):
                assert not (isinstance(node.value, ast.Tuple) and len(node.value.elts) > 3), ast.unparse(node)


def test_the_headline_numbers_are_the_verdicts_and_come_before_the_loss_chart(recipe_env, recipe_document):
    at = open_page()
    assert_clean(at)
    expected = words.headlines(recipe_document.verdict)
    assert 1 <= len(expected) <= 4
    shown = at.get("metric")
    assert [m.label for m in shown] == [plain(h.label) for h in expected]
    # the number big, its interval or ratio under it, each formatted from the headline's numbers, never parsed
    assert [m.value for m in shown] == [plain(words.headline_number(h)) for h in expected]
    assert [m.delta or None for m in shown] == [None if words.headline_note(h) is None else
                                               plain(words.headline_note(h)) for h in expected]
    assert [m.proto.help for m in shown] == [plain(h.help) for h in expected]
    recipe = recipe_document.verdict.decomposition.lever(Dominant.RECIPE)
    assert recipe.saved in [h.value for h in expected]  # the recipes' part of the answer
    order = page_order(at.main)
    assert max(i for i, entry in enumerate(order) if entry.startswith("metric:")) < order.index(
        "plotly_chart:context_nll")


def test_the_decomposition_is_a_table_of_the_verdicts_rows_and_absent_without_a_recipe(recipe_env, recipe_document,
                                                                                      tiny_sweep_file):
    at = open_page()
    assert_clean(at)
    headers = [header.value for header in at.subheader]
    table = next(t.value for t in at.table if "view" in t.value.columns)
    rows = words.decomposition_table(recipe_document.verdict)
    assert "What brings the loss back past the trained length" in headers and rows
    assert list(table["view"]) == [row["view"] for row in rows]
    assert any(view.startswith("yarn-rope") for view in table["view"])
    recipe_env.setattr(settings, "CONTEXT_SWEEP", tiny_sweep_file)
    at = open_page()
    assert "What brings the loss back past the trained length" not in [header.value for header in at.subheader]


def test_the_corpus_verdict_is_said_with_the_sweeps(recipe_env, summary_file):
    recipe_env.setattr(settings, "CORPUS_SUMMARY", summary_file)
    at = open_page()
    assert_clean(at)
    summary = TuneSummary.from_dict(json.loads(summary_file.read_text()))
    said = next(m.value for m in at.markdown if m.value.startswith("**What the corpus measured"))
    assert said.splitlines()[1:] == [f"- {plain(sentence)}" for sentence in words.sentences(summary.verdict)]


def test_a_run_with_a_recipe_runs_every_temperature_on_it(runs, tiny):
    at = open_page()
    at.text_input(key="temperatures").set_value("0.8, 1").run()
    submit(at, tokens=1280, recipe="yarn-rope", factor=2.0)
    assert_clean(at)
    assert runs["passes"] == 4  # 2 temperatures on the model's own positions, 2 on the recipe
    labels = at.selectbox(key="context_compare").options
    assert labels == ["T=0.8", "yarn-rope (s=2) + T=0.8", "yarn-rope (s=2) + T=1"]
    assert at.selectbox(key="context_lines").options == [MAIN, OWN, "yarn-rope (s=2)"]
    assert at.selectbox(key="context_best_on").options == [OWN, "yarn-rope (s=2)"]
    expected = sweep(tiny, builtin_text("long"), [0.8, 1.0, *(View(t, Rope("yarn-rope", 2.0)) for t in (0.8, 1.0))],
                     SweepSettings(max_tokens=1280, bucket_size=256, window=32, beyond_trained=True),
                     cache_dir=settings.SWEEP_PASSES)
    assert runs["passes"] == 4  # the same passes, from the page's cache
    drawn = {trace["name"]: array(trace["y"]).astype(float) for trace in traces(chart(at, "context_nll"), "scatter")}
    np.testing.assert_allclose(drawn["yarn-rope (s=2) + T=1"], by_label(expected)["yarn-rope (s=2) + T=1"].nll)
    said = plain("and 2 passes on RoPE recipes (yarn-rope (s=2) + T=0.8, yarn-rope (s=2) + T=1)")
    assert any(said in caption.value for caption in at.caption)


def test_a_run_with_a_distance_remapping_runs_it_with_its_own_parameters(runs, tiny):
    at = open_page()
    at.text_input(key="temperatures").set_value("1").run()
    assert "self-extend: Self-Extend (grouped attention)" in at.selectbox(key="context_recipe").options
    submit(at, tokens=1280, recipe="self-extend", group=2, window=256)
    assert_clean(at)
    assert runs["passes"] == 2  # T = 1 on the model's own positions, and on Self-Extend
    assert at.selectbox(key="context_compare").options == ["self-extend (G=2, W=256) + T=1"]
    remapped = View(1.0, Rope("self-extend", group=2, window=256))
    expected = sweep(tiny, builtin_text("long"), [1.0, remapped],
                     SweepSettings(max_tokens=1280, bucket_size=256, window=32, beyond_trained=True),
                     cache_dir=settings.SWEEP_PASSES)
    drawn = {trace["name"]: array(trace["y"]).astype(float) for trace in traces(chart(at, "context_nll"), "scatter")}
    np.testing.assert_allclose(drawn["self-extend (G=2, W=256) + T=1"], by_label(expected)[remapped.label].nll)
    assert by_label(expected)[remapped.label].kernel == "torch"  # the fused kernel remaps nothing


@pytest.mark.parametrize(("recipe", "remap", "message"), [
    ("self-extend", {"group": 0}, "RoPE recipe self-extend: G must be a whole number >= 1 (self-extend:G,W), got 0"),
    ("leaky-rerope", {"slope": 0.5}, "RoPE recipe leaky-rerope: K must be a number above 1"),
    ("sink-window", {"sinks": -1}, "RoPE recipe sink-window: S must be a whole number >= 0"),
    ("rerope", {"window": 2048}, "the window W = 2,048 is longer than the trained length 1,024"),
])
def test_a_bad_remapping_parameter_is_the_recipes_own_error_line(runs, recipe, remap, message):
    at = open_page()
    submit(at, tokens=1280, recipe=recipe, **remap)
    assert not at.exception, [e.value for e in at.exception]
    errors = [error.value for error in at.error]
    assert len(errors) == 1 and plain(message) in errors[0], errors
    assert runs["passes"] == 0, "a refused recipe must not run any pass"


def scaled_llama_folder(folder: Path) -> Path:
    """A tiny llama whose RoPE is already scaled (linear, s = 2): a recipe would replace its own scaling."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    from model_utils.models.tiny import byte_tokenizer
    from tests.support.architectures import GQA, SIZES

    config = LlamaConfig(**SIZES, **GQA, rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 1e4})
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    byte_tokenizer().save_pretrained(folder)
    return folder


@pytest.mark.parametrize(("model", "recipe", "message"), [
    ("gpt2", {"recipe": "yarn", "factor": 2.0}, "learns its positions as a table, not with rotary embeddings (RoPE): "
                                                "the RoPE recipe yarn (s=2) does not apply to it"),
    ("scaled", {"recipe": "yarn", "factor": 2.0}, "already scales its rotary positions (rope_type 'linear'); the "
                                                  "explorer applies a recipe such as yarn (s=2) only on top of plain "
                                                  "RoPE"),
    ("gemma3_text", {"recipe": "self-extend", "group": 2, "window": 32}, "has a RoPE per layer type; the distance "
                                                                         "remapping self-extend (G=2, W=32) is not "
                                                                         "applied to such models yet"),
])
def test_a_recipe_on_a_model_that_cannot_take_one_is_the_engines_error_line(runs, architecture_folder, tmp_path,
                                                                           model, recipe, message):
    folder = scaled_llama_folder(tmp_path / "scaled") if model == "scaled" else architecture_folder(model)
    runs_env = pytest.MonkeyPatch()
    runs_env.setenv("ATTN_MODEL", str(folder))
    try:
        at = open_page()
        at.text_input(key="temperatures").set_value("0.8, 1").run()
        submit(at, tokens=200, bucket=64, beyond=False, **recipe)
    finally:
        runs_env.undo()
    assert not at.exception, [e.value for e in at.exception]
    errors = [error.value for error in at.error]
    assert len(errors) == 1 and plain(message) in errors[0], errors
    assert runs["passes"] == 0, "a refused recipe must not run any pass"
    assert "context_view" not in [radio.key for radio in at.radio]  # the committed view stays


def test_a_recipe_counts_in_the_work_budget(runs):
    at = open_page()
    at.text_input(key="temperatures").set_value("0.8, 1, 1.25").run()
    submit(at, tokens=4096, recipe="linear", factor=4.0)
    errors = [error.value for error in at.error]
    assert len(errors) == 1 and plain("4,096 tokens x 6 passes (3 temperatures + 0 schedules + 3 on linear (s=4)) = "
                                      "24,576") in errors[0], errors
    assert plain(f"Ask for at most {settings.MAX_WORK // 6:,} tokens, or fewer temperatures or schedules, or no "
                 "recipe.") in errors[0]
    assert runs["passes"] == 0


def test_the_committed_sweeps_of_two_models_are_a_choice_and_a_table_side_by_side(tiny_env, runs, other_sweeps,
                                                                                 tiny_sweep_file):
    """A second model's committed sweep (conftest.other_sweeps: the tiny Gemma 3's, named gemma3-270m): the page
    opens on the default one, offers both by model, sets their verdicts side by side in one table, and shows the
    chosen one's verdict (with its untrained mass per layer type), the answers naming their model; no model runs."""
    tiny_env.setattr(settings, "SWEEPS_DIR", other_sweeps)
    tiny, gemma = (SweepDocument.from_dict(json.loads(path.read_text()))
                   for path in (tiny_sweep_file, next(other_sweeps.glob("*.json"))))
    at = open_page()
    assert_clean(at)
    choice = at.radio(key="context_committed")
    assert choice.options == ["tiny-random, 2,048 tokens", "Gemma 3 270M, 256 tokens"]
    assert choice.value == "tiny-random, 2,048 tokens"
    assert answer_line(at, "One text, the committed sweep of tiny-random (cross-fit on one text)") == plain(
        words.answer(tiny.verdict))
    table = next(t.value for t in at.table if "model" in t.value.columns)
    assert table.to_dict("records") == words.side_by_side_rows([tiny, gemma])
    assert "The committed sweeps side by side" in [header.value for header in at.subheader]
    choice.set_value("Gemma 3 270M, 256 tokens").run()
    assert_clean(at)
    verdict = gemma.verdict
    assert answer_line(at, "One text, the committed sweep of Gemma 3 270M (cross-fit on one text)") == plain(
        words.answer(verdict))
    assert verdict_lines(at) == [plain(sentence) for sentence in words.sentences(verdict)]
    assert any(line.startswith("By layer type") for line in verdict_lines(at))
    decomposition = next(t.value for t in at.table if "view" in t.value.columns)
    assert decomposition["untrained-distance mass past it, by layer type"].iloc[0].startswith("sliding 8: 0.000; ")
    assert set(trained_line_positions(chart(at, "context_nll"))) == {64}
    assert runs == {"sweeps": 0, "passes": 0}


def test_the_corpus_shown_is_the_chosen_models_and_none_leads_for_a_model_without_one(tiny_env, runs, other_sweeps,
                                                                                      summary_file, tmp_path):
    """With committed sweeps of two models, the corpus answer is the chosen model's: tiny-random's corpus leads for
    its sweep; Gemma's sweep without a corpus of its own opens on its one text and says so; once a Gemma corpus is
    committed (TUNE_DIR/*/summary.json), it leads for Gemma."""
    from model_utils.core.names import GEMMA

    tiny_env.setattr(settings, "SWEEPS_DIR", other_sweeps)
    tiny_env.setattr(settings, "CORPUS_SUMMARY", summary_file)
    tiny_env.setattr(settings, "TUNE_DIR", tmp_path / "tune")

    def titles(at: AppTest) -> list[str]:
        return [m.value.split(".**")[0].replace("\\", "") for m in at.markdown  # markdown escapes left out
                if m.value.startswith(("**The corpus", "**One text"))]

    at = open_page()
    assert_clean(at)
    assert titles(at)[0].startswith("**The corpus of tiny-random")
    at.radio(key="context_committed").set_value("Gemma 3 270M, 256 tokens").run()
    assert_clean(at)
    assert titles(at) == ["**One text, the committed sweep of Gemma 3 270M (cross-fit on one text)"]
    assert any("No corpus tune of Gemma 3 270M is committed" in c.value for c in at.caption)
    gemma = replace(TuneSummary.from_dict(json.loads(summary_file.read_text())), model=GEMMA)
    (tmp_path / "tune" / "gemma").mkdir(parents=True)
    (tmp_path / "tune" / "gemma" / "summary.json").write_text(json.dumps(gemma.to_dict(), allow_nan=False))
    at = open_page()
    at.radio(key="context_committed").set_value("Gemma 3 270M, 256 tokens").run()
    assert_clean(at)
    assert titles(at)[0].startswith("**The corpus of Gemma 3 270M")
    assert not any("No corpus tune" in c.value for c in at.caption)
    assert runs == {"sweeps": 0, "passes": 0}


def test_one_committed_sweep_offers_no_choice_and_a_table_of_one_row(tiny_env, runs, document):
    at = open_page()
    assert_clean(at)
    assert "context_committed" not in [radio.key for radio in at.radio]
    table = next(t.value for t in at.table if "model" in t.value.columns)
    assert table.to_dict("records") == words.side_by_side_rows([document])
    answers = [m.value for m in at.markdown if m.value.startswith("**One text, the committed sweep")]
    assert len(answers) == 1 and " of " not in answers[0].split(".**")[0]  # one model: its answer names none


def test_the_committed_fit_on_the_corpus_documents_is_a_bar_of_its_decomposition(tiny_env, runs):
    from bench.readme import FITS, TUNE, read_tune

    for name, path in (("CONTEXT_SWEEP", COMMITTED), ("CORPUS_SUMMARY", TUNE), ("FIT_DIR", FITS)):
        tiny_env.setattr(settings, name, path)
    at = open_page()
    assert_clean(at)
    corpus = read_tune().verdict  # the fits made on its documents folded in when they were written
    (fitted,) = [lever for lever in corpus.decomposition.levers if lever.kind is RowKind.FITTED]
    assert answer_line(at, "The corpus (held out over documents)") == plain(words.answer(corpus))
    assert bars(chart(at, "context_corpus_decomposition"))[words.row_label(fitted)] == pytest.approx(fitted.saved)


def test_a_damaged_committed_fit_is_one_error_line_and_the_others_still_show(tiny_env, runs, tmp_path):
    (tmp_path / "fits" / "good").mkdir(parents=True)
    (tmp_path / "fits" / "good" / "fit.json").write_text(json.dumps(fit_summary(values=(0.86, 0.9)).to_dict()))
    (tmp_path / "fits" / "torn").mkdir()
    (tmp_path / "fits" / "torn" / "fit.json").write_text('{"format": 3, "model": "bundled"')
    tiny_env.setattr(settings, "FIT_DIR", tmp_path / "fits")
    at = open_page()
    torn = [error.value for error in at.error if "torn" in error.value]
    assert len(torn) == 1 and torn[0].startswith("Cannot read")  # read once: one line, not one per use
    assert not at.exception and runs["passes"] == 0
    assert list(at.table[-1].value["fit"]) == ["constant T on yarn-rope (s=2)"]
