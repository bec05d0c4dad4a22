"""Gemma 3 270M as a user gets it (`make models`; these run under `make test-models`, marker `models`): the command
line analyses it; at T = 1 the engine gives the logits of transformers' own Gemma3ForCausalLM loaded from the same
GGUF; its statistics equal those recomputed from that model's eager attention maps on a text longer than its
512-key sliding window (the architecture matrix's check, tests/engine/test_architectures.py, on the real model)."""

import json
import subprocess

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, Gemma3ForCausalLM

from model_utils import analyze, load_model
from model_utils.core.names import GEMMA, GEMMA_PACKAGE
from model_utils.engine.probe import Probe
from model_utils.experiments.texts import builtin_text
from tests.support import ROOT
from tests.support.reference import assert_statistics_match_maps

pytestmark = pytest.mark.models
PROMPT = "The capital of France is"
WINDOW = 32  # the statistics' recent window
TEMPERATURES = [0.5, 1.0, 2.0]
LONG_TOKENS = 640  # past the 512-key sliding window, so the local layers' band shows in every statistic
# At T = 1 the engine's logits against transformers' own (eager attention, float32, the same weights dequantized from
# the same GGUF), on logits up to ~30: float32 noise through 18 layers. Measured on 6 and 74 tokens: engine - eager
# at most 2.5e-5 and 3.1e-5, as SDPA - eager (1.8e-5, 3.1e-5); each of the three against float64 2.2e-5 - 3.1e-5.
LOGIT_TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def gemma():
    return load_model(GEMMA)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """transformers' own Gemma3ForCausalLM (eager attention) and tokenizer, read from the GGUF the package assembles
    into a temporary folder, removed once read."""
    package = __import__(GEMMA_PACKAGE)
    folder = tmp_path_factory.mktemp("gemma-gguf")
    gguf = package.assemble(folder / package.MODEL_NAME)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), gguf_file=gguf.name)
    model = Gemma3ForCausalLM.from_pretrained(str(folder), gguf_file=gguf.name, dtype=torch.float32,
                                              attn_implementation="eager")
    gguf.unlink()
    return model.eval().requires_grad_(False), tokenizer


def long_text(gemma) -> str:
    """The start of the built-in long text, LONG_TOKENS tokens of Gemma's tokenizer (bos included)."""
    text = builtin_text("long")
    ids = gemma.tokenizer(text[:20_000])["input_ids"][:LONG_TOKENS]
    return gemma.tokenizer.decode(ids[1:])  # without bos: the tokenizer adds it again


def test_the_command_line_analyses_it():
    process = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "model_utils", "analyze", "--model",
                              GEMMA, "--text", PROMPT, "--json", "-"], cwd=ROOT, capture_output=True, text=True,
                             timeout=600)
    assert process.returncode == 0, process.stderr[-3000:]
    document = json.loads(process.stdout)
    assert document["model"] == GEMMA and document["tokens"] == ["<bos>", "The", " capital", " of", " France", " is"]
    assert [result["temperature"] for result in document["results"]] == TEMPERATURES
    assert all(len(result["next_token"]) == 5 and np.isfinite(result["loss"]) for result in document["results"])


def test_it_is_gemma_3_270m_with_its_sliding_windows(gemma, reference):
    model, tokenizer = reference
    assert (gemma.n_layers, gemma.n_heads, gemma.text_config.num_key_value_heads) == (18, 4, 1)
    assert gemma.max_positions == 32_768 and gemma.text_config.vocab_size == 262_144
    expected = [512 if kind == "sliding_attention" else None for kind in model.config.layer_types]
    assert gemma.sliding_windows() == expected and expected.count(None) == 3
    text = long_text(gemma) + " Ünïcödé, 東京, emoji 🙂."
    assert gemma.tokenizer(text)["input_ids"] == tokenizer(text)["input_ids"]  # the cached tokenizer is the GGUF's


def test_t1_gives_the_logits_of_transformers_own_model(gemma, reference):
    model, _ = reference
    ids = torch.tensor(gemma.tokenizer(PROMPT)["input_ids"])[None]
    with torch.inference_mode():
        expected = model(ids).logits  # [1, n, vocab]
        probe = Probe(view_multipliers=torch.ones(1, ids.shape[1]), window=1, q_start=1)
        got = gemma.model(ids, attention_probe=probe).logits
    assert len(probe.sums) == 18  # the probe ran in every layer
    assert (got - expected).abs().max().item() <= LOGIT_TOLERANCE
    report = analyze(gemma, PROMPT, temperatures=[1.0])  # the first step: the next token after the prompt
    probabilities = torch.softmax(expected[0, -1].double(), dim=-1)
    top = probabilities.topk(5)
    assert [entry["token"] for entry in report.results[0].next_token] == [
        gemma.tokenizer.decode([int(index)]) for index in top.indices]
    assert [entry["prob"] for entry in report.results[0].next_token] == pytest.approx(top.values.tolist(), abs=1e-4)


def test_statistics_equal_those_from_its_eager_maps_past_the_window(gemma, reference):
    model, _ = reference
    text = long_text(gemma)
    ids = torch.tensor(gemma.tokenizer(text)["input_ids"])[None]
    assert ids.shape[1] > 512
    with torch.inference_mode():
        output = model(ids, labels=ids, output_attentions=True)
    maps = [layer[0].double().numpy() for layer in output.attentions]  # per layer [H, n, n]
    windows = gemma.sliding_windows()
    distance = np.arange(ids.shape[1])[:, None] - np.arange(ids.shape[1])[None, :]
    for layer, window in enumerate(windows):  # the premise: the eager maps are banded exactly where the engine says
        reach = distance[maps[layer].max(axis=0) > 0].max()
        assert reach == (ids.shape[1] - 1 if window is None else window - 1), f"layer {layer}"
    report = analyze(gemma, text, temperatures=TEMPERATURES, mode="isolated", window=WINDOW, max_tokens=LONG_TOKENS)
    assert report.n_tokens == ids.shape[1]
    assert report.results[TEMPERATURES.index(1.0)].loss == pytest.approx(output.loss.item(), abs=1e-4)
    assert_statistics_match_maps(report, maps, windows, TEMPERATURES, WINDOW)
