"""The engine on tiny random models of many architectures (tests/support/architectures.py), each loaded from a saved
folder as a user's model: T = 1 reproduces the model's own logits and loss, isolated statistics equal ones from
transformers' eager maps, an in-model temperature reaches the output, the maps are causal (and banded where a
sliding window applies), and models the engine cannot measure are refused with one line."""

import functools
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM

from model_utils import AnalysisError, ModelLoadError, analyze, attention_map, load_model
from model_utils.engine.probe import Probe
from model_utils.models.tiny import byte_tokenizer
from tests.support import ROOT
from tests.support.architectures import CONFIGS, build_model, layer_windows, save_model_folder
from tests.support.models import reference_copy
from tests.support.reference import assert_statistics_match_maps

NAMES = list(CONFIGS)
WINDOWED = [name for name in NAMES if any(layer_windows(CONFIGS[name]()))]
TEXT = "Attention weights come from a softmax; T > 1 flattens them."  # 59 bytes: 59 tokens, wider than any band
WINDOW = 8  # the statistics' recent window
TEMPERATURES = [0.5, 1.0, 2.0]
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def eager(architecture_model):
    """name -> (the eager reference copy of the loaded model, token ids of TEXT [1, n], its attention maps per
    layer [H, n, n] float64), computed once per module."""

    @functools.cache
    def reference(name: str):
        loaded = architecture_model(name)
        model = reference_copy(loaded, "eager")
        ids = torch.tensor(loaded.tokenizer(TEXT)["input_ids"])[None]
        with torch.inference_mode():
            maps = [m[0].double().numpy() for m in model(ids, output_attentions=True).attentions]
        return model, ids, maps

    return reference


@pytest.mark.parametrize("name", NAMES)
def test_t1_reproduces_the_models_own_logits(architecture_model, eager, name):
    loaded = architecture_model(name)
    model, ids, _ = eager(name)
    with torch.inference_mode():
        expected = model(ids).logits
        probe = Probe(view_multipliers=torch.ones(1, ids.shape[1]), window=WINDOW, q_start=WINDOW)
        got = loaded.model(ids, attention_probe=probe).logits
    assert (got - expected).abs().max().item() <= 1e-5
    assert len(probe.sums) == loaded.n_layers  # the probe really ran in every layer


@pytest.mark.parametrize("name", NAMES)
def test_isolated_statistics_equal_ones_recomputed_from_output_attentions(architecture_model, eager, name):
    loaded = architecture_model(name)
    _, _, maps = eager(name)
    windows = layer_windows(loaded.config)
    report = analyze(loaded, TEXT, temperatures=TEMPERATURES, mode="isolated", window=WINDOW)
    assert_statistics_match_maps(report, maps, windows, TEMPERATURES, WINDOW)


@pytest.mark.parametrize("name", NAMES)
def test_t1_loss_is_the_models_own_and_in_model_t2_changes_it(architecture_model, eager, name):
    loaded = architecture_model(name)
    model, ids, _ = eager(name)
    with torch.inference_mode():
        own_loss = model(ids, labels=ids).loss.item()
    report = analyze(loaded, TEXT, temperatures=[1.0, 2.0], mode="in-model", window=WINDOW)
    at_one, at_two = (result.loss for result in report.results)
    assert at_one == pytest.approx(own_loss, abs=1e-5)
    assert abs(at_two - at_one) > 1e-4  # T = 2 really ran inside the model


@pytest.mark.parametrize("name", NAMES)
def test_kept_maps_are_causal_banded_normalised_and_the_models_own_at_t1(architecture_model, eager, name):
    loaded = architecture_model(name)
    _, _, maps = eager(name)
    report = analyze(loaded, TEXT, temperatures=TEMPERATURES, window=WINDOW, keep_maps="all")
    n = report.n_tokens
    distance = np.arange(n)[:, None] - np.arange(n)[None, :]  # [query, key]: how far back the key is
    for layer, sliding_window in enumerate(layer_windows(loaded.config)):
        for view in range(len(TEMPERATURES)):
            for head in [*range(loaded.n_heads), None]:
                weights = attention_map(report, layer, view, head=head)
                where = f"layer {layer} view {view} head {head}"
                assert weights.shape == (n, n)
                assert np.all(weights[distance < 0] == 0.0), f"{where}: a query sees a later key"
                if sliding_window is not None:
                    assert np.all(weights[distance >= sliding_window] == 0.0), (
                        f"{where}: a query sees a key outside its window of {sliding_window}")
                assert np.allclose(weights.sum(axis=1), 1.0, atol=1e-5), where
        at_one = np.stack([attention_map(report, layer, TEMPERATURES.index(1.0), head=head)
                           for head in range(loaded.n_heads)])
        assert np.allclose(at_one, maps[layer], atol=1e-5), f"layer {layer}: T = 1 maps differ from the model's"


@pytest.mark.parametrize("name", WINDOWED)
def test_the_sliding_window_really_bands_the_model(name):
    """The premise of the banded checks, on transformers alone (no engine): the model's own maps reach exactly as
    far back as layer_windows says, so each band is narrower than the text and the other layers see it all."""
    model = build_model(name)
    ids = torch.tensor(byte_tokenizer()(TEXT)["input_ids"])[None]
    n = ids.shape[1]
    with torch.inference_mode():
        maps = [m[0].numpy() for m in model(ids, output_attentions=True).attentions]  # per layer [H, n, n]
    distance = np.arange(n)[:, None] - np.arange(n)[None, :]
    for layer, sliding_window in enumerate(layer_windows(model.config)):
        reach = distance[maps[layer].max(axis=0) > 0].max()  # the farthest key back any head of the layer sees
        assert reach == (n - 1 if sliding_window is None else sliding_window - 1), f"layer {layer}"


def run_command_line(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "model_utils", "analyze", "--model",
                           str(folder), "--text", TEXT, "--json", "-"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_the_command_line_analyses_a_gemma3_folder(architecture_folder):
    process = run_command_line(architecture_folder("gemma3_text"))
    assert process.returncode == 0, process.stderr[-3000:]
    document = json.loads(process.stdout)
    assert document["n_tokens"] == len(TEXT.encode()) and len(document["results"]) == 3


def test_the_command_line_analyses_a_gemma2_folder(architecture_folder):
    process = run_command_line(architecture_folder("gemma2"))
    assert process.returncode == 0, process.stderr[-3000:]
    assert json.loads(process.stdout)["n_tokens"] == len(TEXT.encode())


def test_a_bidirectional_gemma3_is_refused_in_one_line(tmp_path):
    config = CONFIGS["gemma3_text"]()
    config.use_bidirectional_attention = True
    AutoModelForCausalLM.from_config(config).save_pretrained(tmp_path)
    byte_tokenizer().save_pretrained(tmp_path)
    with pytest.raises(ModelLoadError, match=r"\(gemma3_text\) attends in both directions"):
        load_model(str(tmp_path))
    process = run_command_line(tmp_path)
    assert process.returncode == 2 and "attends in both directions" in process.stderr
    assert len(process.stderr.strip().splitlines()) == 1 and process.stdout == ""


def test_a_model_whose_layer_bypasses_the_attention_interface_is_refused(tmp_path, monkeypatch):
    """A layer that computes attention itself would escape the temperature: the load-time self-check counts the
    layers the probe saw and refuses the model before any text is run."""
    save_model_folder("llama", tmp_path)
    from transformers.models.llama import modeling_llama

    real = modeling_llama.LlamaAttention.forward

    def private_attention(self, *args, **kwargs):  # layer 1 runs its own eager attention, bypassing the interface
        if self.layer_idx != 1:
            return real(self, *args, **kwargs)
        kwargs.pop("attention_probe", None)
        with monkeypatch.context() as patch:
            patch.setattr(self.config, "_attn_implementation", "eager")
            return real(self, *args, **kwargs)

    monkeypatch.setattr(modeling_llama.LlamaAttention, "forward", private_attention)
    with pytest.raises(ModelLoadError, match=r"\(llama\) sends 2 of its 3 layers' attention through"):
        load_model(str(tmp_path))


def test_a_learned_position_table_cannot_be_run_past(architecture_model):
    """GPT-2 learned one embedding per position up to n_positions: beyond_trained cannot extend it."""
    loaded = architecture_model("gpt2")
    text = "x" * (loaded.max_positions + 10)
    with pytest.raises(AnalysisError, match="learned its positions as a table"):
        analyze(loaded, text, temperatures=[1.0], max_tokens=len(text), beyond_trained=True)


@pytest.mark.parametrize("name", NAMES)
def test_the_model_facts_name_its_windows_and_positions(architecture_model, name):
    loaded = architecture_model(name)
    assert loaded.sliding_windows() == layer_windows(loaded.config)
    facts = loaded.facts()
    assert facts["architecture"] == loaded.config.model_type and facts["layers"] == 3
    windows = [window for window in layer_windows(loaded.config) if window]
    if windows:
        assert facts["sliding window"] == f"{windows[0]} keys in {len(windows)} of 3 layers"
    else:
        assert "sliding window" not in facts
    assert (facts["positions"] == "learned table") == (name == "gpt2")


def test_an_analysis_builds_no_attention_mask(architecture_model, monkeypatch):
    """The kernel and the torch path apply causality and the window themselves, so an analysis asks transformers for
    no mask (a sliding window's is [n, n]: 2.3 GB at 49,152 tokens); the model's own forward still gets its masks."""
    from model_utils.engine import plugin

    loaded = architecture_model("gemma3_text")  # loaded first: the load's self-check runs the model's own forward
    built = []
    real = plugin.sdpa_mask
    monkeypatch.setattr(plugin, "sdpa_mask", lambda *args, **kwargs: built.append(1) or real(*args, **kwargs))
    analyze(loaded, TEXT, temperatures=[1.0, 2.0], window=WINDOW)
    assert built == []
    with torch.inference_mode():
        loaded.model(torch.tensor(loaded.tokenizer(TEXT)["input_ids"])[None])
    assert len(built) == 2  # outside an analysis: the full and the sliding-window layers' masks
