"""The Context length page's form: a sweep of your own on the tiny model (its progress, its verdict, its cache),
with a RoPE recipe or a distance remapping, and every refusal an error line before any pass while the committed view
stays."""

from __future__ import annotations

import hashlib
from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import numpy as np
import pytest

import components.serving.cache
from components.present.text import plain
from components.serving import settings
from components.serving.cache import SweepRequest
from model_utils import Schedule
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.experiments.sweep import SweepSettings, sweep
from model_utils.experiments.texts import builtin_text
from model_utils.verdicts import words
from tests.support.apptest import array, assert_clean, chart, charts, traces
from tests.support.context_page import (
    MAIN,
    OWN,
    POSITION_CHARTS,
    by_label,
    every_line,
    open_page,
    submit,
    verdict_lines,
)


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
    assert [trace["name"] for trace in traces(chart(at, "context_nll"), "scatter")] == [
        "T=1", "best constant T per bucket"]  # no recipe ran: T = 1 and the best T per bucket
    for trace, result in zip(traces(chart(every_line(at), "context_nll"), "scatter"), expected.results, strict=True):
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
    lines = [line.replace("\\", "") for line in verdict_lines(at)]
    assert any("up to position 1,279 no bucket past the trained length rises" in line for line in lines), lines
    assert any("is the best for positions 1,024-1,279" in line for line in lines), lines


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


def test_a_run_with_a_recipe_runs_every_temperature_on_it(runs, tiny):
    at = open_page()
    at.text_input(key="temperatures").set_value("0.8, 1").run()
    submit(at, tokens=1280, recipe="yarn-rope", factor=2.0)
    assert_clean(at)
    assert runs["passes"] == 4  # 2 temperatures on the model's own positions, 2 on the recipe
    labels = at.selectbox(key="context_compare").options
    assert labels == ["T=0.8", "yarn-rope (s=2) + T=0.8", "yarn-rope (s=2) + T=1"]
    assert "yarn-rope (s=2) + T=1" in [trace["name"] for trace in traces(chart(at, "context_nll"), "scatter")]
    assert every_line(at).selectbox(key="context_lines").options == [MAIN, OWN, "yarn-rope (s=2)"]
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
