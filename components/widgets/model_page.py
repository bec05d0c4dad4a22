"""The opening every page that runs the model repeats, in one place: the sidebar's choices, the text box, the work
budget, the cached report (an engine refusal becomes an error line), the notes and the downloads."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from components.present import captions
from components.present.text import plain
from components.serving import settings
from components.serving.cache import TemperatureKey, cached_model, computed_once
from components.serving.defaults import (  # noqa: F401  (the views: for the pages)
    COLLAPSE_VIEW,
    DEFAULT_SCHEDULE,
    MAPS_VIEW,
    SCHEDULES_VIEW,
    request_args,
    schedule_key,
    tokens_within_budget,
)
from components.widgets.controls import require_temperatures, sidebar_choices, text_ui
from components.widgets.downloads import downloads_ui
from model_utils import AnalysisError, LoadedModel, ModelLoadError, Report


def report_or_stop(fetch: Callable, *args, **kwargs):
    """Run a cached engine call (once, however many ask at the same time: cache.computed_once); a
    request the engine refuses becomes an error line on the page."""
    try:
        return computed_once(fetch, *args, **kwargs)
    except (AnalysisError, ModelLoadError) as error:
        st.error(plain(error))
        st.stop()


def within_budget(limit: int, n_temperatures: int) -> int:
    """The token limit a request may use: the page's `limit`, cut (with a note on the page) so that tokens x
    temperatures stays within the server's MAX_WORK. Decided before any work is done."""
    allowed = tokens_within_budget(limit, n_temperatures)
    if allowed < limit:
        st.info(f"This server runs at most {settings.MAX_WORK:,} tokens x temperatures per request: with "
                f"{n_temperatures} temperatures the text is cut to {allowed:,} tokens.")
    return allowed


def model_facts_ui(loaded: LoadedModel) -> None:
    """What the pages describe: the loaded model's architecture, size, trained length and windows (sidebar)."""
    st.sidebar.markdown(f"**The model the pages describe**: {plain(settings.model_description(loaded.name))}\n"
                        + "\n".join(f"- {plain(name)}: {plain(value)}"
                                     for name, value in captions.fact_lines(loaded.facts())))


class ModelPage:
    """A page that runs the model on a text: its opening (sidebar choices, text box) when created, its report
    (budget, cached run, notes, downloads) from `report`."""

    def __init__(self, text_key: str, example: str, label: str, **text_options):
        self.choices = sidebar_choices()
        self.temperatures = require_temperatures(self.choices)
        self.text = text_ui(text_key, example, label, **text_options)
        self.loaded: LoadedModel | None = None

    @property
    def windows(self) -> list[int | None]:
        """Per layer, the keys a query sees in a sliding-window layer (None: full causal attention)."""
        return self.loaded.sliding_windows()

    def report(self, fetch: Callable, limit: int, stem: str | None, *, extra: tuple[TemperatureKey, ...] = (),
               cut_note: str | None = "The text was cut to its first {n:,} tokens.", **fetch_options) -> Report:
        """The report of the page's text at the sidebar's temperatures (then `extra`, e.g. a schedule), from
        `fetch` (a cached function of components/serving/cache.py), cut to `limit` tokens and to the work budget.
        `cut_note` None: the page says how the text was cut itself."""
        choices = self.choices
        self.loaded = report_or_stop(cached_model, choices.model)
        model_facts_ui(self.loaded)
        keys = (*self.temperatures, *extra)
        within_budget(limit, len(keys))  # the note, when the budget cuts the text
        report = report_or_stop(fetch, *request_args(choices.model, self.text, keys, choices.mode, choices.window,
                                                     limit), **fetch_options)
        if report.truncated and cut_note is not None:
            st.info(cut_note.format(n=report.n_tokens))
        st.caption(captions.run_summary(report))
        note = captions.window_note(self.windows, report.window)
        if note is not None:
            st.info(note)
        if stem is not None:  # None: the page offers the downloads itself, lower down (downloads_ui)
            downloads_ui(report, stem)
        return report
