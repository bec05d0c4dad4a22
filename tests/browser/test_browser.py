"""The served app in a real browser (`python -m components.serving.serve`, as `make run` starts it) driven by
Playwright in Debian's Chromium, on the bundled model unless ATTN_BROWSER_MODEL says otherwise: a page opened during
the warm-up follows it; after it no page runs the model; every page draws its charts with no exception box, within
the first screen, with margins that do not grow; a screenshot of each is saved; the token view shades every
temperature, follows another query without a model run and opens on the first screen. Without /usr/bin/chromium it
skips with a message, except under CI=true, where it must run."""

import contextlib
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from components.pages import PAGES
from components.serving.defaults import COLLAPSE_VIEW, DEFAULT_VIEWS
from components.serving.settings import CONTEXT_SWEEP, DEFAULT_TEMPERATURES, RETRIEVAL_DEFAULT
from model_utils.core.names import model_name
from tests.support import ROOT
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, SCREENS, free_port, stop, wait_until_healthy

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(os.environ.get("SCREENSHOT_DIR", ROOT / "tests" / "artifacts" / "screenshots"))
# a page drawn from a committed file rather than a model run: without the file it has nothing to draw
NEEDS_FILE = {"context": CONTEXT_SWEEP, "retrieval": RETRIEVAL_DEFAULT}
PAGE_TIMEOUT_MS = 300_000  # a cold start converts the bundled model (~30 s) before the first long prompt runs


@pytest.fixture(scope="module")
def chromium_path():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {CHROMIUM} is missing: .ci/run installs it with apt-get install chromium")
        pytest.skip(f"no browser at {CHROMIUM}: `sudo apt-get install chromium` enables the browser test")
    return CHROMIUM


SERVER_PIDS: set[int] = set()
SERVER_LOG: dict[str, Path] = {}  # "path": the log of the module's server


def server_rss_gb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / 1e9
    raise RuntimeError("no VmRSS")


@pytest.fixture(scope="module")
def app_url(chromium_path, tmp_path_factory):
    port = free_port()
    SERVER_LOG["path"] = tmp_path_factory.mktemp("streamlit") / "server.log"
    log = SERVER_LOG["path"].open("w")
    model = os.environ.get("ATTN_BROWSER_MODEL", "bundled")
    # the operator's list is this one model: an optional model installed here (`make models`) is not offered
    env = os.environ | {"ATTN_MODEL": model, "ATTN_MODELS": model}
    process = subprocess.Popen(
        [sys.executable, "-m", "components.serving.serve", "--server.port", str(port), "--server.address",
         "127.0.0.1", "--server.headless", "true", "--client.showErrorDetails", "full"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    SERVER_PIDS.add(process.pid)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process)
        yield url
        SERVER_PIDS.discard(process.pid)
    finally:
        stop(process)
        log.close()


@pytest.fixture(scope="module")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True)
        yield instance
        instance.close()


def wait_for_page(page, charts: int) -> None:
    """Until the script run ends, its title is drawn and `charts` plotly charts are (their SVG is in the DOM)."""
    page.wait_for_function(
        f"""() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {charts}
                 && document.querySelector('[data-testid="stMain"] h1')
                 && !document.querySelector('[data-testid="stStatusWidget"]')""",
        timeout=PAGE_TIMEOUT_MS, polling=500)
    page.wait_for_timeout(1500)  # let plotly finish its transitions before the screenshot


def server_log() -> str:
    return SERVER_LOG["path"].read_text()


def model_passes() -> int:
    """How many model passes the server has run (components/serving/cache.py logs one line per pass)."""
    return len(re.findall(r"model pass \d+ for", server_log()))


def wait_for_warm_up(timeout: float = PAGE_TIMEOUT_MS / 1000) -> None:
    deadline = time.monotonic() + timeout
    while "warm-up done" not in server_log():
        assert time.monotonic() < deadline, f"no warm-up within {timeout} s:\n{server_log()[-3000:]}"
        time.sleep(0.5)


def drawn_charts(page) -> int:
    """Plotly charts drawn (their SVG is in the DOM)."""
    return page.evaluate("[...document.querySelectorAll('.js-plotly-plot')].filter(p => p.querySelector("
                         "'.main-svg')).length")


# The two warm-up tests come first: the first needs the server while its warm-up still runs.
def test_a_model_page_opened_during_the_warm_up_shows_its_progress_then_its_charts(app_url, browser):
    # Open the page once the warm-up is computing this very view, so that the page has that computation to follow
    # (opened earlier, with a free slot, the page would run the view itself and the warm-up would follow it).
    previous = DEFAULT_VIEWS[DEFAULT_VIEWS.index(COLLAPSE_VIEW) - 1].title
    deadline = time.monotonic() + PAGE_TIMEOUT_MS / 1000
    while f"warm-up: {previous} ready" not in server_log() and "warm-up done" not in server_log():
        assert time.monotonic() < deadline, f"the warm-up never reached the collapse view:\n{server_log()[-3000:]}"
        time.sleep(0.2)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{app_url}/collapse", wait_until="domcontentloaded")
        page.evaluate("window.openedOnce = true")  # gone if the page reloads
        shown, warming_at_open = [], "warm-up done" not in server_log()
        deadline = time.monotonic() + PAGE_TIMEOUT_MS / 1000
        while drawn_charts(page) < 4:
            assert time.monotonic() < deadline, f"no charts; progress seen: {shown[-5:]}"
            shown += page.locator('[data-testid="stProgress"]').all_inner_texts()
            time.sleep(0.5)
        if not warming_at_open:
            pytest.skip("the warm-up had ended before the page opened (a fast model): nothing to follow")
        # its own pass or the warm-up's, queued or running: the stage, and the time left from the layers done
        assert any(re.search(r"Layer \d+ of \d+ .*about \d+ s left", text) for text in shown), shown
        assert any(text.startswith(("The server is preparing this view", "Queued: ")) for text in shown), shown
        assert page.evaluate("window.openedOnce === true"), "the page reloaded"
        assert page.locator('[data-testid="stException"]').count() == 0
        wait_for_warm_up()
        # one pass per default view, and the Collapse inspector's answer probe readied with its view
        assert model_passes() == len(DEFAULT_VIEWS) + 1, "the visitor's page and the warm-up computed a view twice"
    finally:
        context.close()


def test_after_the_warm_up_opening_each_page_runs_no_model_pass(app_url, browser):
    wait_for_warm_up()
    before = model_passes()
    for path, (_, charts) in SCREENS.items():
        if path in NEEDS_FILE and not NEEDS_FILE[path].is_file():
            charts = 0  # its committed file is not there: the page says so and draws nothing, yet must run no pass
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        try:
            page.goto(f"{app_url}/{path}", wait_until="domcontentloaded")
            page.wait_for_function(f"""() => [...document.querySelectorAll('.js-plotly-plot')]
                                                 .filter(p => p.querySelector('.main-svg')).length >= {charts}
                                             && !document.querySelector('[data-testid="stStatusWidget"]')""",
                                   timeout=PAGE_TIMEOUT_MS, polling=200)
            assert page.locator('[data-testid="stException"]').count() == 0
        finally:
            context.close()
        assert model_passes() == before, f"opening /{path} after the warm-up ran the model"


@contextlib.contextmanager
def drawn_page(app_url, browser, path: str, width: int, height: int):
    """A new browser session on page `path`, its charts drawn; skips a page whose committed file is missing."""
    if path in NEEDS_FILE and not NEEDS_FILE[path].is_file():
        pytest.skip(f"{NEEDS_FILE[path]} is not there (`make sweep` writes it; ATTN_CONTEXT_SWEEP points elsewhere)")
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(f"{app_url}/{path}", wait_until="domcontentloaded")
        wait_for_page(page, SCREENS[path][1])
        yield page
    finally:
        context.close()


@pytest.mark.parametrize("path", list(SCREENS))
def test_page_draws_its_charts_without_an_exception(app_url, browser, path):
    name, charts = SCREENS[path]
    with drawn_page(app_url, browser, path, 1600, 1000) as page:
        assert page.locator('[data-testid="stDialog"]').count() == 0, "a dialog (e.g. page not found) is open"
        # the app scrolls inside its main block, not the window: grow the window to the content for the picture
        height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
        page.set_viewport_size({"width": 1600, "height": min(12000, int(height) + 40)})
        page.wait_for_timeout(1500)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
        if path == "context":  # a README figure: the loss by position (after the decomposition, which comes first)
            loss = page.locator(".js-plotly-plot").filter(has_text="Loss by position").first
            loss.screenshot(path=str(SCREENSHOTS / f"{name}-loss.png"))
        assert page.locator('[data-testid="stException"]').count() == 0, "a Streamlit exception box is shown"
        assert page.locator('[data-testid="stAlertContentError"]').count() == 0, page.inner_text("body")[:2000]
        assert page.locator(".js-plotly-plot").count() >= charts


# each chart's margins as its figure asked for them (components/margins.fit) and as plotly drew them
DRAWN_MARGINS = """() => [...document.querySelectorAll('.js-plotly-plot')].map((g, index) => ({
    chart: index, title: g._fullLayout.title?.text || g._fullLayout.yaxis?.title?.text || '',
    asked: ['l', 'r', 'b'].map(side => g._fullLayout.margin[side]),
    drawn: ['l', 'r', 'b'].map(side => g._fullLayout._size[side])}))"""


@pytest.mark.parametrize("window", [1280, 1400, 1920])  # the window widths components/margins estimates for
@pytest.mark.parametrize("path", list(SCREENS))
def test_plotly_draws_each_chart_once_in_the_margins_its_figure_asked_for(app_url, browser, path, window):
    """components/margins: when a chart's labels, legend or colour bar need more room than its margins, plotly
    grows them after drawing it and draws it again. On every page's default view none grows."""
    name, charts = SCREENS[path]
    with drawn_page(app_url, browser, path, window, 900) as page:
        drawn = page.evaluate(DRAWN_MARGINS)
    assert len(drawn) >= charts
    grown = [chart for chart in drawn if any(d > a for d, a in zip(chart["drawn"], chart["asked"], strict=True))]
    assert not grown, f"plotly grew the margins (left, right, bottom) of {len(grown)} chart(s) on {name} in a " \
                      f"{window} px window: {grown}"


def test_a_first_visit_asks_for_plotly_before_the_app_connects(app_url, browser):
    """components/serve.early_plotly: a new browser session asks for plotly's chunk while the page loads. Streamlit
    alone asks for it only when a chart comes over the websocket, which it opens after its health check."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{app_url}/", wait_until="domcontentloaded")
        wait_for_page(page, SCREENS[""][1])
        requests = page.evaluate("performance.getEntriesByType('resource').map(r => [r.name, r.startTime])")
        plotly = [start for name, start in requests if "/static/js/PlotlyChart." in name]
        health = [start for name, start in requests if name.endswith("/_stcore/health")]
        assert len(plotly) == 1 and health, requests
        assert plotly[0] < min(health), f"plotly asked for at {plotly[0]:.0f} ms, the health check at {health} ms"
    finally:
        context.close()


def test_the_context_length_page_draws_its_committed_result_from_a_click_and_a_fresh_tab(app_url, browser):
    """The context-length page draws every chart of its committed result, with no exception, in a fresh tab and from
    a click in the app's navigation; the seconds of both are printed (make bench-pages measures them against a floor
    page: a test asserts no time)."""
    if not CONTEXT_SWEEP.is_file():
        pytest.skip(f"{CONTEXT_SWEEP} is not there (`make sweep` writes it)")
    drawn = """() => [...document.querySelectorAll('h1')].some(h => h.textContent.includes('Context length'))
                     && document.querySelectorAll('.js-plotly-plot .main-svg').length >= 4
                     && !document.querySelector('[data-testid="stStatusWidget"]')"""
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    try:
        started = time.perf_counter()
        page.goto(f"{app_url}/context", wait_until="domcontentloaded")
        page.wait_for_function(drawn, timeout=PAGE_TIMEOUT_MS, polling=50)
        fresh = time.perf_counter() - started
        page.goto(f"{app_url}/", wait_until="domcontentloaded")
        wait_for_page(page, 3)
        started = time.perf_counter()
        page.locator('[data-testid="stSidebarNav"] a', has_text="Context length").click()
        page.wait_for_function(drawn, timeout=PAGE_TIMEOUT_MS, polling=50)
        in_app = time.perf_counter() - started
        print(f"context-length page: {in_app:.2f} s from a click in the app, {fresh:.2f} s in a fresh tab")
        assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        context.close()


FIRST_SCREEN = """() => {
    const top = element => element.getBoundingClientRect().top;
    const charts = [...document.querySelectorAll('.js-plotly-plot')];
    const metrics = [...document.querySelectorAll('[data-testid="stMetric"]')];
    return {chart: top(charts[0]), metrics: metrics.map(top),
            scrolled: document.querySelector('[data-testid="stMain"]').scrollTop + window.scrollY};
}"""


def test_the_context_length_page_shows_its_answer_and_first_chart_within_the_first_screen(app_url, browser):
    """The answer first: at 1,400 x 900 the first chart (the decomposition, under its sentence) starts on the first
    screen, before any scrolling; the headline numbers follow it."""
    with drawn_page(app_url, browser, "context", 1400, 900) as page:
        # the charts can be drawn while the script still runs (its status widget shows only after a delay): on a
        # loaded machine the numbers under them may not be there yet, so wait for them before measuring
        page.locator('[data-testid="stMetric"]').first.wait_for(timeout=PAGE_TIMEOUT_MS)
        where = page.evaluate(FIRST_SCREEN)
        print(f"context-length page at 1,400 x 900: first chart at {where['chart']:.0f} px, headline numbers at "
              f"{[round(top) for top in where['metrics']]} px")
        assert where["scrolled"] == 0
        assert 0 < where["chart"] < 900, f"the first chart starts at {where['chart']:.0f} px, below the first screen"
        assert where["metrics"], "no headline numbers"
        assert all(top > where["chart"] for top in where["metrics"]), where


def test_the_retrieval_page_opens_on_its_sentence_and_the_reach_chart_within_the_first_screen(app_url, browser):
    """At 1,400 x 900 the reach chart starts on the first screen under the verdict's sentence, before any
    scrolling, and the headline reaches follow it."""
    with drawn_page(app_url, browser, "retrieval", 1400, 900) as page:
        page.locator('[data-testid="stMetric"]').first.wait_for(timeout=PAGE_TIMEOUT_MS)
        where = page.evaluate(FIRST_SCREEN)
        print(f"retrieval page at 1,400 x 900: reach chart at {where['chart']:.0f} px, headline reaches at "
              f"{[round(top) for top in where['metrics']]} px")
        assert where["scrolled"] == 0
        assert 0 < where["chart"] < 900 - 430, f"the reach chart starts at {where['chart']:.0f} px: not all on screen"
        assert where["metrics"] and all(top > where["chart"] for top in where["metrics"]), where


TOKEN_VIEW = 'div[style*="line-height: 1.9"]'  # one text of the token view (components/present/token_view.py)
SHADING = f"""() => [...document.querySelectorAll('{TOKEN_VIEW}')]
                   .map(text => [...text.querySelectorAll('span')].map(span => span.style.backgroundColor))"""


def test_user_text_is_shown_as_text_not_run_as_html(app_url, browser):
    """A link carrying a script tag as the text: it must appear literally in the labels, and never execute."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    try:
        payload = "<img src=x onerror=alert(1)><script>alert(2)</script>"
        page.goto(f"{app_url}/maps?text={urllib.request.quote(payload)}", wait_until="domcontentloaded")
        wait_for_page(page, 2)
        assert dialogs == [], f"user text ran as code: {dialogs}"
        assert page.locator("img[src=x]").count() == 0
        ticks = page.locator(".js-plotly-plot .xtick text").all_text_contents()
        assert any("<" in tick for tick in ticks), ticks  # shown literally, e.g. '<' of '<img'
        shaded = page.locator(TOKEN_VIEW).all_inner_texts()  # the token view: every token as escaped text
        assert len(shaded) == 4 and all("<script>alert(2)</script>" in text for text in shaded), shaded
        assert page.locator('[data-testid="stMain"] script').count() == 0
        assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        context.close()


def test_the_token_view_shades_every_temperature_and_follows_another_token_without_a_model_run(app_url, browser):
    wait_for_warm_up()
    with drawn_page(app_url, browser, "maps", 1400, 900) as page:
        before = model_passes()
        at_last = page.evaluate(SHADING)
        assert len(at_last) == len(DEFAULT_TEMPERATURES.split(",")), at_last
        assert len({tuple(text) for text in at_last}) == len(at_last), "every temperature shades its own way"
        assert all(len(text) == len(at_last[0]) > 6 for text in at_last)
        page.locator('[data-testid="stSelectbox"]', has_text="Query token").click()
        page.get_by_role("option", name=re.compile(r"^5: ")).click()
        started = time.perf_counter()
        page.wait_for_function(f"""() => [...document.querySelectorAll('{TOKEN_VIEW}')]
                                         .every(text => text.querySelectorAll('span').length === 6)""",
                               timeout=PAGE_TIMEOUT_MS, polling=50)
        print(f"token view redrawn for another query in {time.perf_counter() - started:.2f} s")
        at_fifth = page.evaluate(SHADING)
        assert at_fifth != [text[:6] for text in at_last], "the shading did not change with the query"
        assert model_passes() == before, "choosing another token ran the model"
        assert page.locator('[data-testid="stException"]').count() == 0


def test_the_first_screen_of_the_attention_maps_page_shows_the_token_view(app_url, browser):
    """At 1,400 x 900, before any scrolling, every temperature's shaded text is whole on the screen."""
    with drawn_page(app_url, browser, "maps", 1400, 900) as page:
        where = page.evaluate(f"""() => ({{
            texts: [...document.querySelectorAll('{TOKEN_VIEW}')].map(text => {{
                const box = text.getBoundingClientRect();
                return [box.top, box.bottom];
            }}),
            scrolled: document.querySelector('[data-testid="stMain"]').scrollTop + window.scrollY}})""")
    print(f"token view at 1,400 x 900: {[[round(edge) for edge in text] for text in where['texts']]} px")
    assert where["scrolled"] == 0 and len(where["texts"]) == len(DEFAULT_TEMPERATURES.split(","))
    assert all(0 < top < bottom <= 900 for top, bottom in where["texts"]), where


def test_the_served_app_offers_only_the_operators_models(app_url, browser):
    """A link cannot choose a model, and the only model control is a list fixed by the operator."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        # a model page: the Softmax lab runs no model and shows no model control
        page.goto(f"{app_url}/maps?model=/etc/passwd", wait_until="domcontentloaded")
        wait_for_page(page, SCREENS["maps"][1])
        sidebar = page.locator('[data-testid="stSidebar"]')
        model_box = sidebar.locator('[data-testid="stSelectbox"]')
        assert model_box.count() == 1
        model_box.click()
        options = [text.strip() for text in page.get_by_role("option").all_inner_texts()]
        # shown by the model's name (SmolLM2-135M for the bundled one), never a path
        assert options == [model_name(os.environ.get("ATTN_BROWSER_MODEL", "bundled"))], options
        page.keyboard.press("Escape")
        labels = sidebar.locator('[data-testid="stTextInput"] label').all_inner_texts()
        assert labels == ["Temperatures to compare"], labels  # no free-text model or path field anywhere
    finally:
        context.close()


def test_several_sessions_at_once_each_see_their_own_results(app_url, browser):
    """Four browser sessions ask for different temperatures at the same moment; each must get its own maps,
    no error, and the server's memory must stay bounded."""
    pid = next(iter(SERVER_PIDS))
    before = server_rss_gb(pid)
    sessions = {("0.3", "1"): None, ("0.6", "2"): None, ("0.9", "3"): None, ("1.2", "4"): None}
    contexts = []
    for temperatures in sessions:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.goto(f"{app_url}/maps?t={','.join(temperatures)}", wait_until="commit")
        contexts.append(context)
        sessions[temperatures] = page
    try:
        for temperatures, page in sessions.items():
            wait_for_page(page, 2)
            assert page.locator('[data-testid="stException"]').count() == 0
            assert page.locator('[data-testid="stAlertContentError"]').count() == 0
            titles = " ".join(page.locator(".js-plotly-plot .annotation-text").all_text_contents())
            for t in temperatures:
                assert f"T={t}" in titles, (temperatures, titles)
            others = {t for other in sessions if other != temperatures for t in other} - set(temperatures)
            assert not any(f"T={t} " in titles for t in others), (temperatures, titles)
    finally:
        for context in contexts:
            context.close()
    after = server_rss_gb(pid)
    assert after < 6.0, f"server RSS grew from {before:.2f} GB to {after:.2f} GB"


# the answer (issue 33): where the first answer sentence and the first chart are on the first screen
ANSWER_FIRST = """() => {
    const box = element => { const r = element.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; };
    const answer = [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')].find(markdown =>
        /^(The corpus|One text)/.test(markdown.innerText.trim()));
    const chart = document.querySelector('.js-plotly-plot');
    return {answer: answer ? box(answer) : null, said: answer ? answer.innerText : '', chart: box(chart),
            axis: chart._fullLayout.xaxis.title.text,
            scrolled: document.querySelector('[data-testid="stMain"]').scrollTop + window.scrollY};
}"""
DECOMPOSITION_PNG = SCREENSHOTS / "decomposition.png"  # the README's "What we found" figure (make screenshots)


def test_the_context_length_page_opens_on_the_answer_sentence_and_the_decomposition_chart(app_url, browser):
    """At 1,400 x 900, before any scrolling: the answer in one sentence (the corpus's, held out over documents, when
    one is committed), and under it the whole decomposition chart, the page's first chart. Saves the chart as the
    README's figure."""
    import json

    from components.serving.cache import committed_files
    from components.serving.settings import CORPUS_SUMMARY

    # once several models' sweeps are committed, each answer names its model (the lead is the default sweep's)
    sweeps = committed_files()[0].paths()
    models = [json.loads(path.read_text())["model"] for path in sweeps]
    of = f" of {model_name(models[0])}" if len(set(models)) > 1 else ""
    with drawn_page(app_url, browser, "context", 1400, 900) as page:
        where = page.evaluate(ANSWER_FIRST)
        print(f"context-length page at 1,400 x 900: answer at {where['answer']}, decomposition chart at "
              f"{where['chart']}")
        assert where["scrolled"] == 0
        assert where["answer"] is not None, "no answer sentence on the page"
        expected = f"The corpus{of} (held out over documents)." if CORPUS_SUMMARY.is_file() else \
            f"One text, the committed sweep{of} (cross-fit on one text)."
        assert where["said"].startswith(expected), where["said"][:200]
        assert 0 < where["answer"]["top"] < where["answer"]["bottom"] <= where["chart"]["top"], where
        assert where["axis"].startswith("loss saved (nats per token)"), where["axis"]  # the first: the decomposition
        assert where["chart"]["bottom"] <= 900, f"the decomposition chart ends at {where['chart']['bottom']:.0f} px"
        # its notes right of the bars stay inside the plot: plotly draws it in the margins it asked for
        first = page.evaluate(DRAWN_MARGINS)[0]
        assert first["drawn"] == first["asked"], first
        DECOMPOSITION_PNG.parent.mkdir(parents=True, exist_ok=True)
        page.locator(".js-plotly-plot").first.screenshot(path=str(DECOMPOSITION_PNG))
        assert page.locator('[data-testid="stException"]').count() == 0


# Each page's point, the one sentence it opens on: the guide's, or for the pages that open on a measured result, the
# words of its verdict (Context length: the lead answer; Retrieval: the reach; Collapse inspector: its prompt's
# first sentence, words.collapse_sentence, which starts the same on every prompt)
def point_of(path: str) -> str:
    import json

    from components.present import guide
    from components.present.sweep_data import summary_for
    from components.serving.cache import committed_results
    from model_utils.core.records.retrieval import RetrievalDocument
    from model_utils.verdicts import words

    if path == "context":
        committed = committed_results()
        sweeps = list(committed.sweeps.values())
        several = len({document.model for document in sweeps}) > 1
        summary = summary_for(committed.summaries, sweeps[0], several)
        return words.answer_point((summary or sweeps[0]).verdict)
    if path == "retrieval":
        document = RetrievalDocument.from_dict(json.loads(RETRIEVAL_DEFAULT.read_text()))
        return words.reach_headline(document.model, document.verdict)
    if path == "collapse":
        return "At T = 1 the last token"
    script = next(spec.script for spec in PAGES if spec.url_path == path)
    return guide.POINT[script]


# the first screen of a page: its first text after the title, and its main chart (a token view on the maps page, the
# first plotly chart elsewhere), where they are before any scrolling
OPENING = """main => {
    const box = element => { const r = element.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; };
    const texts = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stMarkdownContainer"]')]
        .filter(text => text.innerText.trim() && !text.querySelector('h1'));
    const title = document.querySelector('[data-testid="stMain"] h1');
    const chart = document.querySelector(main);
    return {title: box(title), first: texts[0].innerText, text: box(texts[0]), chart: chart ? box(chart) : null,
            height: document.querySelector('[data-testid="stMain"]').scrollHeight,
            scrolled: document.querySelector('[data-testid="stMain"]').scrollTop + window.scrollY};
}"""
MAIN_CHART = {"maps": TOKEN_VIEW}  # elsewhere the page's first plotly chart
WHOLE_CHART = ("context", "retrieval")  # pages whose first chart fits the first screen whole


@pytest.mark.parametrize("path", [path for path, (_, charts) in SCREENS.items() if charts])
def test_every_page_opens_on_its_point_then_its_main_chart_within_the_first_screen(app_url, browser, path):
    """At 1,400 x 900, before any scrolling: the page's first text after its title is its point, one sentence,
    and the top of its main chart is on the screen under it (the whole chart on the Context length and Retrieval
    pages). Saves the first screen."""
    name, _ = SCREENS[path]
    with drawn_page(app_url, browser, path, 1400, 900) as page:
        where = page.evaluate(OPENING, MAIN_CHART.get(path, ".js-plotly-plot"))
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}-first-screen.png"))
    print(f"/{path} at 1,400 x 900: point at {where['text']['top']:.0f}-{where['text']['bottom']:.0f} px, main chart "
          f"at {where['chart']['top']:.0f}-{where['chart']['bottom']:.0f} px, page {where['height']:,} px tall")
    assert where["scrolled"] == 0
    assert point_of(path) in where["first"].replace("\n", " "), where["first"][:300]
    assert where["title"]["bottom"] <= where["text"]["top"] < where["text"]["bottom"] <= where["chart"]["top"] < 900
    if path in WHOLE_CHART:
        assert where["chart"]["bottom"] <= 900, f"the first chart ends at {where['chart']['bottom']:.0f} px"


CONTEXT_HEIGHT = 2700  # px at 1,400 x 900, every expander closed: three screens


def test_the_context_length_page_fits_in_three_screens_with_every_section_folded(app_url, browser):
    """The answer, one chart, the headline numbers and the loss by position; the rest folded in expanders, none of
    them open on arrival: the main scroll container is at most three screens tall."""
    with drawn_page(app_url, browser, "context", 1400, 900) as page:
        page.locator('[data-testid="stMetric"]').first.wait_for(timeout=PAGE_TIMEOUT_MS)
        page.wait_for_timeout(1500)
        height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
        opened = page.evaluate("[...document.querySelectorAll('[data-testid=\"stExpander\"] details')]"
                               ".filter(d => d.open).length")
        folded = page.locator('[data-testid="stExpander"]').count()
    print(f"context-length page at 1,400 x 900: {height:,} px tall, {folded} sections folded")
    assert opened == 0 and folded >= 5
    assert height <= CONTEXT_HEIGHT, f"the page is {height:,} px tall at 1,400 x 900"


def test_a_link_to_a_term_opens_the_glossary_at_that_term(app_url, browser):
    """present.glossary.term_link's link, as the app serves it, opens the Glossary on that term's entry: on the first
    screen, under the title, though the term's own heading is far down the list."""
    from components.present.glossary import anchor, term_link

    link = term_link("Sliding-window layer").split("(", 1)[1].rstrip(")")
    assert anchor("Sliding-window layer") in link
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{app_url}/{link}", wait_until="domcontentloaded")
        wait_for_page(page, 0)
        shown = page.locator('[data-testid="stAlert"]').first
        shown.wait_for(timeout=PAGE_TIMEOUT_MS)
        top = shown.evaluate("element => element.getBoundingClientRect().top")
        heading = page.locator(f"#{anchor('Sliding-window layer')}")
        assert "Sliding-window layer." in shown.inner_text() and 0 <= top < 900, top
        assert heading.evaluate("element => element.getBoundingClientRect().top") > 900  # the list's entry: far down
    finally:
        context.close()


# Nothing a visitor typed is lost (a refused input, a page switch, a link to a long prompt).
LONG_PROMPT = ("The code for the vault is 4817. " + "The archive keeps its ledgers in rows of grey boxes. " * 170
               + "What is the code for the vault?")


def settle(page, charts: int) -> None:
    """After an input: let its run start, then wait until it ends and its charts are drawn."""
    page.wait_for_timeout(1200)
    wait_for_page(page, charts)


def apply_text(page, locator, text: str, charts: int) -> None:
    """Type into a text box as a visitor pastes: fill it, then Ctrl+Enter applies it."""
    locator.fill(text)
    locator.press("Control+Enter" if locator.evaluate("e => e.tagName") == "TEXTAREA" else "Enter")
    settle(page, charts)


def choose(page, label: str, option: str, tries: int = 3) -> None:
    """Pick `option` of the select box `label`; a rerun that lands while the list opens closes it, so try again."""
    for _ in range(tries):
        page.locator('[data-testid="stSelectbox"]', has_text=label).click()
        wanted = page.get_by_role("option", name=option, exact=True)
        try:
            wanted.wait_for(timeout=10_000)
        except Exception:  # playwright's TimeoutError: the list did not open
            page.keyboard.press("Escape")
            continue
        wanted.click()
        return
    raise AssertionError(f"the options of {label!r} never opened")


def temperatures_box(page):
    return page.locator('[data-testid="stSidebar"] input[aria-label="Temperatures to compare"]')


def scores_box(page):
    return page.locator('input[aria-label="Scores of the keys (before the softmax)"]')


def go_to(page, title: str, charts: int) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    settle(page, charts)


@pytest.mark.parametrize("path", ["collapse", "maps"])
def test_a_refused_temperature_then_its_fix_then_another_widget_keep_a_long_prompt(app_url, browser, path):
    charts = SCREENS[path][1]
    with drawn_page(app_url, browser, path, 1400, 900) as page:
        box = page.locator('[data-testid="stMain"] textarea').first
        if path == "collapse":  # a token limit of the visitor's own, which must survive too (and a shorter run)
            choose(page, "Token limit", "1024")
            settle(page, charts)
        apply_text(page, box, LONG_PROMPT, charts)
        apply_text(page, temperatures_box(page), "0.5, 1, abc", 0)
        assert "Temperatures:" in page.locator('[data-testid="stSidebar"] [data-testid="stAlert"]').first.inner_text()
        assert box.input_value() == LONG_PROMPT  # the refused input leaves the text and the last result
        assert drawn_charts(page) >= charts
        apply_text(page, temperatures_box(page), DEFAULT_TEMPERATURES, charts)
        if path == "collapse":  # another widget of the page: the expected answer
            apply_text(page, page.get_by_label(re.compile("^Expected answer")), "4817", charts)
            limit = page.locator('[data-testid="stSelectbox"]', has_text="Token limit")
            assert "1024" in limit.inner_html() and "limit=1024" in page.url  # still the visitor's 1,024
        else:  # another widget of the page: the log colour scale
            page.locator('[data-testid="stCheckbox"]', has_text="Log colour scale").click()
            settle(page, charts)
        assert box.input_value() == LONG_PROMPT
        assert "the text is empty" not in page.locator('[data-testid="stMain"]').inner_text()
        assert page.locator('[data-testid="stException"]').count() == 0
        link = page.url
    assert "text_id=" in link and "text=" not in link.replace("text_id=", "")
    # the link opens that very prompt in a fresh browser (another session of the server)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        fresh = context.new_page()
        fresh.goto(link, wait_until="domcontentloaded")
        wait_for_page(fresh, charts)
        assert fresh.locator('[data-testid="stMain"] textarea').first.input_value() == LONG_PROMPT
    finally:
        context.close()


def step_through(page, step, title: str, charts: int, most: int = 6) -> None:
    """Press Back (or Forward) until the page titled `title` is open."""
    for _ in range(most):
        step()
        settle(page, charts if page.locator("h1").first.inner_text() == title else 0)
        if page.locator("h1").first.inner_text() == title:
            return
    raise AssertionError(f"{title} not reached in {most} steps")


def test_a_page_switch_and_the_back_button_keep_each_pages_text_and_scores(app_url, browser):
    sentence = "The trophy did not fit in the suitcase because it was too big."
    with drawn_page(app_url, browser, "", 1400, 900) as page:
        scores = scores_box(page)
        apply_text(page, scores, "3, 2, 1, 0", SCREENS[""][1])
        go_to(page, "Attention maps", SCREENS["maps"][1])
        apply_text(page, page.locator('[data-testid="stMain"] textarea').first, sentence, SCREENS["maps"][1])
        go_to(page, "Softmax lab", SCREENS[""][1])
        assert scores_box(page).input_value() == "3, 2, 1, 0"
        go_to(page, "Attention maps", SCREENS["maps"][1])
        assert page.locator('[data-testid="stMain"] textarea').first.input_value() == sentence
        # the Back button steps through the link's changes too (each is a view): back until the lab, then forward
        step_through(page, page.go_back, "Softmax lab", SCREENS[""][1])
        assert scores_box(page).input_value() == "3, 2, 1, 0"
        step_through(page, page.go_forward, "Attention maps", SCREENS["maps"][1])
        assert page.locator('[data-testid="stMain"] textarea').first.input_value() == sentence
        assert page.locator('[data-testid="stException"]').count() == 0


def test_a_link_whose_long_text_is_no_longer_held_says_so(app_url, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{app_url}/maps?text_id=0123456789abcdef", wait_until="domcontentloaded")
        page.get_by_text("no longer held by this server").first.wait_for(timeout=PAGE_TIMEOUT_MS)
        assert page.locator('[data-testid="stMain"] textarea').first.input_value() == ""
        assert drawn_charts(page) == 0
        assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        context.close()


def test_a_lesson_step_opens_its_page_in_the_state_it_needs(app_url, browser):
    from components.present.lesson import STEPS, TROPHY

    step = next(step for step in STEPS if step.query.get("text") == TROPHY)
    with drawn_page(app_url, browser, "lesson", 1400, 900) as page:
        page.locator('[data-testid="stSidebar"] [data-testid="stCheckbox"]', has_text="Large type").click()
        settle(page, 0)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "lesson-large-type.png"))
        page.locator('[data-testid="stPageLink"]', has_text=step.label).click()
        settle(page, SCREENS["maps"][1])
        assert page.locator("h1").first.inner_text() == "Attention maps"
        assert page.locator('[data-testid="stMain"] textarea').first.input_value() == TROPHY
        assert temperatures_box(page).input_value() == "0.5, 1, 2"
        query = page.locator('[data-testid="stSelectbox"]', has_text="Query token").inner_html()
        assert "it”" in query, query  # the step's word, found among the text's tokens
        assert len(page.evaluate(SHADING)) == 3  # one shaded text per temperature of the step
        page.screenshot(path=str(SCREENSHOTS / "lesson-step-maps.png"))
        assert page.locator('[data-testid="stException"]').count() == 0
