"""components/serving/serve.py's page that loads plotly early (`early_plotly`): what it serves, and that it steps aside
when Streamlit's static files are not as it expects. The browser side is in tests/browser/."""

from pathlib import Path

import pytest
from streamlit import file_util

from components.serving import serve
from components.serving.serve import PLOTLY_CHUNK, early_plotly

STREAMLIT_PAGE = ('<!DOCTYPE html><html><head><script type="module" crossorigin src="./static/js/index.abc.js">'
                  '</script></head><body><div id="root"></div></body></html>')


def fake_static(folder: Path, page: str = STREAMLIT_PAGE, chunks: tuple[str, ...] = ("PlotlyChart.x1.js",)) -> Path:
    (folder / "static" / "js").mkdir(parents=True)
    (folder / "index.html").write_text(page)
    (folder / "favicon.png").write_bytes(b"\x89PNG")
    (folder / "static" / "js" / "index.abc.js").write_text("export {}")
    for chunk in chunks:
        (folder / "static" / "js" / chunk).write_text(f"// {chunk}")
    return folder


def test_the_page_imports_plotly_once_streamlits_own_module_has_run(tmp_path):
    static, served = fake_static(tmp_path / "streamlit"), tmp_path / "served"
    served.mkdir()
    assert early_plotly(static, served)
    page = (served / "index.html").read_text()
    head, body = page.split("</head>")
    assert body == "<body><div id=\"root\"></div></body></html>"  # the rest of the page as Streamlit wrote it
    assert 'import("./static/js/PlotlyChart.x1.js")' in head
    assert 'rel="modulepreload" crossorigin href="./static/js/PlotlyChart.x1.js"' in head
    # module scripts run in the order of the page: Streamlit's own first, so its app starts as it did
    assert head.index("index.abc.js") < head.index('import("./static/js/PlotlyChart.x1.js")')
    # every other file is Streamlit's own, found under the same path
    assert (served / "static" / "js" / "PlotlyChart.x1.js").read_text() == "// PlotlyChart.x1.js"
    assert (served / "favicon.png").read_bytes() == b"\x89PNG"
    assert (static / "index.html").read_text() == STREAMLIT_PAGE  # Streamlit's own page untouched


@pytest.mark.parametrize("chunks, page", [
    ((), STREAMLIT_PAGE),  # no plotly chunk
    (("PlotlyChart.x1.js", "PlotlyChart.x2.js"), STREAMLIT_PAGE),  # which one would Streamlit load?
    (("PlotlyChart.x1.js",), "<html><body>no head</body></html>"),
])
def test_a_streamlit_laid_out_otherwise_is_served_as_it_is(tmp_path, chunks, page):
    static, served = fake_static(tmp_path / "streamlit", page, chunks), tmp_path / "served"
    served.mkdir()
    assert not early_plotly(static, served)
    assert list(served.iterdir()) == []


def test_the_pinned_streamlit_has_the_chunk_and_the_head_it_needs(tmp_path):
    """Fails on a Streamlit upgrade that renames plotly's chunk, rather than silently losing the early load."""
    static = Path(file_util.get_static_dir())
    assert len(list(static.glob(PLOTLY_CHUNK))) == 1
    assert early_plotly(static, tmp_path)
    assert (tmp_path / "static" / "js").is_dir()


@pytest.mark.parametrize("broken", ["mkdtemp", "symlink_to"])
def test_a_server_that_cannot_make_the_folder_serves_streamlits_page(monkeypatch, tmp_path, broken):
    """No writable temporary folder, or no symlinks (some Windows accounts): the server still starts, unchanged."""
    def refuse(*args, **kwargs):
        raise PermissionError(f"{broken} refused")

    monkeypatch.setattr(serve.tempfile if broken == "mkdtemp" else Path, broken, refuse)
    monkeypatch.setattr(file_util, "get_static_dir", lambda: str(fake_static(tmp_path / "streamlit")))
    streamlits = file_util.get_static_dir
    serve.serve_early_plotly()
    assert file_util.get_static_dir is streamlits


def test_the_server_points_streamlit_at_the_folder_it_made(monkeypatch, tmp_path):
    monkeypatch.setattr(file_util, "get_static_dir", lambda: str(fake_static(tmp_path / "streamlit")))
    serve.serve_early_plotly()
    served = Path(file_util.get_static_dir())
    assert served != tmp_path / "streamlit" and 'import("./static/js/PlotlyChart.x1.js")' in (
        served / "index.html").read_text()
