"""The opening every page that runs the model repeats, in one place: the sidebar's choices and temperatures, the
text box, the work budget, the cached report (an engine refusal becomes an error line), the truncation note, what
the numbers average, the model's facts in the sidebar, the sliding-window note, and the downloads. Also each model
page's default view, which the page opens with and the server's warm-up computes (components/warmup.py).

    page = ModelPage("maps_text", MAPS_VIEW.example, "Text")
    report = page.report(MAPS_VIEW.fetch, MAPS_VIEW.limit, "attention-maps", **MAPS_VIEW.options)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import streamlit as st

from components import captions, settings
from components.cache import TemperatureKey, cached_model, cached_report, cached_report_with_maps, computed_once
from components.controls import require_temperatures, sidebar_choices, text_ui
from components.downloads import downloads_ui
from components.text import plain
from model_utils import AnalysisError, LoadedModel, ModelLoadError, Report
from model_utils.schedules import SCHEDULES, Schedule

DEFAULT_SCHEDULE = "qwen-logn"  # the schedule the Length schedules page applies until another is chosen


def schedule_key(schedule: Schedule) -> tuple[str, float]:
    """A schedule as it travels in a cache key (components/cache.TemperatureKey)."""
    return schedule.name, schedule.resolved_parameter


@dataclass(frozen=True)
class DefaultView:
    """What a model page asks for until its visitor changes something, apart from the sidebar's defaults: the
    example text, the token limit, the cached function and its options, and entries after the temperatures."""

    title: str
    example: str
    limit: int
    fetch: Callable
    options: dict[str, object] = field(default_factory=dict)
    extra: tuple[TemperatureKey, ...] = ()


# statistics over queries 1..n-1 on the maps page: every row of the drawn map but row 0
MAPS_VIEW = DefaultView("Attention maps", "short.txt", 256, cached_report_with_maps, {"q_start": 1})
COLLAPSE_VIEW = DefaultView("Collapse inspector", "needle.txt", 2048, cached_report)
SCHEDULES_VIEW = DefaultView(
    "Length schedules", "needle.txt", 2048, cached_report,
    extra=(schedule_key(Schedule(DEFAULT_SCHEDULE, float(SCHEDULES[DEFAULT_SCHEDULE].default))),))
DEFAULT_VIEWS = (MAPS_VIEW, COLLAPSE_VIEW, SCHEDULES_VIEW)


def tokens_within_budget(limit: int, n_temperatures: int) -> int:
    """The page's `limit`, cut so that tokens x temperatures stays within the server's MAX_WORK."""
    return min(limit, max(2, settings.MAX_WORK // n_temperatures))


def request_args(model: str, text: str, keys: tuple[TemperatureKey, ...], mode: str, window: int,
                 limit: int) -> tuple:
    """The positional arguments of a cached report function (components/cache.py), as a page passes them: the
    warm-up builds its requests here too, so both reach the same cache entries."""
    return model, text, keys, mode, window, tokens_within_budget(limit, len(keys))


def report_or_stop(fetch: Callable, *args, **kwargs):
    """Run a cached engine call (once, however many ask at the same time: components/cache.computed_once); a
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

    def report(self, fetch: Callable, limit: int, stem: str, *, extra: tuple[TemperatureKey, ...] = (),
               cut_note: str = "The text was cut to its first {n:,} tokens.", **fetch_options) -> Report:
        """The report of the page's text at the sidebar's temperatures (then `extra`, e.g. a schedule), from
        `fetch` (a cached function of components/cache.py), cut to `limit` tokens and to the work budget."""
        choices = self.choices
        self.loaded = report_or_stop(cached_model, choices.model)
        model_facts_ui(self.loaded)
        keys = (*self.temperatures, *extra)
        within_budget(limit, len(keys))  # the note, when the budget cuts the text
        report = report_or_stop(fetch, *request_args(choices.model, self.text, keys, choices.mode, choices.window,
                                                     limit), **fetch_options)
        if report.truncated:
            st.info(cut_note.format(n=report.n_tokens))
        st.caption(captions.run_summary(report))
        note = captions.window_note(self.windows, report.window)
        if note is not None:
            st.info(note)
        downloads_ui(report, stem)
        return report
