"""The engine's two paths, the fused kernel and the torch path, on every feature (the `path` fixture runs each test on
both): the tiny architectures of tests/support/architectures.py (llama; qwen2 with a sliding window; gemma2 with a
soft cap and local layers; gemma3 with local layers; grouped-query heads in all) in-model and isolated, with
temperatures, a schedule, buckets, kept maps and a text past the trained length. Each path's statistics equal ones
recomputed in float64 from the pass's own queries and keys, its T = 1 loss is the model's own, and the two paths
give the same statistics, loss and maps within AGREE. Then what runs without the kernel: no C compiler on PATH,
ATTN_KERNEL=torch on the command line, models in float16 and bfloat16."""

import copy
import functools
import json
import os
import subprocess
import sys
from dataclasses import replace
from unittest import mock

import numpy as np
import pytest
import torch

from model_utils import Schedule, analyze, attention_map
from model_utils.__main__ import main
from model_utils.core.statistics import STATISTICS, first_stat_query
from tests.support import ROOT, SAMPLE_TEXT
from tests.support.models import reference_copy
from tests.support.reference import reference_head

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # these tiny models gain nothing from two

PATHS = ("fused", "torch")
ARCHITECTURES = ("llama", "qwen2_sliding", "gemma2", "gemma3_text")
MODES = ("in-model", "isolated")
TEXT = ("Attention weights come from a softmax; T > 1 flattens them, T < 1 sharpens them. " * 4)[:300]  # 300 tokens
TEMPERATURES = (0.5, 1.0, 2.0, Schedule("qwen-logn", 64.0))
REQUEST = {"temperatures": list(TEMPERATURES), "window": 8, "bucket_size": 64, "keep_maps": "all",
           "trained_length": 128, "beyond_trained": True}  # past L = 128: the untrained mass is not 0
# The fused kernel and the torch path both compute in float32 (to ~1e-6, tests/engine/test_kernel.py); after three
# layers in-model, each layer's inputs carry the previous layers' differences too.
AGREE = {"statistic_rtol": 1e-4, "statistic_atol": 1e-5, "loss": 1e-5, "map": 1e-5}


@pytest.fixture(params=PATHS)
def path(request, monkeypatch) -> str:
    """Each test that asks for `path` runs once with the fused kernel and once on the torch path."""
    monkeypatch.setenv("ATTN_KERNEL", request.param)
    return request.param


@pytest.fixture(scope="module")
def reports(architecture_model):
    """(architecture, mode, path) -> the report of TEXT under REQUEST, computed once per module."""

    @functools.cache
    def report(name: str, mode: str, path: str):
        with mock.patch.dict(os.environ, {"ATTN_KERNEL": path}):
            return analyze(architecture_model(name), TEXT, mode=mode, **REQUEST)

    return report


def float64_maps(report, layer: int, view: int) -> np.ndarray:
    """[H, n, n] attention weights of `layer` at result `view`, in float64 from the kept queries and keys: written
    from the definitions, sharing no code with the engine."""
    inputs = report.kept[layer]
    row = report.map_rows[view]
    query, key = inputs.query[row].astype(np.float64), inputs.key[row].astype(np.float64)
    key = np.repeat(key, query.shape[0] // key.shape[0], axis=0)  # grouped-query heads
    scores = query @ key.transpose(0, 2, 1) * inputs.scaling
    if inputs.softcap:
        scores = inputs.softcap * np.tanh(scores / inputs.softcap)
    logits = scores * report.multipliers[view].astype(np.float64)[None, :, None]
    distance = np.arange(report.n_tokens)[:, None] - np.arange(report.n_tokens)[None, :]
    visible = (distance >= 0) & (distance < (inputs.sliding or report.n_tokens))
    logits = np.where(visible, logits, -np.inf)
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ARCHITECTURES)
def test_each_path_gives_the_float64_statistics_and_the_models_own_loss(reports, architecture_model, path, name,
                                                                        mode):
    report = reports(name, mode, path)
    assert report.kernel == path and report.n_tokens == len(TEXT)  # one token per byte
    assert report.q_start == first_stat_query(report.n_tokens, REQUEST["window"])
    for view, result in enumerate(report.results):
        for layer in range(report.n_layers):
            maps = float64_maps(report, layer, view)
            for head, head_map in enumerate(maps):
                expected = reference_head(head_map, REQUEST["window"], report.kept[layer].sliding,
                                          REQUEST["trained_length"])
                for statistic in STATISTICS:
                    assert result.heads[statistic][layer, head] == pytest.approx(
                        expected[statistic], rel=2e-4, abs=1e-5), f"{result.label} layer {layer} head {head}"
    loaded = architecture_model(name)
    ids = torch.tensor(report.token_ids)[None]
    with torch.inference_mode():
        own = reference_copy(loaded, "eager")(ids, labels=ids).loss.item()
    assert report.results[TEMPERATURES.index(1.0)].loss == pytest.approx(own, abs=1e-5)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ARCHITECTURES)
def test_the_two_paths_give_the_same_statistics_loss_and_maps(reports, name, mode):
    fused, plain = (reports(name, mode, path) for path in PATHS)
    assert (fused.kernel, plain.kernel) == PATHS
    tolerance = {"rtol": AGREE["statistic_rtol"], "atol": AGREE["statistic_atol"]}
    for a, b in zip(fused.results, plain.results, strict=True):
        assert a.loss == pytest.approx(b.loss, abs=AGREE["loss"])
        np.testing.assert_allclose(a.position_nll, b.position_nll, atol=AGREE["loss"] * 10)
        for statistic in STATISTICS:
            np.testing.assert_allclose(a.heads[statistic], b.heads[statistic], **tolerance, err_msg=statistic)
            np.testing.assert_allclose(a.bucket_heads[statistic], b.bucket_heads[statistic], **tolerance,
                                       err_msg=statistic)
        np.testing.assert_allclose(a.distance_profile, b.distance_profile, **tolerance)
        np.testing.assert_allclose(a.last_rows, b.last_rows, atol=AGREE["map"])
        assert [t["token"] for t in a.next_token] == [t["token"] for t in b.next_token]
    for layer in range(fused.n_layers):
        for view in range(len(TEMPERATURES)):
            for head in [*range(fused.n_heads), None]:
                np.testing.assert_allclose(attention_map(fused, layer, view, head=head),
                                           attention_map(plain, layer, view, head=head), atol=AGREE["map"])
    if mode == "in-model":  # not vacuous: the temperature really changed what later layers saw
        assert fused.results[0].loss != pytest.approx(fused.results[1].loss, abs=1e-3)


def test_without_a_c_compiler_the_engine_takes_the_torch_path_with_the_same_numbers(tmp_path, tiny, monkeypatch):
    """No cc, gcc or $CC, and a fresh cache folder, so that no library built earlier is found: the command line
    still answers, says in one line why the kernel is not used, reports "kernel": "torch" and the kernel's numbers."""
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {name: value for name, value in os.environ.items() if name != "CC"} | {
        "PATH": str(empty), "ATTN_CACHE_DIR": str(tmp_path / "cache"), "ATTN_KERNEL": "fused",
        "PYTHONPATH": str(ROOT)}
    arguments = ["analyze", "--model", "tiny-random", "--text", SAMPLE_TEXT, "--temperatures", "0.5", "1", "2",
                 "--window", "8", "--json", "-"]
    done = subprocess.run([sys.executable, "-m", "model_utils", *arguments], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        "the fused attention kernel is unavailable (no C compiler found (set $CC, or install gcc)); using the torch "
        "path"]
    without = json.loads(done.stdout)
    monkeypatch.setenv("ATTN_KERNEL", "fused")
    with_kernel = analyze(tiny, SAMPLE_TEXT, temperatures=[0.5, 1.0, 2.0], window=8).to_dict()
    assert (without["kernel"], with_kernel["kernel"]) == ("torch", "fused")
    assert_same_numbers(without, with_kernel)
    assert not list((tmp_path / "cache").rglob("*.so"))


def assert_same_numbers(a: dict, b: dict) -> None:
    """Two reports' JSON (Report.to_dict) hold the same loss and per-head statistics, within AGREE."""
    assert len(a["results"]) == len(b["results"])
    for x, y in zip(a["results"], b["results"], strict=True):
        assert x["loss"] == pytest.approx(y["loss"], abs=AGREE["loss"])
        for statistic in STATISTICS:
            np.testing.assert_allclose([[head[statistic] for head in layer] for layer in x["heads"]],
                                       [[head[statistic] for head in layer] for layer in y["heads"]],
                                       rtol=AGREE["statistic_rtol"], atol=AGREE["statistic_atol"], err_msg=statistic)


def test_attn_kernel_torch_on_the_command_line_reports_the_torch_path_and_the_same_numbers(monkeypatch, capsys):
    arguments = ["analyze", "--model", "tiny-random", "--text", SAMPLE_TEXT, "--temperatures", "0.5", "1", "2",
                 "--json", "-"]
    documents = {}
    for path in PATHS:
        monkeypatch.setenv("ATTN_KERNEL", path)
        assert main(arguments) == 0
        documents[path] = json.loads(capsys.readouterr().out)
    assert [documents[path]["kernel"] for path in PATHS] == list(PATHS)
    assert_same_numbers(documents["torch"], documents["fused"])


# How far a model in half precision may move the loss and the statistics from float32, on the tiny model (measured:
# float16 2e-4 and 2e-3, bfloat16 4e-3 and 8e-3, either path; bfloat16 keeps 8 bits of mantissa, float16 11).
HALF = {torch.float16: {"loss": 1e-3, "statistics": 5e-3}, torch.bfloat16: {"loss": 1e-2, "statistics": 2e-2}}


@pytest.mark.parametrize("dtype", list(HALF), ids=str)
def test_a_model_in_half_precision_runs_with_statistics_in_float32(tiny, path, dtype):
    half = replace(tiny, model=copy.deepcopy(tiny.model).to(dtype))
    request = {"temperatures": [0.5, 1.0, 2.0], "window": 8, "keep_maps": "all", "mode": "isolated"}
    report, full = analyze(half, SAMPLE_TEXT, **request), analyze(tiny, SAMPLE_TEXT, **request)
    assert report.kernel == path
    for a, b in zip(report.results, full.results, strict=True):
        assert a.loss == pytest.approx(b.loss, abs=HALF[dtype]["loss"])
        for statistic in ("entropy", "normalized_entropy", "sink_mass", "recent_mass", "distant_mass"):
            np.testing.assert_allclose(a.heads[statistic], b.heads[statistic], atol=HALF[dtype]["statistics"])
    # in float32 from the half-precision queries and keys, not in half precision: as close to float64 as at float32
    for view, result in enumerate(report.results):
        for head, head_map in enumerate(float64_maps(report, 0, view)):
            expected = reference_head(head_map, request["window"])
            for statistic in STATISTICS:
                assert result.heads[statistic][0, head] == pytest.approx(expected[statistic], rel=2e-4, abs=1e-5)
