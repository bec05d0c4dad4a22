"""The Context length page with the committed corpus summary, the fits and other models' sweeps: the corpus drawn
next to the one text and its answer first, the fits' table, chart and verdicts (and a fit made on the corpus's
documents as a bar of its decomposition), two models' sweeps as a choice and a table, and every file it cannot read
one error line."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from components.present import captions
from components.present.text import plain
from components.serving import settings
from model_utils.core.records.fit import FORMAT as FIT_FORMAT
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import RowKind
from model_utils.experiments.texts import builtin_corpus
from model_utils.verdicts import words
from model_utils.verdicts.fit import judge_fit
from model_utils.verdicts.fit import law as law_of
from tests.support.apptest import array, assert_clean, chart, charts, traces
from tests.support.context_page import (
    COMMITTED,
    answer_line,
    bars,
    every_line,
    full_answer_line,
    open_page,
    opening,
    trained_line_positions,
    verdict_lines,
)
from tests.verdicts.synthetic import fit_summary


def test_a_corpus_summary_is_drawn_next_to_the_single_text(tiny_env, runs, summary_file):
    tiny_env.setattr(settings, "CORPUS_SUMMARY", summary_file)
    summary = TuneSummary.from_dict(json.loads(summary_file.read_text()))
    at = open_page()
    assert_clean(at)
    assert runs["passes"] == 0
    opened = [trace["name"] for trace in traces(chart(at, "context_corpus_nll"), "scatter")
              if trace.get("mode") == "lines+markers"]
    assert opened == ["T=1", "best constant T per bucket"]  # four lines at most: no recipe ran on this corpus
    nll = chart(every_line(at), "context_corpus_nll")
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
    assert "2 documents \\(2,048 tokens each, 4,096 in all\\)" in caption
    # below 8 documents a spread is their range, never a resampled interval (issue 58: one rule, the record's spread)
    assert "range of the 2 documents" in caption and "resampled" not in caption
    names = ", ".join(f"builtin {name}" for name, _ in builtin_corpus()[:2])  # the documents the tuner ran
    assert plain(f"({names})") in caption
    # per domain: the two documents share one, and the table holds the summary's savings past the trained length
    assert [entry.domain for entry in summary.domains] == ["reference documentation"]
    assert any(m.value == "**Per domain of the corpus**" for m in at.markdown)
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
    assert plain(f"this fit has format 1; this version reads format 3, {FIT_FORMAT}") in errors[1]
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
    assert "Fitted temperature, held out, against YaRN's law" in [e.label for e in at.expander]
    table = at.table[-1].value
    fits = [on_recipe, own]  # recipes first
    assert table.to_dict("records") == captions.fit_rows_in_t([words.fit_row(fit) for fit in fits],
                                                              [law_of(fit) for fit in fits])
    assert list(table["saved vs T = 1"]) == ["+2.000 (+1.900 to +2.100)", "+0.050 (-0.010 to +0.100)"]
    assert not set(captions.LAW_COLUMNS) - {"YaRN's law"} & set(table.columns)  # no column in m
    assert table["YaRN's law"].iloc[0] == f"T = {1 / law_of(on_recipe).yarn_law:.3f} at s = 2"
    law, point = traces(chart(at, "context_fit_law"), "scatter")
    assert law["name"].startswith("YaRN's law") and array(point["y"])[0] == pytest.approx(0.88)  # as a T
    said = next(m.value for m in at.markdown if m.value.startswith(f"**{plain(words.fit_point_label(on_recipe))}"))
    assert said.splitlines()[1:] == [f"- {plain(sentence)}" for sentence in words.fit_sentences(judge_fit(on_recipe))]


def test_without_fits_the_page_shows_no_fit_section(tiny_env, runs):
    at = open_page()
    assert_clean(at)
    assert not any(e.label.startswith("Fitted temperature") for e in at.expander)


# --- RoPE recipes: the committed view per recipe, the untrained-distance mass, the form's recipe -------------------

def test_the_corpus_verdict_is_said_with_the_sweeps(recipe_env, summary_file):
    recipe_env.setattr(settings, "CORPUS_SUMMARY", summary_file)
    at = open_page()
    assert_clean(at)
    summary = TuneSummary.from_dict(json.loads(summary_file.read_text()))
    said = next(m.value for m in at.markdown if m.value.startswith("**What the corpus measured"))
    assert said.splitlines()[1:] == [f"- {plain(sentence)}" for sentence in words.sentences(summary.verdict)]


def test_with_a_corpus_its_answer_comes_first_held_out_over_documents_and_its_numbers_lead(tiny_env, summary_file,
                                                                                           document):
    tiny_env.setattr(settings, "CORPUS_SUMMARY", summary_file)
    at = open_page()
    assert_clean(at)
    corpus = TuneSummary.from_dict(json.loads(summary_file.read_text())).verdict
    order = opening(at)
    assert order[1].startswith("markdown:**The corpus") and order[2] == "plotly_chart:context_corpus_decomposition"
    assert order.index("expander:Every lever, in full: the answers and the decomposition table") < order.index(
        "plotly_chart:context_decomposition")  # the one text's answer and chart, folded
    assert answer_line(at, "The corpus (held out over documents)") == plain(words.answer_point(corpus))
    assert full_answer_line(at, "The corpus (held out over documents)") == plain(words.answer(corpus))
    assert full_answer_line(at, "One text, the committed sweep (cross-fit on one text)") == plain(
        words.answer(document.verdict))
    assert bars(chart(at, "context_corpus_decomposition")) == pytest.approx(
        {words.chart_label(lever): lever.saved for lever in corpus.decomposition.levers if lever.saved is not None})
    # the headline numbers are the corpus's
    assert [m.label for m in at.get("metric")] == [plain(h.label) for h in words.headlines(corpus)]
    assert any("held out over documents" in m.label for m in at.get("metric"))


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
        words.answer_point(tiny.verdict))
    table = next(t.value for t in at.table if "model" in t.value.columns)
    assert table.to_dict("records") == words.side_by_side_rows([tiny, gemma])
    assert "The committed sweeps side by side, and the corpus per domain" in [e.label for e in at.expander]
    choice.set_value("Gemma 3 270M, 256 tokens").run()
    assert_clean(at)
    verdict = gemma.verdict
    assert answer_line(at, "One text, the committed sweep of Gemma 3 270M (cross-fit on one text)") == plain(
        words.answer_point(verdict))
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
                if m.value.startswith(("**The corpus", "**One text")) and ", in full.**" not in m.value]

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
    assert len(answers) == 2 and all(" of " not in said.split(".**")[0] for said in answers)  # one model: none named


def test_the_committed_fit_on_the_corpus_documents_is_a_bar_of_its_decomposition(tiny_env, runs):
    from model_utils.experiments.committed import FITS, TUNES

    for name, path in (("CONTEXT_SWEEP", COMMITTED), ("CORPUS_SUMMARY", TUNES.first), ("FIT_DIR", FITS.folder)):
        tiny_env.setattr(settings, name, path)
    at = open_page()
    assert_clean(at)
    corpus = TUNES.read_first().verdict  # the fits made on its documents folded in when they were written
    (fitted,) = [lever for lever in corpus.decomposition.levers if lever.kind is RowKind.FITTED]
    assert full_answer_line(at, "The corpus (held out over documents)") == plain(words.answer(corpus))
    assert bars(chart(at, "context_corpus_decomposition"))[words.chart_label(fitted)] == pytest.approx(fitted.saved)


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
