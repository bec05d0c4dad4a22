"""Shared fixtures: the tiny random model (fast, built in code) and the bundled model (slow: converted once)."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from model_utils import load_model
from model_utils.core.records.sweep import SweepDocument
from tests.support.architectures import save_model_folder

# Deterministic examples: CI must not turn red on a new random draw; the space is still searched widely.
settings.register_profile("explorer", derandomize=True, deadline=None, max_examples=200,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.load_profile("explorer")


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models gain nothing from intra-op threads, and on a busy 2-core machine torch's threads waiting for each
    other made a module of them 8 times slower (18 s instead of 2 s). Restored after the module. A module asks for it
    with `pytestmark = pytest.mark.usefixtures("one_torch_thread")`."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny():
    return load_model("tiny-random")


@pytest.fixture(scope="session")
def sweep_folder(tmp_path_factory) -> Path:
    """Where the tiny model's sweeps are written, with one pass cache for all of them."""
    return tmp_path_factory.mktemp("sweep")


def write_tiny_sweep(folder: Path, name: str, *recipes: str) -> Path:
    """A context-length sweep of the tiny model in the committed sweep's format, written by the command line:
    2,048 tokens of the built-in text (twice its trained length of 1,024), buckets of 256, three temperatures and
    the five schedules anchored at the trained length, then `recipes` (--rope arguments)."""
    from model_utils.__main__ import main

    path = folder / name
    status = main(["sweep", "--model", "tiny-random", "--builtin", "long", "--max-tokens", "2048", "--beyond-trained",
                   "--bucket-size", "256", "--temperatures", "0.8", "1", "1.25", "--schedule", "all:trained",
                   *(part for recipe in recipes for part in ("--rope", recipe)),
                   "--json", str(path), "--cache-dir", str(folder / "passes"),
                   "--cut-context-dir", str(folder / "cut-context")])
    assert status == 0 and path.is_file()
    return path


@pytest.fixture(scope="session")
def tiny_sweep_file(sweep_folder) -> Path:
    """The tiny model's sweep on its own positions (write_tiny_sweep), written once per session."""
    return write_tiny_sweep(sweep_folder, "tiny-2k.json")


@pytest.fixture(scope="session")
def tiny_recipe_sweep_file(sweep_folder, tiny_sweep_file) -> Path:
    """The same sweep with RoPE recipes on top (its plain passes come from the same pass cache): YaRN at T = 1,
    YaRN's interpolation alone at T = 0.9, 1 and 1.1, and linear interpolation at T = 1, each with s = 2."""
    return write_tiny_sweep(sweep_folder, "tiny-2k-recipes.json", "yarn:2@1", "yarn-rope:2@0.9,1,1.1",
                            "linear:2@1")


@pytest.fixture(scope="session")
def tiny_remap_sweep_file(sweep_folder, tiny_sweep_file) -> Path:
    """The same sweep with a recipe of each family on top: YaRN's interpolation alone (s = 2) at T = 1, and the
    distance remappings (the torch path) Self-Extend (G = 2, W = 256) at T = 0.9 and 1 and 4 sinks + a window of
    512 at T = 1."""
    return write_tiny_sweep(sweep_folder, "tiny-2k-remaps.json", "yarn-rope:2@1", "self-extend:2,256@0.9,1",
                            "sink-window:4,512@1")


@pytest.fixture(scope="session")
def remap_document(tiny_remap_sweep_file) -> SweepDocument:
    """The sweep with remappings as its record (SweepDocument)."""
    return SweepDocument.from_dict(json.loads(tiny_remap_sweep_file.read_text()))


@pytest.fixture(scope="session")
def recipe_document(tiny_recipe_sweep_file) -> SweepDocument:
    """The recipe sweep's file as its record (SweepDocument)."""
    return SweepDocument.from_dict(json.loads(tiny_recipe_sweep_file.read_text()))


@pytest.fixture(scope="session")
def document(tiny_sweep_file) -> SweepDocument:
    """The tiny model's sweep file as its record (SweepDocument)."""
    return SweepDocument.from_dict(json.loads(tiny_sweep_file.read_text()))


@pytest.fixture(scope="session")
def summary_file(tmp_path_factory) -> Path:
    """The tuner's summary of the tiny model on the first two built-in documents of 2,048 tokens (twice its trained
    length), with three temperatures and two schedules: the format the corpus view reads, as the tuner writes it."""
    from model_utils.__main__ import main

    folder = tmp_path_factory.mktemp("tune")
    status = main(["tune", "--model", "tiny-random", "--corpus", "builtin", "--documents", "2", "--max-tokens", "2048",
                   "--beyond-trained", "--bucket-size", "256", "--temperatures", "0.8", "1", "1.25",
                   "--schedule", "yarn:trained", "--schedule", "logn:trained", "--out", str(folder / "out"),
                   "--cut-context-dir", str(folder / "cut-context")])
    assert status == 0
    return folder / "out" / "summary.json"


@pytest.fixture(scope="session")
def tiny_retrieval_file(tmp_path_factory) -> Path:
    """A retrieval probe of the tiny model in the committed probe's format, written by the command line: two built-in
    passages of 24 tokens at 48, 96 and 192 tokens back (the last past a trained length of 256 with the filler,
    allowed), T = 0.8, 1 and 1.25, the qwen-logn schedule and YaRN's interpolation alone at T = 1."""
    from model_utils.__main__ import main

    folder = tmp_path_factory.mktemp("retrieval")
    path = folder / "tiny-random.json"
    status = main(["retrieval", "--model", "tiny-random", "--trained-length", "256", "--beyond-trained",
                   "--distances", "48", "96", "192", "--passages", "essay", "source-code", "--passage-tokens", "24",
                   "--temperatures", "0.8", "1", "1.25", "--schedule", "qwen-logn:trained", "--rope", "yarn-rope:2@1",
                   "--cache-dir", str(folder / "passes"), "--json", str(path)])
    assert status == 0 and path.is_file()
    return path


@pytest.fixture
def tiny_env(monkeypatch, tiny_sweep_file, tiny_retrieval_file, tmp_path):
    """The app's environment for AppTest: the tiny model, no operator model list and no optional model installed,
    the tiny model's sweep as the context-length page's committed sweep, no corpus summary (nor another model's),
    the tiny model's probe as the retrieval page's, and the pages' own sweeps and probes kept in fresh folders."""
    from components.serving import settings

    monkeypatch.setenv("ATTN_MODEL", "tiny-random")
    monkeypatch.delenv("ATTN_MODELS", raising=False)
    monkeypatch.setattr(settings, "installed_optional_models", list)
    monkeypatch.setattr(settings, "CONTEXT_SWEEP", tiny_sweep_file)
    monkeypatch.setattr(settings, "SWEEPS_DIR", tmp_path / "no-other-sweeps")
    monkeypatch.setattr(settings, "CORPUS_SUMMARY", tmp_path / "no-summary.json")
    monkeypatch.setattr(settings, "TUNE_DIR", tmp_path / "no-other-summaries")
    monkeypatch.setattr(settings, "FIT_DIR", tmp_path / "no-fits")
    monkeypatch.setattr(settings, "SWEEP_PASSES", tmp_path / "passes")
    monkeypatch.setattr(settings, "RETRIEVAL_DEFAULT", tiny_retrieval_file)
    monkeypatch.setattr(settings, "RETRIEVAL_DIR", tiny_retrieval_file.parent)
    monkeypatch.setattr(settings, "RETRIEVAL_PASSES", tmp_path / "retrieval-passes")
    return monkeypatch


@pytest.fixture(scope="session")
def tiny_gemma_sweep_file(architecture_folder, tmp_path_factory) -> Path:
    """A second model's sweep, written by the command line: the tiny Gemma 3 (layers 0 and 2 slide over 8 keys,
    layer 1 is global) on 256 tokens past a trained length of 64 (so the global layer meets untrained distances),
    buckets of 32, T = 1 and 1.25, YaRN's interpolation alone at T = 1 and 1.1 and YaRN in full at T = 1."""
    from model_utils.__main__ import main

    folder = tmp_path_factory.mktemp("gemma-sweep")
    path = folder / "tiny-gemma3.json"
    status = main(["sweep", "--model", str(architecture_folder("gemma3_text")), "--builtin", "long", "--max-tokens",
                   "256", "--trained-length", "64", "--beyond-trained", "--bucket-size", "32", "--temperatures", "1",
                   "1.25", "--rope", "yarn-rope:2@1,1.1", "--rope", "yarn:2@1", "--json", str(path), "--cache-dir",
                   str(folder / "passes")])
    assert status == 0 and path.is_file()
    return path


@pytest.fixture(scope="session")
def other_sweeps(tiny_gemma_sweep_file, tmp_path_factory) -> Path:
    """A folder of committed sweeps of another model, as `make sweep-gemma` leaves assets/sweeps: the tiny Gemma 3's
    sweep under the name gemma3-270m (changed through its record; every number is the tiny model's)."""
    from dataclasses import replace

    from model_utils.core.names import GEMMA

    folder = tmp_path_factory.mktemp("other-sweeps")
    document = SweepDocument.from_dict(json.loads(tiny_gemma_sweep_file.read_text()))
    (folder / "gemma3-270m-test.json").write_text(json.dumps(replace(document, model=GEMMA).to_dict(),
                                                             allow_nan=False))
    return folder


@pytest.fixture(scope="session")
def bundled():
    return load_model("bundled")


@pytest.fixture(scope="session")
def architecture_folder(tmp_path_factory):
    """name -> the saved model folder of that tiny architecture (tests/support/architectures.py), written once per
    session."""
    root = tmp_path_factory.mktemp("architectures")
    folders = {}

    def folder(name: str):
        if name not in folders:
            folders[name] = save_model_folder(name, root / name)
        return folders[name]

    return folder


@pytest.fixture(scope="session")
def architecture_model(architecture_folder):
    """name -> that architecture's folder loaded by load_model, as a user's local model; loaded once per session.
    A load that fails raises again on every call, inside the test that asked."""
    models = {}

    def model(name: str):
        if name not in models:
            models[name] = load_model(str(architecture_folder(name)))
        return models[name]

    return model
