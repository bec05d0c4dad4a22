"""The server's warm-up: when the server starts, compute each model page's default view in the background, so the
teacher who opens the pages in front of a class finds every chart ready.

It calls the same cached functions with the same arguments as the pages (components/model_page.DEFAULT_VIEWS and
request_args, with the sidebar's defaults), so it fills exactly the cache entries the pages read: a page can never
show numbers the warm-up computed differently. It runs in one thread named WARM_UP, one view after another, through
the same admission gate as the visitors (its passes count in their places), with no progress bar of its own: its
progress goes to the flight board, where a visitor who opens a page during the warm-up follows it
(components/cache.computed_once) and sees the charts when it ends.

Reports are kept for an hour and evicted by newer ones when many are asked for (components/cache.py), so after the
first round the warm-up looks at the default views every REFRESH_SECONDS and recomputes any that is gone; a look at
one still cached costs a cache read. Each pass it runs is a "model pass ... for warm-up" line in the server log.

`python -m components.serve` starts it with the server; $ATTN_WARMUP=0 leaves it out.
"""

from __future__ import annotations

import logging
import threading
import time

from components.admission import WARM_UP
from components.cache import GATE, cached_model, computed_once
from components.controls import example_text
from components.model_page import DEFAULT_VIEWS, DefaultView, request_args
from components.parsing import parse_temperatures
from components.settings import DEFAULT_TEMPERATURES, DEFAULT_WINDOW, available_models
from model_utils.validation import MODES

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


def warm_up(model: str | None = None) -> int:
    """Load the default model and compute every model page's default view; returns how many views are ready.
    A view that fails is logged and skipped (its page will show the error itself)."""
    model = model or available_models()[0]
    started = time.perf_counter()
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
    """Run the warm-up (and, with `keep`, keep the views warm) in a daemon thread named WARM_UP: components/cache.py
    tells its passes apart by that name."""
    thread = threading.Thread(target=keep_warm if keep else warm_up, args=(model,), name=WARM_UP, daemon=True)
    thread.start()
    return thread
