"""The server's warm-up (components/serving/warmup.py) computes each model page's default view with the page's own cache
keys: after it, opening every model page runs no model pass (AppTest shares the process's caches with it)."""

import contextlib
import os
import subprocess
import sys
import threading

import components.serving.cache
import components.widgets.model_page
from components.serving import warmup
from components.serving.admission import WARM_UP
from components.serving.cache import cached_answer_probe, cached_collapse_report, cached_report, cached_report_with_maps
from components.serving.defaults import DEFAULT_VIEWS
from tests.support import ROOT
from tests.support.apptest import assert_clean, open_app


def count_passes(monkeypatch, what: str = "analyze") -> list[str]:
    """Who runs `what` (a model function components.serving.cache calls) from now on."""
    passes = []
    real = getattr(components.serving.cache, what)

    def counting(*args, **kwargs):
        passes.append(components.serving.cache._who())
        return real(*args, **kwargs)

    monkeypatch.setattr(components.serving.cache, what, counting)
    return passes


def test_after_the_warm_up_no_model_page_runs_the_model(tiny_env):
    cached_report.clear()
    cached_report_with_maps.clear()
    cached_collapse_report.clear()
    cached_answer_probe.clear()
    passes, probes = count_passes(tiny_env), count_passes(tiny_env, "answer_probe")
    thread = warmup.start(keep=False)
    thread.join(120)
    assert passes == [WARM_UP] * len(DEFAULT_VIEWS) == [WARM_UP] * 3  # maps, collapse, schedules
    assert probes == [WARM_UP]  # the collapse page's answer probe of its default answer
    for page in ("attention_maps", "collapse_inspector", "length_schedules"):
        at = open_app(page)
        assert_clean(at)
        assert at.get("plotly_chart")
    assert len(passes) == 3 and len(probes) == 1, f"a page ran the model after the warm-up: {passes}, {probes}"

    at.text_input(key="temperatures").set_value("0.5, 3").run()  # a visitor's own request does run (the counter works)
    assert_clean(at)
    assert passes[3:] == ["a visitor"]


def test_the_warm_up_asks_what_a_page_asks_before_anything_changes(tiny_env):
    args, kwargs = warmup.default_request(DEFAULT_VIEWS[2], "tiny-random")
    model, text, keys, mode, window, tokens = args
    assert (model, keys[:4], mode, window, tokens) == ("tiny-random", (0.5, 1.0, 1.5, 2.0), "in-model", 32, 2048)
    assert keys[4][0] == "qwen-logn" and text.startswith("Before the staff meeting") and kwargs == {}
    tiny_env.setattr(components.widgets.model_page.settings, "MAX_WORK", 4096)  # an operator's lower $ATTN_MAX_WORK
    assert warmup.default_request(DEFAULT_VIEWS[1], "tiny-random")[0][-1] == 1024  # the page's budget cut, too


class EnoughLooksError(Exception):
    pass


def test_the_warm_up_recomputes_a_default_view_that_expired(tiny_env):
    """After its first round it looks again every REFRESH_SECONDS: a view still cached costs no pass, one that is
    gone (an hour old, or pushed out by other reports) is computed again."""
    cached_report.clear()
    cached_report_with_maps.clear()
    cached_collapse_report.clear()
    passes = count_passes(tiny_env)
    looks = []

    def sleep_then_stop(seconds):
        looks.append(seconds)
        if len(looks) == 1:
            return  # the first look: everything still cached
        if len(looks) == 2:
            cached_report.clear()  # collapse and schedules expired
            cached_collapse_report.clear()
            return
        raise EnoughLooksError  # ends the (otherwise endless) loop

    def keep_warm_until_enough():
        with contextlib.suppress(EnoughLooksError):
            warmup.keep_warm("tiny-random", 1.0)

    tiny_env.setattr(warmup.time, "sleep", sleep_then_stop)
    thread = threading.Thread(target=keep_warm_until_enough, name=WARM_UP)
    thread.start()
    thread.join(120)
    assert looks == [1.0, 1.0, 1.0]
    assert len(passes) == 3 + 0 + 2  # the first round, a look with everything cached, a look after the expiry


def test_the_warm_up_reads_the_committed_results_the_context_page_draws(tiny_env, summary_file):
    from components.serving import cache, settings
    from model_utils.experiments import committed

    tiny_env.setattr(settings, "CORPUS_SUMMARY", summary_file)
    cache.cached_committed.clear()
    warmup.read_committed_results()

    def not_again(path, record):
        raise AssertionError("the page parsed a committed file the warm-up had read")

    tiny_env.setattr(committed, "read", not_again)
    at = open_app("context_length")
    assert_clean(at)
    assert {"context_nll", "context_corpus_nll"} <= {e.proto.id.rsplit("-", 1)[-1] for e in at.get("plotly_chart")}


# A fresh interpreter: the warm-up as the server runs it, then a visitor's first page (the collapse page, reached
# from the default page); prints the drawing modules that page had to import itself.
FIRST_PAGE_AFTER_WARM_UP = f"""
import sys
from streamlit.testing.v1 import AppTest
from components.serving import warmup

assert warmup.warm_up("tiny-random") == 3
before = set(sys.modules)
at = AppTest.from_file({str(ROOT / "app.py")!r}, default_timeout=120)
at.run()
at.switch_page("components/pages/collapse_inspector.py")
at.run()
assert not at.exception and at.get("plotly_chart"), [e.value for e in at.exception]
drawing = ("pandas", "pyarrow", "plotly.graph_objects", "components.present.figures.maps",
           "components.present.captions")
print(" ".join(sorted(name for name in set(sys.modules) - before if name in drawing)) or "none")
"""


def test_the_first_page_after_the_warm_up_imports_no_drawing_code(tmp_path):
    """pandas (with pyarrow) and plotly took most of the first page's script run after the warm-up; the warm-up
    imports them in the background instead."""
    result = subprocess.run([sys.executable, "-c", FIRST_PAGE_AFTER_WARM_UP], cwd=ROOT, capture_output=True,
                            text=True, timeout=300, env=os.environ | {"ATTN_MODEL": "tiny-random",
                                                                      "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-1:] == ["none"], f"the first page imported {result.stdout.strip()}"
