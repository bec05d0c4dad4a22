"""Helpers for driving the app in-process with streamlit's AppTest, shared by the page tests (not a test module)."""

from __future__ import annotations

import base64
import json

import numpy as np
from streamlit.testing.v1 import AppTest

from components.pages import PAGES
from tests.support import ROOT

APP = str(ROOT / "app.py")
PAGE_SCRIPTS = tuple(spec.script for spec in PAGES)
TITLES = {spec.script: spec.title for spec in PAGES}
SPECS = {spec.script: spec for spec in PAGES}


def open_app(page: str | None = None, query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if page is not None:
        at.switch_page(f"components/pages/{page}.py")
        at.run()
    return at


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def charts(at: AppTest) -> dict[str, dict]:
    """The page's plotly figures as plotly JSON, by element key (the chart's `key` is part of its id)."""
    return {element.proto.id: json.loads(element.proto.spec) for element in at.get("plotly_chart")}


def chart(at: AppTest, key: str) -> dict:
    matches = [figure for element_id, figure in charts(at).items() if key in element_id]
    assert len(matches) == 1, f"expected one chart keyed {key!r}, found {len(matches)} in {list(charts(at))}"
    return matches[0]


def array(value) -> np.ndarray:
    """A plotly JSON array: a plain list, or plotly's base64 typed array {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        return flat.reshape([int(n) for n in str(shape).split(",")]) if shape else flat
    return np.asarray(value)


def traces(figure: dict, kind: str) -> list[dict]:
    return [trace for trace in figure["data"] if trace.get("type", "scatter") == kind]


def texts(at: AppTest, kind: str) -> list[str]:
    """The values of every element of `kind` ("caption", "info", "markdown", ...), sidebar included."""
    return [element.value for element in at.get(kind)]


def panel_titles(figure: dict) -> list[str]:
    return [annotation["text"] for annotation in figure["layout"].get("annotations", [])]
