"""`python -m components.serving.serve [streamlit options]`: `streamlit run app.py` plus the warm-up of the model
pages' default views and a page that loads plotly early, both of which must live in the server process
($ATTN_WARMUP=0 and $ATTN_EARLY_PLOTLY=0 leave them out)."""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app.py"
PLOTLY_CHUNK = "static/js/PlotlyChart.*.js"  # Streamlit's chunk holding plotly.js, 4.7 MB in streamlit 1.67

log = logging.getLogger(__name__)


def _warm_up_when_serving() -> None:
    """Wait until Streamlit's runtime is up (its caches are the ones the pages use), then warm up. The heavy
    imports (torch, the model) happen here, in the background, not before the server starts."""
    from streamlit import runtime

    while not runtime.exists() or runtime.get_instance().state.name == "INITIAL":
        time.sleep(0.1)
    from components.serving import warmup

    warmup.keep_warm()


def early_plotly(static: Path, folder: Path) -> bool:
    """Fill the empty `folder` with Streamlit's static files, linked, and an index.html that imports plotly's chunk
    as soon as Streamlit's own modules have run; False (and `folder` left empty) when `static` has no such chunk
    or no </head>, as another Streamlit version might not.

    Streamlit imports the chunk only when the first chart reaches the browser: after the websocket opened and the
    script ran up to that chart. Running plotly's module (about 0.65 s of the page's one thread on these 2 cores)
    then lies on the path to every first page's charts. Imported from the page itself it runs before the websocket
    opens instead, and Streamlit's later import finds it loaded: the same file, so the same module. `make
    bench-pages` opens each page in new browser sessions, taking turns with a server that serves the page unchanged,
    and bench/PAGES.md gives the ratio of their times to the last chart."""
    chunks = sorted(static.glob(PLOTLY_CHUNK))
    page = (static / "index.html").read_text(encoding="utf-8")
    if len(chunks) != 1 or page.count("</head>") != 1:
        return False
    chunk = "./" + chunks[0].relative_to(static).as_posix()
    loader = (f'<link rel="modulepreload" crossorigin href="{chunk}">'
              f'<script type="module">import("{chunk}").catch(() => {{}});</script>')
    for entry in static.iterdir():
        if entry.name != "index.html":
            (folder / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    (folder / "index.html").write_text(page.replace("</head>", loader + "</head>"), encoding="utf-8")
    return True


def serve_early_plotly() -> None:
    """Point Streamlit's static file route at a folder made by `early_plotly`, removed when the server ends. Left
    as it is (with a log line) where the folder cannot be made, e.g. no writable temporary folder or no symlinks."""
    from streamlit import file_util

    try:
        folder = Path(tempfile.mkdtemp(prefix="attn-static-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        made = early_plotly(Path(file_util.get_static_dir()), folder)
    except OSError as error:
        made = False
        log.warning("serving Streamlit's page unchanged: %s", error)
    if made:
        file_util.get_static_dir = lambda: str(folder)  # read when the server builds its routes


def switched_on(variable: str) -> bool:
    """An on/off setting of the server from the environment: on unless it says 0, off, no or false."""
    return os.environ.get(variable, "1").strip().lower() not in ("0", "off", "no", "false")


def main() -> None:
    if switched_on("ATTN_EARLY_PLOTLY"):
        serve_early_plotly()
    if switched_on("ATTN_WARMUP"):
        from components.serving.admission import WARM_UP

        threading.Thread(target=_warm_up_when_serving, name=WARM_UP, daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(APP), *sys.argv[1:]]
    sys.exit(cli.main())


if __name__ == "__main__":
    main()
