"""The engine on the tiny random model: exactness at T = 1, in-model vs isolated, maps, threads, bad input."""

import json
import math

import numpy as np
import pytest
import torch
from transformers import AttentionInterface, AttentionMaskInterface
from transformers.masking_utils import eager_mask

from model_utils import AnalysisError, Schedule, analyze, attention_map
from model_utils.core.schedules import yarn_multiplier
from model_utils.core.softmax import MAX_TEMPERATURE, MIN_TEMPERATURE
from model_utils.core.statistics import STATISTICS
from model_utils.engine.probe import Probe
from tests.support import SAMPLE_TEXT
from tests.support.models import reference_copy
from tests.support.reference import reference_head, resoftmax

STAT_FIELDS = ("entropy", "normalized_entropy", "sink_mass", "recent_mass", "distant_mass", "top_ratio",
               "untrained_mass")


def token_ids(tiny, text=SAMPLE_TEXT) -> torch.Tensor:
    return torch.tensor(tiny.tokenizer(text)["input_ids"])[None]


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_t1_reproduces_the_models_own_logits(tiny, implementation):
    ids = token_ids(tiny)
    n = ids.shape[1]
    with torch.inference_mode():
        expected = reference_copy(tiny, implementation)(ids).logits
        probe = Probe(view_multipliers=torch.ones(1, n), window=8, q_start=8)
        got = tiny.model(ids, attention_probe=probe).logits
    assert (got - expected).abs().max().item() <= 1e-5
    assert len(probe.sums) == tiny.n_layers  # the probe really ran in every layer


def test_t1_loss_and_next_token_are_the_models_own(tiny):
    ids = token_ids(tiny)
    with torch.inference_mode():
        output = reference_copy(tiny, "sdpa")(ids, labels=ids)
    expected_probs = torch.softmax(output.logits[0, -1], dim=-1)
    report = analyze(tiny, SAMPLE_TEXT, temperatures=[0.5, 1.0])
    at_one = report.results[1]
    assert at_one.loss == pytest.approx(output.loss.item(), abs=1e-5)
    assert at_one.next_token[0]["prob"] == pytest.approx(expected_probs.max().item(), abs=1e-6)
    assert report.results[0].loss != pytest.approx(at_one.loss, abs=1e-3)  # T = 0.5 really ran


def test_greedy_positions_are_where_the_next_token_is_the_models_most_likely(tiny):
    """A random model rarely guesses the text, so the text ends in 8 tokens of its own greedy decoding."""
    from model_utils.engine.analyze import AnalysisRequest, analyze_tokens

    reference = reference_copy(tiny, "sdpa")
    with torch.inference_mode():
        ids = reference.generate(token_ids(tiny), do_sample=False, max_new_tokens=8, pad_token_id=0)
        logits = reference(ids).logits[0, :-1]
    greedy = (logits.argmax(-1) == ids[0, 1:]).numpy()
    result = analyze_tokens(tiny, ids[0].tolist(), AnalysisRequest(temperatures=[1.0], max_tokens=4096)).results[0]
    assert np.array_equal(result.position_greedy, greedy) and greedy[-8:].all() and not greedy.all()


def test_kept_maps_are_causal_and_normalised(tiny):
    report = analyze(tiny, SAMPLE_TEXT, temperatures=[0.05, 1.0, 100.0], keep_maps="all")
    n = report.n_tokens
    for layer in range(tiny.n_layers):
        for view in range(3):
            for head in [*range(tiny.n_heads), None]:
                weights = attention_map(report, layer, view, head=head)
                assert weights.shape == (n, n)
                assert np.all(np.triu(weights, 1) == 0.0), "a query must never see a later key"
                assert np.allclose(weights.sum(axis=1), 1.0, atol=1e-5)
                assert np.isfinite(weights).all()


def test_mean_of_heads_is_the_mean_of_the_head_maps(tiny):
    report = analyze(tiny, SAMPLE_TEXT, temperatures=[2.0], keep_maps=[(1, 0)])
    heads = [attention_map(report, 1, 0, head=head) for head in range(tiny.n_heads)]
    assert np.allclose(attention_map(report, 1, 0), np.mean(heads, axis=0), atol=1e-7)
    with pytest.raises(AnalysisError, match="keep_maps"):
        attention_map(report, 0, 0, head=0)


def test_last_rows_match_the_kept_maps(tiny):
    report = analyze(tiny, SAMPLE_TEXT, temperatures=[0.5, 2.0], keep_maps=[(2, 3)])
    for view, result in enumerate(report.results):
        assert np.allclose(result.last_rows[2, 3], attention_map(report, 2, view, head=3)[-1], atol=1e-6)


def output_attentions(model, ids) -> list[np.ndarray]:
    with torch.inference_mode():
        maps = model(ids, output_attentions=True).attentions
    return [m[0].double().numpy() for m in maps]  # per layer [H, n, n]


@pytest.mark.parametrize("window", [4, 16])
def test_isolated_statistics_equal_ones_recomputed_from_output_attentions(tiny, window):
    ids = token_ids(tiny)
    maps = output_attentions(reference_copy(tiny, "eager"), ids)
    temperatures = [0.5, 1.0, 2.0]
    report = analyze(tiny, SAMPLE_TEXT, temperatures=temperatures, mode="isolated", window=window)
    for result, temperature in zip(report.results, temperatures, strict=True):
        for layer, layer_maps in enumerate(maps):
            for head, head_map in enumerate(layer_maps):
                expected = reference_head(resoftmax(head_map, temperature), window)
                for name in STAT_FIELDS:
                    assert result.heads[name][layer, head] == pytest.approx(expected[name], rel=2e-4, abs=1e-5), (
                        f"T={temperature} layer {layer} head {head} {name}")


MULTIPLIER_KEY = "reference_multiplier"


def eager_with_multiplier(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """transformers-style eager attention whose logits are multiplied by kwargs[MULTIPLIER_KEY]: an independent
    implementation of in-model temperature (full maps, no chunks, no SDPA) for the engine to agree with."""
    groups = module.num_key_value_groups
    key = key.repeat_interleave(groups, dim=1)
    value = value.repeat_interleave(groups, dim=1)
    logits = torch.matmul(query, key.transpose(2, 3)) * scaling * kwargs[MULTIPLIER_KEY]
    if attention_mask is not None:
        logits = logits + attention_mask
    weights = torch.softmax(logits, dim=-1)
    return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights


AttentionInterface.register("reference_temperature", eager_with_multiplier)
AttentionMaskInterface.register("reference_temperature", eager_mask)


def test_in_model_statistics_and_loss_equal_an_independent_eager_implementation(tiny):
    window = 8
    ids = token_ids(tiny)
    model = reference_copy(tiny, "reference_temperature")
    report = analyze(tiny, SAMPLE_TEXT, temperatures=[0.5, 2.0], window=window)
    for result, temperature in zip(report.results, [0.5, 2.0], strict=True):
        with torch.inference_mode():
            output = model(ids, labels=ids, output_attentions=True, **{MULTIPLIER_KEY: 1.0 / temperature})
        assert result.loss == pytest.approx(output.loss.item(), abs=1e-5)
        for layer, layer_maps in enumerate(output.attentions):
            for head, head_map in enumerate(layer_maps[0].double().numpy()):
                expected = reference_head(head_map, window)
                for name in STAT_FIELDS:
                    assert result.heads[name][layer, head] == pytest.approx(expected[name], rel=2e-4, abs=1e-5)


def test_layer0_agrees_between_modes_and_later_layers_do_not(tiny):
    temperatures = [0.5, 1.0, 2.0]
    in_model = analyze(tiny, SAMPLE_TEXT, temperatures=temperatures, mode="in-model")
    isolated = analyze(tiny, SAMPLE_TEXT, temperatures=temperatures, mode="isolated")
    for a, b in zip(in_model.results, isolated.results, strict=True):
        for name in STATISTICS:
            assert np.allclose(a.heads[name][0], b.heads[name][0], rtol=1e-6, atol=1e-7), name
    # layer 0's temperature changes what layer 2 sees only in-model
    assert not np.allclose(in_model.results[0].heads["entropy"][2], isolated.results[0].heads["entropy"][2])
    # in isolated mode the output is the T = 1 model's, whatever T
    assert {result.loss for result in isolated.results} == {in_model.results[1].loss}


def test_batched_temperatures_equal_one_run_each(tiny):
    together = analyze(tiny, SAMPLE_TEXT, temperatures=[0.5, 2.0])
    for index, temperature in enumerate([0.5, 2.0]):
        alone = analyze(tiny, SAMPLE_TEXT, temperatures=[temperature]).results[0]
        assert together.results[index].loss == pytest.approx(alone.loss, abs=1e-6)
        for name in STATISTICS:
            assert np.allclose(together.results[index].heads[name], alone.heads[name], rtol=1e-5, atol=1e-6)


def test_temperature_only_in_chosen_layers(tiny):
    everywhere = analyze(tiny, SAMPLE_TEXT, temperatures=[1.0, 3.0])
    only_last = analyze(tiny, SAMPLE_TEXT, temperatures=[1.0, 3.0], layers=[2])
    hot, cold = only_last.results[1].heads, only_last.results[0].heads
    for layer in (0, 1):  # before the chosen layer, T = 3 changes nothing
        assert np.allclose(hot["entropy"][layer], cold["entropy"][layer], atol=1e-6)
    assert np.all(hot["entropy"][2] > cold["entropy"][2])
    assert not np.allclose(hot["entropy"][2], everywhere.results[1].heads["entropy"][2])  # inputs differ


def test_entropy_rises_with_temperature_in_isolated_mode(tiny):
    report = analyze(tiny, SAMPLE_TEXT, temperatures=[0.25, 0.5, 1.0, 2.0, 4.0], mode="isolated")
    entropies = np.stack([result.heads["entropy"] for result in report.results])  # [T, layer, head]
    assert np.all(np.diff(entropies, axis=0) >= -1e-6)
    ratios = np.stack([result.heads["top_ratio"] for result in report.results])
    assert np.all(np.diff(ratios, axis=0) <= 1e-6)  # and the top key's lead shrinks


def test_a_constant_schedule_equals_its_temperature(tiny):
    multiplier = float(yarn_multiplier(4.0))
    by_schedule = analyze(tiny, SAMPLE_TEXT, temperatures=[Schedule("yarn", 4.0)]).results[0]
    by_temperature = analyze(tiny, SAMPLE_TEXT, temperatures=[1.0 / multiplier]).results[0]
    assert by_schedule.temperature is None and by_schedule.schedule == Schedule("yarn", 4.0)
    assert by_schedule.loss == pytest.approx(by_temperature.loss, abs=1e-6)
    assert np.allclose(by_schedule.heads["entropy"], by_temperature.heads["entropy"], atol=1e-6)


def test_a_position_schedule_only_acts_past_its_length(tiny):
    report = analyze(tiny, SAMPLE_TEXT, temperatures=[1.0, Schedule("qwen-logn", 64.0)], keep_maps=[(0, 0)])
    assert np.allclose(attention_map(report, 0, 0, head=0)[:64], attention_map(report, 0, 1, head=0)[:64], atol=1e-7)
    assert not np.allclose(attention_map(report, 0, 0, head=0)[64:], attention_map(report, 0, 1, head=0)[64:])


def test_extreme_temperatures_give_finite_numbers_everywhere(tiny):
    for mode in ("in-model", "isolated"):
        report = analyze(tiny, SAMPLE_TEXT, temperatures=[MIN_TEMPERATURE, 0.05, MAX_TEMPERATURE], mode=mode,
                         keep_maps=[(1, 1)])
        json.dumps(report.to_dict(), allow_nan=False)  # raises on NaN or inf
        for view, result in enumerate(report.results):
            assert np.isfinite(result.last_rows).all() and np.isfinite(result.last_log_probs).all()
            assert np.isfinite(attention_map(report, 1, view, head=1)).all()
        sharp, soft = report.results[0].heads, report.results[2].heads
        assert np.all(sharp["normalized_entropy"] < 0.05)  # T = 0.001: one-hot rows
        assert np.all(soft["normalized_entropy"] > 0.9)  # T = 100: near uniform


def test_report_dict_has_the_documented_fields(tiny):
    document = analyze(tiny, SAMPLE_TEXT, temperatures=[0.5, 1.0], window=16).to_dict()
    assert {"model", "n_tokens", "tokens", "truncated", "mode", "window", "q_start", "seconds", "results"} <= set(
        document)
    assert document["n_tokens"] == len(document["tokens"]) and document["q_start"] == 16
    result = document["results"][0]
    assert {"temperature", "loss", "next_token", "heads"} <= set(result)
    assert len(result["next_token"]) == 5 and {"token", "prob"} == set(result["next_token"][0])
    assert len(result["heads"]) == 3 and len(result["heads"][0]) == 4
    assert set(result["heads"][0][0]) == {*STAT_FIELDS, "effective_untrained_mass"}  # on remapped distances
    masses = result["heads"][1][2]
    assert masses["sink_mass"] + masses["recent_mass"] + masses["distant_mass"] == pytest.approx(1.0, abs=1e-5)


def test_long_text_is_cut_and_flagged(tiny):
    report = analyze(tiny, "abc " * 300_000, temperatures=[1.0], max_tokens=100)  # 1.2 MB of text
    assert report.truncated and report.n_tokens == 100
    exact = analyze(tiny, "x" * 100, temperatures=[1.0], max_tokens=100)
    assert not exact.truncated and exact.n_tokens == 100
    with pytest.raises(AnalysisError, match="past the model's trained length of 1,024"):
        analyze(tiny, "y" * 5000, temperatures=[1.0], max_tokens=60_000)
    beyond = analyze(tiny, "y" * 5000, temperatures=[1.0], max_tokens=60_000, beyond_trained=True)
    assert not beyond.truncated and beyond.n_tokens == 5000 and beyond.trained_length == tiny.max_positions


def test_unicode_and_control_characters_are_just_text(tiny):
    text = "emoji 🙂🚀, CJK 注意力温度, RTL שלום مرحبا, controls \x00\x07\x1b[31m, <script>alert(1)</script>"
    report = analyze(tiny, text, temperatures=[1.0])
    assert "".join(report.tokens).encode("utf-8", "surrogatepass")  # token labels are plain strings
    assert report.n_tokens == len(text.encode("utf-8"))  # one byte per token for the byte-level tokenizer


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": ""}, "empty"),
        ({"text": " \n\t "}, "empty"),
        ({"text": "a"}, "at least two tokens"),
        ({"temperatures": [0]}, r"\[0.001, 100\]"),
        ({"temperatures": [-1]}, r"\[0.001, 100\]"),
        ({"temperatures": [math.nan]}, r"\[0.001, 100\]"),
        ({"temperatures": [math.inf]}, r"\[0.001, 100\]"),
        ({"temperatures": [1e9]}, r"\[0.001, 100\]"),
        ({"temperatures": [1e-39]}, r"\[0.001, 100\]"),  # was accepted, and 1 / T overflowed float32 to NaN
        ({"temperatures": ["abc"]}, "not a number"),
        ({"temperatures": []}, "at least one"),
        ({"temperatures": "1"}, "list of numbers"),
        ({"temperatures": [1, 1.0]}, "twice"),
        ({"temperatures": [0.1 * i for i in range(1, 10)]}, "at most 8"),
        ({"window": 0}, "window must be >= 1"),
        ({"window": -3}, "window must be >= 1"),
        ({"window": 2.5}, "whole number"),
        ({"window": True}, "whole number"),
        ({"mode": "both"}, "mode must be"),
        ({"layers": [3]}, "layer must be between 0 and 2"),
        ({"layers": [-1]}, "layer must be between 0 and 2"),
        ({"layers": []}, "layers is empty"),
        ({"keep_maps": [(0, 4)]}, "head must be between 0 and 3"),
        ({"keep_maps": [(5, 0)]}, "layer must be between 0 and 2"),
        ({"keep_maps": [0]}, r"\(layer, head\) pairs"),
        ({"max_tokens": 1}, "max_tokens must be between 2 and 65536"),
        ({"loss_span": (6, 5)}, "loss_span must not end before it starts"),
        ({"loss_span": (-1, 5)}, "loss_span start must be"),
        ({"loss_span": (5, 100_000)}, "loss_span must end by position"),
    ],
)
def test_bad_requests_get_a_clear_error(tiny, kwargs, message):
    arguments = {"text": SAMPLE_TEXT, "temperatures": [1.0]} | kwargs
    with pytest.raises(AnalysisError, match=message):
        analyze(tiny, **arguments)


def test_progress_is_one_event_per_layer_of_each_pass_as_data(tiny):
    """Two passes (the model's own positions, then a recipe): each reports its layers 1..L as numbers, the fraction
    covering both passes and rising to 1; only the detail, a reader's text, names the recipe."""
    from model_utils.core.progress import LAYER
    from model_utils.core.rope import Rope
    from model_utils.core.views import View

    events = []
    analyze(tiny, SAMPLE_TEXT, temperatures=[1.0, 2.0, View(1.0, Rope("yarn", 2))], progress=events.append)
    layers = tiny.n_layers
    assert {event.stage for event in events} == {LAYER}
    assert [(event.part, event.parts, event.step, event.steps) for event in events] == [
        (part, 2, step, layers) for part in (1, 2) for step in range(1, layers + 1)]
    fractions = [event.fraction for event in events]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and fractions[layers - 1] == 0.5
    assert all(event.seconds_left is not None and event.seconds_left >= 0 for event in events)
    assert "2 temperature(s) at once" in events[0].detail and "yarn" in events[-1].detail


def test_the_loss_is_the_same_in_chunks_of_any_size(tiny, monkeypatch):
    """The lm_head runs a chunk of positions at a time (a 262k vocabulary would not fit at once); chunks of one
    position and of every position give the same NLL, and the chunk shrinks as rows x vocabulary grow."""
    from model_utils.engine import analyze as analysis

    assert analysis.loss_chunk(4, 262_144) == 64 and analysis.loss_chunk(1, 49_152) == 1365
    assert analysis.loss_chunk(64, 1 << 30) == 1
    vocab = tiny.config.vocab_size
    reports = []
    for elements in (2 * vocab, 1 << 30):  # one position per chunk of the 2 rows, then all at once
        monkeypatch.setattr(analysis, "LOSS_CHUNK_ELEMENTS", elements)
        reports.append(analyze(tiny, SAMPLE_TEXT, temperatures=[1.0, 2.0], window=8))
    for one, whole in zip(reports[0].results, reports[1].results, strict=True):
        assert np.allclose(one.position_nll, whole.position_nll, rtol=0, atol=1e-6) and len(one.position_nll) > 100
        assert np.array_equal(one.position_greedy, whole.position_greedy)


def test_a_loss_span_scores_only_its_positions_with_the_same_numbers(tiny):
    """The retrieval probe asks for the loss on its repeat only: those positions' NLL and greedy flags equal the
    whole pass's, every other position is NaN (not scored, not a made-up number), and the loss is their mean."""
    whole = analyze(tiny, SAMPLE_TEXT, temperatures=[1.0, 2.0], window=8, bucket_size=32)
    span = (40, 90)
    part = analyze(tiny, SAMPLE_TEXT, temperatures=[1.0, 2.0], window=8, bucket_size=32, loss_span=span)
    for full, cut in zip(whole.results, part.results, strict=True):
        inside = slice(*span)
        assert np.allclose(cut.position_nll[inside], full.position_nll[inside], rtol=0, atol=1e-6)
        assert np.array_equal(cut.position_greedy[inside], full.position_greedy[inside])
        outside = np.r_[0 : span[0], span[1] : len(full.position_nll)]
        assert np.isnan(cut.position_nll[outside]).all() and not cut.position_greedy[outside].any()
        assert cut.loss == pytest.approx(full.position_nll[inside].mean(), abs=1e-6)
        assert np.isfinite(cut.bucket_nll).any() and np.isnan(cut.bucket_nll).any()  # buckets with none: NaN
