"""Widget groups as `*_ui()` functions that return plain values, and the view <-> URL round trip.

Every widget has a key. Widgets shared by all pages live in the sidebar (drawn by app.py on every run) and are read
back by pages through `current_settings()`. A value in the URL seeds its widget on a session's first run, and
`publish_to_url` writes the current view back, so a shared link reproduces what the sender saw.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from model_utils import ModelLoadError
from model_utils.analysis import MODES, AnalysisError, resolve_temperatures

ASSETS = Path(__file__).resolve().parent.parent / "assets"
DEFAULT_TEMPERATURES = "0.5, 1, 1.5, 2"
MAX_UI_TEMPERATURES = 6
MAX_TEXT_CHARS = 200_000  # what a text box accepts; the engine then cuts to the page's token limit
SHORT_TEXT_IN_URL = 300  # texts up to this many characters travel in the link
# Work one request may ask for, in tokens x temperatures (4096 x 4 runs in about two minutes on 2 cores);
# an operator can lower it for a public server.
MAX_WORK = int(os.environ.get("ATTN_MAX_WORK", 4096 * 4))
MODE_HELP = {
    "in-model": "T inside every layer during the pass: later layers and the predictions change.",
    "isolated": "each layer's T = 1 scores re-softmaxed at T, inputs held fixed: loss stays that of T = 1.",
}


@dataclass(frozen=True)
class Settings:
    """The sidebar's choices. `temperatures` is None when the text could not be parsed (see `error`)."""

    model: str
    temperatures: tuple[float, ...] | None
    error: str | None
    mode: str
    window: int


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def plain(text: str) -> str:
    """Text that may hold user input, made safe for Streamlit markdown (st.error, st.info, ...): every markdown,
    HTML or Streamlit directive character (links, emphasis, :colour[...]) is backslash-escaped, so it shows as is."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def available_models() -> list[str]:
    """The models the operator allows: $ATTN_MODELS (comma-separated) plus $ATTN_MODEL, default the bundled one.
    Users choose from this list only; they can never type a path."""
    listed = [name.strip() for name in os.environ.get("ATTN_MODELS", "").split(",") if name.strip()]
    default = os.environ.get("ATTN_MODEL", "").strip() or (listed[0] if listed else "bundled")
    return [default] + [name for name in listed if name != default]


def parse_temperatures(text: str) -> tuple[float, ...]:
    """'0.5, 1 2' -> (0.5, 1.0, 2.0); raises AnalysisError with a message for the user."""
    parts = [part for part in re.split(r"[,\s;]+", text.strip()) if part]
    if len(parts) > MAX_UI_TEMPERATURES:
        raise AnalysisError(f"at most {MAX_UI_TEMPERATURES} temperatures at once; {len(parts)} were given")
    return tuple(resolve_temperatures(parts))


def parse_window(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 4096:
        raise ValueError("window out of range")
    return value


def seed(key: str, default, parse: Callable[[str], object] = str, url_key: str | None = None) -> None:
    """Give widget `key` its first value: the URL's (if it parses) on a session's first run, else `default`."""
    if key in st.session_state:
        return
    raw = st.query_params.get(url_key or key)
    value = default
    if raw is not None:
        try:
            value = parse(raw)
        except (ValueError, TypeError):
            value = default  # a mangled link falls back to the default view rather than failing
    st.session_state[key] = value


def publish_to_url(values: dict[str, object]) -> None:
    """Write the view into the URL (None removes a key), touching only what changed."""
    for key, value in values.items():
        if value is None:
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get(key) != str(value):
            st.query_params[key] = str(value)


def sidebar_ui() -> Settings:
    """The shared sidebar: model, temperatures, mode, recent window."""
    models = available_models()
    seed("model", models[0], lambda raw: raw if raw in models else models[0])
    seed("temperatures", DEFAULT_TEMPERATURES, lambda raw: ", ".join(f"{t:g}" for t in parse_temperatures(raw)),
         url_key="t")
    seed("mode", "in-model", lambda raw: raw if raw in MODES else "in-model")
    seed("window", 32, parse_window)
    with st.sidebar:
        st.selectbox("Model", models, key="model", help="Models the operator of this server made available.")
        st.text_input("Temperatures to compare", key="temperatures", max_chars=80,
                      help=f"Up to {MAX_UI_TEMPERATURES} numbers in (0, 100], e.g. 0.5, 1, 2. "
                           "T > 1 softens attention, T < 1 sharpens it.")
        st.radio("Mode", MODES, key="mode", captions=[MODE_HELP[mode] for mode in MODES])
        st.number_input("Recent window (tokens)", min_value=1, max_value=4096, step=1, key="window",
                        help="Keys within this many positions of the query count as recent; the first token "
                             "(the sink) is always counted on its own.")
    try:
        temperatures, error = parse_temperatures(st.session_state["temperatures"]), None
    except AnalysisError as problem:
        temperatures, error = None, str(problem)
        st.sidebar.error(f"Temperatures: {plain(error)}")
    settings = Settings(st.session_state["model"], temperatures, error, st.session_state["mode"],
                        int(st.session_state["window"]))
    publish_to_url({"t": ",".join(f"{t:g}" for t in temperatures) if temperatures else None,
                    "mode": settings.mode, "window": settings.window,
                    "model": settings.model if len(models) > 1 else None})
    return settings


def current_settings() -> Settings:
    """The sidebar's settings for a page (app.py stores them before running the page)."""
    return st.session_state["_settings"]


def require_temperatures(settings: Settings) -> tuple[float, ...]:
    """The parsed temperatures, or an error on the page and stop."""
    if settings.temperatures is None:
        st.error(f"Fix the temperatures in the sidebar: {plain(settings.error)}")
        st.stop()
    return settings.temperatures


def example_text(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def text_ui(key: str, example: str, label: str, height: int = 150, help_text: str | None = None) -> str:
    """A text box seeded with an example (or the link's short text); returns its content."""
    seed(key, example_text(example), lambda raw: raw[:MAX_TEXT_CHARS], url_key="text")
    text = st.text_area(label, key=key, height=height, max_chars=MAX_TEXT_CHARS, help=help_text)
    publish_to_url({"text": text if len(text) <= SHORT_TEXT_IN_URL and text != example_text(example) else None})
    return text


def within_budget(limit: int, n_temperatures: int) -> int:
    """The token limit a request may use: the page's `limit`, cut (with a note on the page) so that tokens x
    temperatures stays within the server's MAX_WORK. Decided before any work is done."""
    allowed = max(2, MAX_WORK // n_temperatures)
    if allowed < limit:
        st.info(f"This server runs at most {MAX_WORK:,} tokens x temperatures per request: with {n_temperatures} "
                f"temperatures the text is cut to {allowed:,} tokens.")
    return min(limit, allowed)


def layer_head_ui(n_layers: int, n_heads: int, key_prefix: str, with_mean: bool = True) -> tuple[int, int | None]:
    """Layer and head pickers (head None = mean of heads), seeded from and written back to the URL."""
    heads = (["mean of heads"] if with_mean else []) + list(range(n_heads))
    seed(f"{key_prefix}_layer", min(n_layers - 1, n_layers // 2),
         lambda raw: int(raw) if 0 <= int(raw) < n_layers else n_layers // 2, url_key="layer")
    seed(f"{key_prefix}_head", heads[0], lambda raw: int(raw) if 0 <= int(raw) < n_heads else heads[0],
         url_key="head")
    if st.session_state[f"{key_prefix}_layer"] >= n_layers:  # the model changed under a kept choice
        st.session_state[f"{key_prefix}_layer"] = n_layers // 2
    if st.session_state[f"{key_prefix}_head"] not in heads:
        st.session_state[f"{key_prefix}_head"] = heads[0]
    left, right = st.columns(2)
    layer = left.selectbox("Layer", list(range(n_layers)), key=f"{key_prefix}_layer")
    head = right.selectbox("Head", heads, key=f"{key_prefix}_head")
    head = None if head == "mean of heads" else int(head)
    publish_to_url({"layer": layer, "head": head})
    return int(layer), head


def report_or_stop(fetch: Callable, *args, **kwargs):
    """Run a cached engine call; a request the engine refuses becomes an error line on the page."""
    try:
        return fetch(*args, **kwargs)
    except (AnalysisError, ModelLoadError) as error:
        st.error(plain(error))
        st.stop()


def downloads_ui(report, stem: str) -> None:
    """The report as JSON and the per-head statistics as CSV."""
    rows = report.head_rows()
    table = io.StringIO()
    writer = csv.DictWriter(table, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    left, right = st.columns(2)
    left.download_button("Download the report (JSON)", json.dumps(report.to_dict(), allow_nan=False),
                         file_name=f"{stem}.json", mime="application/json", key=f"{stem}_json")
    right.download_button("Download per-head statistics (CSV)", table.getvalue(), file_name=f"{stem}.csv",
                          mime="text/csv", key=f"{stem}_csv")
