"""RoPE recipes in the engine: at T = 1 a recipe's loss and logits are those of a transformers model built with the
same rope_parameters (SDPA attention), on text longer than the trained length; the shared model is never changed;
threads with different recipes get their own results; models that cannot take a recipe are refused; and the
untrained-distance mass equals one recomputed from transformers' own attention maps."""

import copy

import numpy as np
import pytest
import torch

from model_utils import AnalysisError, analyze, attention_map
from model_utils.core.rope import Rope, parse_rope
from model_utils.core.views import View
from model_utils.engine.rope import rotary_modules
from tests.support.architectures import SIZES
from tests.support.reference import reference_head
from tests.support.threads import run_together

TRAINED = SIZES["max_position_embeddings"]  # 256 for every tiny architecture
TEXT = ("Rotary positions past the trained length: the model meets distances it never saw. " * 6)[:400]  # 400 bytes
RECIPES = [Rope("yarn", 2), Rope("yarn-rope", 2), Rope("dynamic", 2), Rope("linear", 2.5)]
ARCHITECTURES = ["llama", "qwen2", "qwen2_sliding", "mistral", "mistral_sliding", "qwen3", "phi3", "gpt_neox",
                 "olmo2", "gemma3_text"]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def reference_model(loaded, rope: Rope):
    """transformers' own model with the recipe's rope_parameters, the loaded weights and SDPA attention. Where each
    layer type has its RoPE (Gemma 3), the recipe goes to the full-attention layers."""
    config = copy.deepcopy(loaded.config)
    own = config.rope_parameters
    if "full_attention" in own and isinstance(own["full_attention"], dict):
        config.rope_parameters = {**own, "full_attention": rope.parameters(own["full_attention"], TRAINED)}
    else:
        config.rope_parameters = rope.parameters(own, TRAINED)
    if rope.rope_type == "dynamic":
        config.max_position_embeddings = TRAINED
    model = type(loaded.model)(config)
    model.load_state_dict(loaded.model.state_dict())
    model.set_attn_implementation("sdpa")
    return model.eval()


@pytest.mark.parametrize("name", ARCHITECTURES)
@pytest.mark.parametrize("rope", RECIPES, ids=lambda rope: rope.label)
def test_a_recipe_at_t1_is_transformers_own_model_with_those_rope_parameters(architecture_model, name, rope):
    loaded = architecture_model(name)
    report = analyze(loaded, TEXT, temperatures=[1.0], rope=rope, max_tokens=len(TEXT), beyond_trained=True,
                     window=8)
    assert report.n_tokens == len(TEXT) > TRAINED
    result = report.results[0]
    ids = torch.tensor([report.token_ids])
    with torch.inference_mode():
        expected = reference_model(loaded, rope)(ids, labels=ids)
    position_nll = torch.nn.functional.cross_entropy(expected.logits[0, :-1].double(), ids[0, 1:], reduction="none")
    assert result.loss == pytest.approx(expected.loss.item(), abs=2e-5)
    np.testing.assert_allclose(result.position_nll, position_nll.numpy(), atol=2e-4)
    np.testing.assert_allclose(result.last_log_probs, torch.log_softmax(expected.logits[0, -1].double(), -1),
                               atol=2e-4)
    plain = analyze(loaded, TEXT, temperatures=[1.0], max_tokens=len(TEXT), beyond_trained=True, window=8)
    assert abs(plain.results[0].loss - result.loss) > 1e-4  # the recipe really changed the positions


def test_the_result_names_the_recipe_as_applied(architecture_model):
    loaded = architecture_model("llama")
    report = analyze(loaded, TEXT, temperatures=[1.0, 1.25, View(1.0, Rope("yarn", 2))], rope=Rope("yarn-rope", 2),
                     max_tokens=len(TEXT), beyond_trained=True)
    assert report.labels == ["yarn-rope (s=2) + T=1", "yarn-rope (s=2) + T=1.25", "yarn (s=2) + T=1"]
    assert report.results[0].applied_rope == {"recipe": "yarn-rope", "rope_type": "yarn", "factor": 2.0,
                                              "attention_factor": 1.0}
    assert report.results[0].view == View(1.0, Rope("yarn-rope", 2))
    assert report.results[2].applied_rope["attention_factor"] == pytest.approx(0.1 * np.log(2) + 1)
    document = report.to_dict()["results"]
    assert [entry["rope"]["recipe"] for entry in document] == ["yarn-rope", "yarn-rope", "yarn"]
    assert report.results[1].temperature == 1.25 and report.results[1].schedule is None
    # the two passes' views keep their own maps: view 2's queries are those of its own pass
    kept = analyze(loaded, TEXT, temperatures=[1.0, View(1.0, Rope("linear", 2))], max_tokens=300,
                   beyond_trained=True, keep_maps=[(1, 0)])
    assert not np.allclose(attention_map(kept, 1, 0, head=0), attention_map(kept, 1, 1, head=0))


def test_yarns_own_temperature_is_the_difference_between_yarn_and_yarn_rope(architecture_model):
    """yarn = yarn-rope with q and k each times 0.1 ln s + 1: the same logits as yarn-rope at T = 1 / m."""
    loaded = architecture_model("llama")
    m = (0.1 * np.log(2) + 1) ** 2
    report = analyze(loaded, TEXT, temperatures=[View(1.0, Rope("yarn", 2)), View(1 / m, Rope("yarn-rope", 2))],
                     max_tokens=len(TEXT), beyond_trained=True)
    yarn, rope_at_m = report.results
    assert yarn.loss == pytest.approx(rope_at_m.loss, abs=1e-5)
    np.testing.assert_allclose(yarn.heads["entropy"], rope_at_m.heads["entropy"], atol=1e-4)


def test_isolated_mode_runs_a_row_per_recipe(architecture_model):
    loaded = architecture_model("llama")
    views = [1.0, 2.0, View(1.0, Rope("yarn", 2)), View(2.0, Rope("yarn", 2))]
    isolated = analyze(loaded, TEXT, temperatures=views, mode="isolated", max_tokens=len(TEXT), beyond_trained=True,
                       keep_maps=[(2, 1)])
    in_model = analyze(loaded, TEXT, temperatures=views, max_tokens=len(TEXT), beyond_trained=True)
    # isolated: the loss is that of T = 1 on each recipe; layer 0 sees the same inputs in both modes
    assert isolated.results[1].loss == pytest.approx(in_model.results[0].loss, abs=1e-6)
    assert isolated.results[3].loss == pytest.approx(in_model.results[2].loss, abs=1e-6)
    for view in range(4):
        np.testing.assert_allclose(isolated.results[view].heads["entropy"][0], in_model.results[view].heads[
            "entropy"][0], atol=1e-5)
    assert isolated.map_rows == [0, 0, 1, 1]


def test_the_shared_model_is_never_changed_and_no_weights_are_copied(architecture_model):
    loaded = architecture_model("llama")
    before = {name: tensor.clone() for name, tensor in loaded.model.state_dict().items()}
    buffers = {name: buffer.clone() for name, buffer in loaded.model.named_buffers()}
    config = loaded.config.to_dict()
    for rope in RECIPES:
        analyze(loaded, TEXT, temperatures=[1.0], rope=rope, max_tokens=len(TEXT), beyond_trained=True)
    assert loaded.config.to_dict() == config
    assert all(torch.equal(before[name], tensor) for name, tensor in loaded.model.state_dict().items())
    assert all(torch.equal(buffers[name], buffer) for name, buffer in loaded.model.named_buffers())
    (rotary,) = rotary_modules(loaded.model)
    assert not list(rotary.parameters())  # what a pass builds per recipe is a rotary module: frequencies only


def test_eight_threads_with_different_recipes_get_the_serial_results(architecture_model):
    loaded = architecture_model("llama")
    recipes = [None, *RECIPES, Rope("yarn", 3), Rope("linear", 2), Rope("dynamic", 4)]
    assert len(recipes) == 8

    def run(rope):
        return analyze(loaded, TEXT, temperatures=[1.0, 1.5], rope=rope, max_tokens=len(TEXT), beyond_trained=True)

    serial = [run(rope) for rope in recipes]
    threaded = run_together(run, recipes)
    for alone, together in zip(serial, threaded, strict=True):
        for a, b in zip(alone.results, together.results, strict=True):
            assert a.label == b.label and a.rope == b.rope
            np.testing.assert_array_equal(a.position_nll, b.position_nll)
            np.testing.assert_array_equal(a.heads["untrained_mass"], b.heads["untrained_mass"])
    assert len({round(report.results[0].loss, 8) for report in serial}) == len(recipes)  # all different


def test_models_that_cannot_take_a_recipe_are_refused(architecture_model):
    with pytest.raises(AnalysisError, match="learns its positions as a table"):
        analyze(architecture_model("gpt2"), TEXT[:200], temperatures=[1.0], rope=Rope("yarn", 2))


def test_a_model_whose_rope_is_already_scaled_is_refused(tmp_path):
    from transformers import LlamaConfig, LlamaForCausalLM

    from model_utils import load_model
    from model_utils.models.tiny import byte_tokenizer

    config = LlamaConfig(**SIZES, rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0})
    LlamaForCausalLM(config).save_pretrained(tmp_path)
    byte_tokenizer().save_pretrained(tmp_path)
    loaded = load_model(str(tmp_path))
    with pytest.raises(AnalysisError, match="already scales its rotary positions"):
        analyze(loaded, TEXT, temperatures=[1.0], rope=Rope("yarn", 2), beyond_trained=True)
    assert analyze(loaded, TEXT, temperatures=[1.0], beyond_trained=True).results[0].applied_rope is None


@pytest.mark.parametrize(("text", "message"), [
    ("yarn:0", "above 1"), ("yarn:1", "above 1"), ("yarn:-2", "above 1"), ("yarn:nan", "above 1"),
    ("yarn:abc", "not a number"), ("yarn", "needs a scale factor"), ("ntk:2", "unknown RoPE recipe"),
    ("yarn:5000", "at most 1024"),
])
def test_a_mistyped_recipe_names_the_fix(text, message):
    with pytest.raises(ValueError, match=message):
        parse_rope(text)


def test_the_untrained_mass_equals_one_from_transformers_own_maps(architecture_model):
    """At T = 1, in-model, the attention is the model's own: the mass on keys 1..q - L from its eager maps."""
    from tests.support.models import reference_copy

    loaded = architecture_model("llama")
    report = analyze(loaded, TEXT, temperatures=[1.0], max_tokens=len(TEXT), beyond_trained=True, window=8)
    ids = torch.tensor([report.token_ids])
    with torch.inference_mode():
        maps = [m[0].double().numpy() for m in reference_copy(loaded, "eager")(ids, output_attentions=True).attentions]
    untrained = report.results[0].heads["untrained_mass"]
    assert untrained.max() > 0.01  # queries past 256 tokens do look that far back
    for layer, layer_maps in enumerate(maps):
        for head, head_map in enumerate(layer_maps):
            expected = reference_head(head_map, 8, trained_length=TRAINED)["untrained_mass"]
            assert untrained[layer, head] == pytest.approx(expected, abs=2e-5), f"layer {layer} head {head}"


def test_the_kernel_and_the_torch_path_agree_on_a_recipe_past_the_trained_length(architecture_model, monkeypatch):
    loaded = architecture_model("qwen2_sliding")
    request = {"temperatures": [0.8, 1.0], "rope": Rope("yarn", 2), "max_tokens": len(TEXT), "beyond_trained": True,
               "bucket_size": 100}
    fused = analyze(loaded, TEXT, **request)
    monkeypatch.setenv("ATTN_KERNEL", "torch")
    plain = analyze(loaded, TEXT, **request)
    assert (fused.kernel, plain.kernel) == ("fused", "torch")
    for a, b in zip(fused.results, plain.results, strict=True):
        assert a.loss == pytest.approx(b.loss, abs=1e-5)
        for name, values in a.bucket_heads.items():
            np.testing.assert_allclose(values, b.bucket_heads[name], rtol=1e-4, atol=1e-5, err_msg=name)


def test_the_command_line_gives_transformers_own_loss_for_a_recipe(architecture_folder, architecture_model, capsys):
    import json

    from model_utils.__main__ import main

    folder = architecture_folder("llama")
    status = main(["analyze", "--model", str(folder), "--text", TEXT, "--max-tokens", "1000", "--rope", "yarn:2",
                   "--temperatures", "1", "--json", "-"])
    assert status == 0
    document = json.loads(capsys.readouterr().out)
    assert document["n_tokens"] == len(TEXT) > TRAINED and document["beyond_trained"]
    by_label = {result["label"]: result for result in document["results"]}
    assert set(by_label) == {"T=1", "yarn (s=2) + T=1"}
    assert by_label["yarn (s=2) + T=1"]["rope"]["attention_factor"] == pytest.approx(0.1 * np.log(2) + 1)
    ids = torch.tensor([architecture_model("llama").tokenizer(TEXT)["input_ids"]])
    with torch.inference_mode():
        expected = reference_model(architecture_model("llama"), Rope("yarn", 2))(ids, labels=ids).loss.item()
    assert by_label["yarn (s=2) + T=1"]["loss"] == pytest.approx(expected, abs=2e-5)
    assert by_label["T=1"]["loss"] != pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(("arguments", "message"), [
    (["--rope", "yarn:0"], "scale factor must be a number above 1"),
    (["--rope", "ntk:2"], "unknown RoPE recipe 'ntk'"),
    (["--rope", "yarn:2@0"], "temperature '0' is out of range"),
    (["--model", "gpt2", "--rope", "yarn:2"], "learns its positions as a table"),
])
def test_a_bad_recipe_on_the_command_line_is_one_line_and_exit_2(architecture_folder, capsys, arguments, message):
    from model_utils.__main__ import main

    if "gpt2" in arguments:
        arguments = [str(architecture_folder("gpt2")) if part == "gpt2" else part for part in arguments]
    status = main(["analyze", "--model", "tiny-random", "--text", TEXT[:100], *arguments])
    error = capsys.readouterr().err
    assert status == 2 and message in error and error.count("\n") == 1, error
