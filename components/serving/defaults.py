"""Each model page's default view (what it asks for until its visitor changes something) and the arguments of a
cached report request: the pages and the server's warm-up build their requests here, so both reach the same cache
entries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from components.serving import settings
from components.serving.cache import TemperatureKey, cached_report, cached_report_with_maps, collapse_view
from components.serving.settings import example_text  # noqa: F401  (the warm-up reads the views' texts here)
from model_utils.core.schedules import SCHEDULES, Schedule

DEFAULT_SCHEDULE = "qwen-logn"  # the schedule the Length schedules page applies until another is chosen
COLLAPSE_ANSWER = "Marigold"  # the expected answer of the Collapse inspector's example prompt (needle.txt)


def schedule_key(schedule: Schedule) -> tuple[str, float]:
    """A schedule as it travels in a cache key (cache.TemperatureKey)."""
    return schedule.name, schedule.resolved_parameter


@dataclass(frozen=True, kw_only=True)
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
MAPS_VIEW = DefaultView(title="Attention maps", example="short.txt", limit=256, fetch=cached_report_with_maps,
                        options={"q_start": 1})
# the collapse page's report cuts a long prompt before its question; its answer probe is readied with it
COLLAPSE_VIEW = DefaultView(title="Collapse inspector", example="needle.txt", limit=2048, fetch=collapse_view,
                            options={"answer": COLLAPSE_ANSWER})
SCHEDULES_VIEW = DefaultView(
    title="Length schedules", example="needle.txt", limit=2048, fetch=cached_report,
    extra=(schedule_key(Schedule(DEFAULT_SCHEDULE, float(SCHEDULES[DEFAULT_SCHEDULE].default))),))
DEFAULT_VIEWS = (MAPS_VIEW, COLLAPSE_VIEW, SCHEDULES_VIEW)


def tokens_within_budget(limit: int, n_temperatures: int) -> int:
    """The page's `limit`, cut so that tokens x temperatures stays within the server's MAX_WORK."""
    return min(limit, max(2, settings.MAX_WORK // n_temperatures))


def request_args(model: str, text: str, keys: tuple[TemperatureKey, ...], mode: str, window: int,
                 limit: int) -> tuple:
    """The positional arguments of a cached report function (cache.py), as a page passes them."""
    return model, text, keys, mode, window, tokens_within_budget(limit, len(keys))
