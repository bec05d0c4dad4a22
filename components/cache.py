"""The app's caches: one model object per process, and bounded caches of reports and answer tokens.

The model is an `st.cache_resource` (shared by every session; the engine holds no per-call state in it). Reports
are `st.cache_data` keyed by everything that changes them (model, text, temperatures, mode, window, kept maps,
token limit, first measured query) and bounded by entry count, serialized size and age (and all of them together
by the server's `maxCacheDataSize`). The answer's first token is cached apart from the report, so a new answer
costs a tokenizer call and never a model run. The progress bar is created inside the cached function, so
Streamlit can replay it on a cache hit (it ends emptied, so a hit shows nothing).
"""

from __future__ import annotations

import streamlit as st

from model_utils import LoadedModel, Report, Schedule, analyze, load_model
from model_utils.analysis import answer_token

# (schedule name, parameter) stands for a Schedule: cache keys stay plain tuples of numbers and strings.
TemperatureKey = float | tuple[str, float]


@st.cache_resource(show_spinner=False, max_entries=4)
def cached_model(name: str) -> LoadedModel:
    bar = st.progress(0.0, text=f"Loading model {name}")
    loaded = load_model(name, progress=lambda fraction, message: bar.progress(min(1.0, fraction), text=message))
    bar.empty()
    return loaded


def _spec(key: TemperatureKey) -> float | Schedule:
    return Schedule(key[0], key[1]) if isinstance(key, tuple) else key


def _run(model_name: str, text: str, temperatures: tuple[TemperatureKey, ...], mode: str, window: int,
         max_tokens: int, keep_maps, q_start: int | None = None) -> Report:
    loaded = cached_model(model_name)
    bar = st.progress(0.0, text="Running the model")
    # these pages stay within the model's trained context; only the context-length page goes past it, when asked
    report = analyze(loaded, text, temperatures=[_spec(t) for t in temperatures], mode=mode, window=window,
                     keep_maps=keep_maps, max_tokens=min(max_tokens, loaded.max_positions), q_start=q_start,
                     progress=lambda fraction, message: bar.progress(min(1.0, fraction), text=message))
    bar.empty()
    return report


@st.cache_data(show_spinner=False, max_entries=12, max_size="256mb", ttl=3600)
def cached_report(model_name: str, text: str, temperatures: tuple[TemperatureKey, ...], mode: str, window: int,
                  max_tokens: int) -> Report:
    """Statistics, loss and last-query rows: small (a few MB), so a dozen are kept."""
    return _run(model_name, text, temperatures, mode, window, max_tokens, keep_maps=None)


@st.cache_data(show_spinner=False, max_entries=4, max_size="512mb", ttl=3600)
def cached_report_with_maps(model_name: str, text: str, temperatures: tuple[TemperatureKey, ...], mode: str,
                            window: int, max_tokens: int, q_start: int | None = None) -> Report:
    """Also keeps every layer's queries and keys, so any layer / head map re-draws without running the model
    (about 100 MB at 256 tokens and 4 temperatures on the bundled model, hence only four kept). `q_start`: the
    first query the statistics average (None: the engine's default, past the recent window)."""
    return _run(model_name, text, temperatures, mode, window, max_tokens, keep_maps="all", q_start=q_start)


@st.cache_data(show_spinner=False, max_entries=256, ttl=3600)
def cached_answer_token(model_name: str, prompt: str, answer: str) -> tuple[int, str]:
    """Id and text of the first token of `answer` after `prompt` (model_utils.analysis.answer_token)."""
    return answer_token(cached_model(model_name), prompt, answer)


# --- the context-length page ------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False, max_entries=4, ttl=3600)
def cached_json_file(path: str, modified: float) -> dict:
    """A committed result (a sweep document or a corpus summary), parsed, its big tables as arrays
    (components.sweep_data.with_arrays). Keyed by the file's modification time too, so a file replaced on disk is
    read again."""
    import json
    from pathlib import Path

    from components.sweep_data import with_arrays

    return with_arrays(json.loads(Path(path).read_text(encoding="utf-8")))


@st.cache_data(show_spinner=False, max_entries=4, max_size="256mb", ttl=3600)
def cached_sweep(model_name: str, text: str, temperatures: tuple[TemperatureKey, ...], max_tokens: int,
                 bucket_size: int, window: int, beyond_trained: bool, source: str) -> dict:
    """A context-length sweep document (model_utils.sweep.sweep): one in-model pass per temperature or schedule.
    The progress bar appears with the first pass that runs (a refused or fully cached sweep draws none) and says
    which pass and which layer it is at."""
    import time

    from components import settings
    from model_utils.sweep import SweepSettings, sweep

    loaded = cached_model(model_name)
    passes, bar, current = len(temperatures), [], {"index": 0, "label": ""}

    def on_start(label: str, index: int) -> None:
        current.update(index=index, label=label)
        if not bar:  # the first pass to run: passes before it came from the pass cache
            bar.append(st.progress(0.0))
            current.update(started=time.perf_counter(), first=index / passes)
        bar[0].progress(index / passes, text=f"Pass {index + 1} of {passes}: {label}")

    def on_layer(fraction: float, message: str) -> None:
        done = min(1.0, (current["index"] + fraction) / passes)
        ran = done - current["first"]  # the share of the sweep run so far, at the speed measured since
        left = (time.perf_counter() - current["started"]) * (1.0 - done) / ran if ran > 0 else 0.0
        layer = message.split(" (")[0]  # "Layer 3 of 30": the engine's estimate is for this pass only
        bar[0].progress(done, text=f"Pass {current['index'] + 1} of {passes}: {current['label']}, {layer.lower()}; "
                                   f"about {left:.0f} s left for the sweep")

    document = sweep(loaded, text, [_spec(t) for t in temperatures],
                     SweepSettings(max_tokens, bucket_size, window=window, beyond_trained=beyond_trained),
                     source=source, cache_dir=settings.SWEEP_PASSES, on_start=on_start, progress=on_layer)
    for element in bar:
        element.empty()
    return document
