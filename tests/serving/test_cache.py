"""Serving many visitors from one process (serving/cache.py) on the tiny model, without a browser: a pass whose
visitor left stops between layers and frees its slot, each pass runs on its share of the cores, and a result asked
for twice at the same time is computed once."""

import subprocess
import sys
import threading
import time

import pytest
import torch

import components.serving.cache
from components.present.progress import progress_text
from components.serving import settings
from components.serving.admission import Gate
from components.serving.cache import GATE, cached_report, computed_once
from model_utils import analyze
from model_utils.core.progress import LAYER, Progress
from tests.support import ROOT, SAMPLE_TEXT


class SessionGone(BaseException):
    """Stands in for Streamlit's StopException, raised at a stopped run's next st call."""


def test_a_pass_whose_visitor_left_stops_between_layers_and_frees_its_slot(tiny_env):
    components.serving.cache.cached_model("tiny-random")
    layers = []

    def layer_then_gone(event):
        if event.stage == LAYER:
            layers.append((event.step, event.steps))
        if len(layers) == 2:
            raise SessionGone  # what the bar update raises once Streamlit was told the session is gone
        return progress_text(event)

    tiny_env.setattr(components.serving.cache, "progress_text", layer_then_gone)
    with pytest.raises(SessionGone):
        components.serving.cache._run("tiny-random", SAMPLE_TEXT, (0.5, 2.0), "in-model", 16, 1024, None)
    assert layers == [(1, 3), (2, 3)]
    assert (GATE.running, GATE.waiting) == (0, 0)
    tiny_env.undo()
    report = components.serving.cache._run("tiny-random", SAMPLE_TEXT, (0.5, 2.0), "in-model", 16, 1024, None)
    assert report.labels == ["T=0.5", "T=2"]  # the slot was free for the next pass


def test_running_passes_share_the_cores_between_layers(tiny_env):
    """On 2 cores: a pass alone runs 2 torch threads; while a second one runs, each runs 1; when the second ends,
    the first is back to 2 at its next layer. (The engine's progress callback runs between layers, in the pass's
    thread; the fake engine below calls it as the real one does.)"""
    tiny_env.setattr(settings, "CORES", 2)
    tiny_env.setattr(components.serving.cache, "GATE", Gate(2))
    seen = {"first": [], "second": []}
    first_layer, second_started, first_second_layer, second_done = (threading.Event() for _ in range(4))

    def layer(step, steps):
        return Progress(stage=LAYER, fraction=step / steps, step=step, steps=steps)

    def fake_analyze(*args, progress, **kwargs):
        name = threading.current_thread().name
        if name == "first":
            progress(layer(1, 3))
            seen[name].append(torch.get_num_threads())
            first_layer.set()
            second_started.wait(10)
            progress(layer(2, 3))
            seen[name].append(torch.get_num_threads())
            first_second_layer.set()
            second_done.wait(10)
            progress(layer(3, 3))
            seen[name].append(torch.get_num_threads())
        else:
            second_started.set()
            progress(layer(1, 1))
            seen[name].append(torch.get_num_threads())
            first_second_layer.wait(10)
        return name

    tiny_env.setattr(components.serving.cache, "analyze", fake_analyze)
    components.serving.cache.cached_model("tiny-random")

    def visit():
        components.serving.cache._run("tiny-random", SAMPLE_TEXT, (1.0,), "in-model", 16, 64, None)
        if threading.current_thread().name == "second":
            second_done.set()

    first = threading.Thread(target=visit, name="first")
    second = threading.Thread(target=visit, name="second")
    first.start()
    first_layer.wait(10)
    second.start()
    first.join(30)
    second.join(30)
    assert seen == {"first": [2, 1, 2], "second": [1]}


def test_two_requests_for_the_same_result_at_once_compute_it_once(tiny_env):
    cached_report.clear()
    calls = []
    real_analyze = components.serving.cache.analyze

    def slow_analyze(*args, **kwargs):
        calls.append(1)
        time.sleep(1.0)  # long enough for the second request to arrive while this one runs
        return real_analyze(*args, **kwargs)

    tiny_env.setattr(components.serving.cache, "analyze", slow_analyze)
    results = {}
    request = ("tiny-random", SAMPLE_TEXT, (0.5, 1.0), "in-model", 16, 1024)

    def visit(name):
        results[name] = computed_once(cached_report, *request).to_dict()

    first = threading.Thread(target=visit, args=("first",))
    first.start()
    while not len(components.serving.cache.FLIGHTS):
        time.sleep(0.01)
    second = threading.Thread(target=visit, args=("second",))
    second.start()
    first.join(30)
    second.join(30)
    assert len(calls) == 1
    assert results["first"] == results["second"]
    assert len(components.serving.cache.FLIGHTS) == 0


def test_a_stopped_computation_is_taken_over_by_its_follower(tiny_env):
    cached_report.clear()
    started, calls = threading.Event(), []
    real_analyze = components.serving.cache.analyze

    def analyze_or_stop(*args, **kwargs):
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            started.set()
            time.sleep(0.5)
            raise SessionGone  # the first visitor left mid-pass
        return real_analyze(*args, **kwargs)

    tiny_env.setattr(components.serving.cache, "analyze", analyze_or_stop)
    request = ("tiny-random", SAMPLE_TEXT, (3.0,), "in-model", 16, 1024)
    outcome = {}

    def visit(name):
        try:
            outcome[name] = computed_once(cached_report, *request).labels
        except SessionGone:
            outcome[name] = "gone"

    first = threading.Thread(target=visit, args=("first",), name="first")
    first.start()
    started.wait(10)
    second = threading.Thread(target=visit, args=("second",), name="second")
    second.start()
    first.join(30)
    second.join(30)
    assert outcome == {"first": "gone", "second": ["T=3"]}
    assert calls == ["first", "second"]
    reference = analyze(components.serving.cache.cached_model("tiny-random"), SAMPLE_TEXT, temperatures=[3.0],
                        window=16, max_tokens=1024)
    assert computed_once(cached_report, *request).results[0].loss == pytest.approx(reference.results[0].loss)


def test_the_waiting_page_says_its_place_and_how_to_leave():
    from components.serving.admission import Place, following_message, queue_message, queued_status

    text = queue_message(Place(ahead=2, running=1, slots=1, warm_up_ahead=0))
    assert text.startswith("Queued: 2 analyses ahead of you. This server runs one analysis at a time")
    assert "Leaving the page or changing the request gives up your place." in text
    assert queue_message(Place(ahead=1, running=1, slots=1, warm_up_ahead=1)).startswith(
        "Queued: 1 analysis ahead of you (the server's own preparation of the pages' default views).")
    assert "(1 of them the server's preparation" in queue_message(Place(ahead=3, running=2, slots=2, warm_up_ahead=1))
    assert "runs 2 analyses at a time" in queue_message(Place(ahead=3, running=2, slots=2, warm_up_ahead=1))
    waiting = Place(ahead=2, running=1, slots=1, warm_up_ahead=0)
    assert queued_status(waiting) == "waiting for its turn, 2 analyses ahead"
    assert following_message("warm-up", "Layer 3 of 30, about 20 s left").endswith("Layer 3 of 30, about 20 s left")
    assert following_message("a visitor", "Layer 3").startswith("Another visitor asked for the same view")


@pytest.mark.parametrize(("raw", "cores", "expected"), [
    ("", 2, 2), ("", 8, 8), ("", 1, 1), ("3", 2, 3), (" 0 ", 2, None), ("OFF", 16, None)])
def test_the_operator_sets_how_many_passes_run_at_once(raw, cores, expected):
    assert settings.max_concurrent(raw, cores) == expected


@pytest.mark.parametrize("raw", ["-1", "two", "1.5"])
def test_a_bad_setting_is_refused_with_its_name(raw):
    with pytest.raises(ValueError, match="ATTN_MAX_CONCURRENT"):
        settings.max_concurrent(raw, 2)


def test_pandas_is_whole_before_any_figure_is_built():
    """Plotly checks for pandas with a bare sys.modules lookup; a session building a figure while another session's
    thread was still importing pandas failed ("partially initialized module 'pandas'"). present/figures/ imports
    pandas itself, so every page that can build a figure finds it whole."""
    check = ("import sys; import components.present.figures.maps; pandas = sys.modules.get('pandas'); "
             "assert pandas is not None and hasattr(pandas, 'Series') and hasattr(pandas, 'DataFrame')")
    result = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120,
                            cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
