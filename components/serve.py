"""Serve the app with its warm-up: `python -m components.serve [streamlit options]` is `streamlit run app.py
[options]`, and once the server is up it computes each model page's default view in the background
(components/warmup.py), so the server answers at once and the first visitor of each page finds it ready.

The warm-up has to run inside the server process, where the caches live: Streamlit runs app.py only for a visitor,
so nothing in the app itself could start it before the first visit. $ATTN_WARMUP=0 serves without it.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def _warm_up_when_serving() -> None:
    """Wait until Streamlit's runtime is up (its caches are the ones the pages use), then warm up. The heavy
    imports (torch, the model) happen here, in the background, not before the server starts."""
    from streamlit import runtime

    while not runtime.exists() or runtime.get_instance().state.name == "INITIAL":
        time.sleep(0.1)
    from components import warmup

    warmup.keep_warm()


def main() -> None:
    if os.environ.get("ATTN_WARMUP", "1").strip().lower() not in ("0", "off", "no", "false"):
        from components.admission import WARM_UP

        threading.Thread(target=_warm_up_when_serving, name=WARM_UP, daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(APP), *sys.argv[1:]]
    sys.exit(cli.main())


if __name__ == "__main__":
    main()
