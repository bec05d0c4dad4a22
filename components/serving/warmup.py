"""The server's warm-up: once the server is up, import the pages' drawing code and read the committed results the
Context length page draws, then compute each model page's default view in the background (one thread named WARM_UP,
through the visitors' admission gate), so the pages open on ready charts; then look every REFRESH_SECONDS for a view
that expired. It calls the pages' own cached functions with their arguments (serving/defaults.py), so it fills exactly
the entries the pages read. $ATTN_WARMUP=0 leaves it out."""

from __future__ import annotations

import logging
import threading
import time

from components.present.parsing import parse_temperatures
from components.serving.admission import WARM_UP
from components.serving.cache import GATE, cached_model, committed_results, computed_once
from components.serving.defaults import DEFAULT_VIEWS, DefaultView, example_text, request_args
from components.serving.settings import DEFAULT_TEMPERATURES, DEFAULT_WINDOW, available_models
from model_utils.core.limits import MODES

log = logging.getLogger(__name__)
REFRESH_SECONDS = 300  # a default view that expired (after an hour) or was evicted is back within 5 minutes


def default_request(view: DefaultView, model: str) -> tuple[tuple, dict[str, object]]:
    """(args, kwargs) of `view.fetch` as the page passes them before its visitor changes anything."""
    keys = (*parse_temperatures(DEFAULT_TEMPERATURES), *view.extra)
    return request_args(model, example_text(view.example), keys, MODES[0], DEFAULT_WINDOW, view.limit), view.options


def _ready(view: DefaultView, model: str) -> bool:
    """Compute `view` unless it is cached (then this is a cache read); False, logged, if it failed."""
    args, kwargs = default_request(view, model)
    try:
        computed_once(view.fetch, *args, **kwargs)
    except Exception:
        log.exception("warm-up: the default view of %s failed", view.title)
        return False
    return True


def read_committed_results() -> None:
    """Read the committed sweeps, corpus summaries and fits into the cache the Context length page reads (the
    bundled sweep of 24 passes is 8 MB of JSON: a second or more that its first visitor would otherwise wait)."""
    committed = committed_results()
    log.info("warm-up: %d committed sweeps, %d corpus summaries and %d fits read", len(committed.sweeps),
             len(committed.summaries), len(committed.fits))


def import_drawing() -> None:
    """Import what the pages draw with: the figure functions, with plotly's figure classes and pandas (which also
    imports pyarrow, for Streamlit's tables). Here in the background they cost the first page a visitor opens after
    the warm-up nothing; there they were most of its script run (bench/STARTUP.md)."""
    started = time.perf_counter()
    from components.present import captions  # noqa: F401  (imported for their import's sake)
    from components.present.figures import context, decomposition, maps, schedules, softmax  # noqa: F401

    log.info("warm-up: the pages' drawing code imported in %.1f s", time.perf_counter() - started)


def warm_up(model: str | None = None) -> int:
    """Import the pages' drawing code, read the committed results, load the default model and compute every model
    page's default view; returns how many views are ready. A view that fails is logged and skipped (its page will
    show the error itself)."""
    model = model or available_models()[0]
    started = time.perf_counter()
    import_drawing()
    read_committed_results()
    log.info("warm-up: loading %s, then %d default views", model, len(DEFAULT_VIEWS))
    try:
        computed_once(cached_model, model)
    except Exception:
        log.exception("warm-up: the model %s did not load; the pages will say why", model)
        return 0
    ready = 0
    for view in DEFAULT_VIEWS:
        if _ready(view, model):
            ready += 1
            log.info("warm-up: %s ready (%d of %d) after %.1f s", view.title, ready, len(DEFAULT_VIEWS),
                     time.perf_counter() - started)
    log.info("warm-up done: %d of %d default views ready in %.1f s; %d model passes so far", ready,
             len(DEFAULT_VIEWS), time.perf_counter() - started, GATE.admitted_count)
    return ready


def keep_warm(model: str | None = None, every: float = REFRESH_SECONDS) -> None:
    """`warm_up`, then every `every` seconds recompute any default view no longer cached. Runs until the server
    stops (its thread is a daemon)."""
    model = model or available_models()[0]
    if not warm_up(model):
        return
    while True:
        time.sleep(every)
        for view in DEFAULT_VIEWS:
            _ready(view, model)


def start(model: str | None = None, keep: bool = True) -> threading.Thread:
    """Run the warm-up (and, with `keep`, keep the views warm) in a daemon thread named WARM_UP: cache.py
    tells its passes apart by that name."""
    thread = threading.Thread(target=keep_warm if keep else warm_up, args=(model,), name=WARM_UP, daemon=True)
    thread.start()
    return thread
