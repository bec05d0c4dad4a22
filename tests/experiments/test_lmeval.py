"""The engine as an lm-evaluation-harness model (experiments/lmeval.py), on the tiny model: lm-eval finds it by name
and builds it from its model arguments; at T = 1 its log-likelihoods are transformers' own; a temperature and a RoPE
recipe change them; generation stops at `until` and at max_gen_toks; a bad model argument is one clear error;
RULER's niah_single_1 runs offline, sized by the model's own tokenizer from a local folder; and the command's
mistakes are one line on stderr and exit status 2."""

import json
import os

import numpy as np
import pytest
import torch
from lm_eval.api.instance import Instance
from lm_eval.api.registry import get_model

import model_utils.experiments.lmeval as bridge
from model_utils import AnalysisError
from model_utils.__main__ import main
from model_utils.core.lmeval import MODEL_NAME, wilson_interval
from model_utils.core.records.lmeval import LmEvalDocument
from model_utils.core.rope import parse_rope
from model_utils.core.schedules import Schedule
from model_utils.core.views import View
from model_utils.experiments.lmeval import ExplorerLM, RulerRequest, check_ruler, numbers_asked, run_ruler
from tests.support.models import reference_copy

pytestmark = pytest.mark.usefixtures("one_torch_thread")

CONTEXT = "The capital of France is Paris. The capital of Germany is"
CONTINUATION = " Berlin."


def request(kind: str, *arguments, doc_id: int = 0, doc: dict | None = None) -> Instance:
    return Instance(request_type=kind, doc=doc or {}, arguments=arguments, idx=0, metadata=("test", doc_id, 1))


def transformers_logprob(loaded, context_ids: list[int], continuation_ids: list[int]) -> float:
    """log P(continuation | context) from a plain transformers copy of the model (SDPA, no engine)."""
    ids = torch.tensor([context_ids + continuation_ids])
    with torch.inference_mode():
        log_probs = torch.log_softmax(reference_copy(loaded, "sdpa")(ids).logits[0].double(), -1)
    positions = range(len(context_ids) - 1, ids.shape[1] - 1)  # position p predicts token p + 1
    return float(sum(log_probs[p, ids[0, p + 1]] for p in positions))


def test_lm_eval_finds_the_explorer_by_name_and_keeps_its_own_models():
    assert get_model(MODEL_NAME) is ExplorerLM
    assert get_model("dummy").__name__ == "DummyLM"  # registering ours did not hide lm-eval's lazily listed ones


def test_the_model_arguments_as_lm_eval_passes_them_reach_the_view():
    model = get_model(MODEL_NAME).create_from_arg_string(
        "model=tiny-random,temperature=0.5,rope=yarn-rope:2,max_length=512", {"batch_size": 1})
    assert model.view == View(0.5, parse_rope("yarn-rope:2")) and model.max_length == 512
    scheduled = ExplorerLM(model=model.loaded, schedule="qwen-logn:trained", trained_length=64)
    assert scheduled.view == View(Schedule("qwen-logn", 64.0)) and scheduled.max_length == 64


def test_at_t1_the_loglikelihood_is_transformers_own_and_a_temperature_changes_it(tiny):
    plain, softened = ExplorerLM(model=tiny), ExplorerLM(model=tiny, temperature=2.0)
    context_ids = plain.tok_encode(CONTEXT)
    continuation_ids = plain.tok_encode(CONTEXT + CONTINUATION)[len(context_ids):]
    expected = transformers_logprob(tiny, context_ids, continuation_ids)
    (logprob, greedy), = plain.loglikelihood([request("loglikelihood", CONTEXT, CONTINUATION)])
    (at_two, _), = softened.loglikelihood([request("loglikelihood", CONTEXT, CONTINUATION)])
    assert logprob == pytest.approx(expected, abs=1e-4) and greedy is False  # a random model does not guess it
    assert abs(at_two - logprob) > 0.05


def test_a_continuation_of_the_models_own_greedy_tokens_is_greedy(tiny):
    """On token ids: the random model's bytes need not be text that encodes back to the same tokens."""
    from model_utils.engine.generate import greedy_tokens

    model = ExplorerLM(model=tiny)
    context_ids = model.tok_encode(CONTEXT)
    _, (written,) = greedy_tokens(tiny, context_ids, [View(1.0)], 3)
    (_, greedy), (_, changed) = model._loglikelihood_tokens([
        ((CONTEXT, "written"), context_ids, written), ((CONTEXT, "one changed"), context_ids, [*written[:2], 0])])
    assert greedy is True and changed is False


def test_a_recipe_reaches_the_engine_past_a_small_trained_length(tiny):
    text = "word " * 60  # 300 tokens of the byte tokenizer, past a trained length of 64
    plain = ExplorerLM(model=tiny, trained_length=64, max_length=512)  # max_length past it: asked for
    recipe = ExplorerLM(model=tiny, trained_length=64, max_length=512, rope="yarn-rope:2")
    (without, _), = plain.loglikelihood([request("loglikelihood", text, " end")])
    (with_recipe, _), = recipe.loglikelihood([request("loglikelihood", text, " end")])
    assert abs(with_recipe - without) > 0.01


def test_rolling_is_transformers_own_in_one_window_and_scores_each_token_once_in_many(tiny, monkeypatch):
    text = "A short text to score, token by token."
    model = ExplorerLM(model=tiny)
    ids = model.tok_encode(text, add_special_tokens=False)
    total, = model.loglikelihood_rolling([request("loglikelihood_rolling", text)])
    assert total == pytest.approx(transformers_logprob(tiny, [model.prefix_token_id], ids), abs=1e-4)
    windowed = ExplorerLM(model=tiny, max_length=16)
    scored = []
    score_windows = windowed._loglikelihood_tokens

    def counting(requests, **kwargs):
        scored.extend((len(context), len(continuation)) for _, context, continuation in requests)
        return score_windows(requests, **kwargs)

    monkeypatch.setattr(windowed, "_loglikelihood_tokens", counting)
    in_windows, = windowed.loglikelihood_rolling([request("loglikelihood_rolling", text)])
    assert sum(count for _, count in scored) == len(ids) and len(scored) > 2
    assert all(context + count <= 16 for context, count in scored) and np.isfinite(in_windows)


def test_generation_stops_at_max_gen_toks_and_at_the_first_stop_string(tiny):
    model = ExplorerLM(model=tiny)
    full = model.generate_until([request("generate_until", CONTEXT, {"until": [], "max_gen_toks": 24})])[0]
    assert model.generations[-1].new_tokens == 24
    short = model.generate_until([request("generate_until", CONTEXT, {"until": [], "max_gen_toks": 5})])[0]
    assert model.generations[-1].new_tokens == 5 and full.startswith(short) and len(short) < len(full)
    stop = next(character for character in full[8:] if character.isascii() and character.isprintable())
    cut = model.generate_until([request("generate_until", CONTEXT, {"until": [stop], "max_gen_toks": 24})])[0]
    assert cut == full.split(stop)[0] and model.generations[-1].new_tokens < 24


def scripted_generation(monkeypatch, loaded, text: str) -> list[int]:
    """greedy_tokens replaced by one that writes `text`'s tokens one at a time until its stop rule says stop."""
    script = loaded.tokenizer(text, add_special_tokens=False)["input_ids"]

    def greedy(loaded, ids, views, new_tokens, *, trained_length, stop):
        written = []
        for token in script[:new_tokens]:
            written.append(token)
            if stop(written):
                break
        return None, [written]

    monkeypatch.setattr(bridge, "greedy_tokens", greedy)
    return script


def test_a_numbers_only_answer_stops_once_its_numbers_are_complete(tiny, monkeypatch):
    script = scripted_generation(monkeypatch, tiny, " Not 12 but 4817290. Then more text follows 12 here.")
    model = ExplorerLM(model=tiny)
    settings = {"until": [], "max_gen_toks": 64}
    one, = model.generate_until([request("generate_until", CONTEXT, settings, doc={"outputs": ["4817290"]})])
    assert one.startswith(" Not 12 but 4817290") and "Then" not in one  # 12 is shorter than the answer
    assert model.generations[-1].new_tokens < len(script)
    two, = model.generate_until([request("generate_until", CONTEXT, settings,
                                         doc={"outputs": ["4817290", "12"]})])
    assert "4817290" in two and "12 " in two and model.generations[-1].new_tokens < len(script)
    words, = model.generate_until([request("generate_until", CONTEXT, settings, doc={"outputs": ["Paris"]})])
    assert model.generations[-1].new_tokens == len(script) and words.endswith("here.")
    assert numbers_asked({}) is None and numbers_asked({"outputs": ["7", "x"]}) is None


def test_a_cached_generation_is_read_back_and_none_is_computed_twice(tiny, tmp_path, monkeypatch):
    settings = {"until": [], "max_gen_toks": 6}
    first = ExplorerLM(model=tiny, cache_dir=tmp_path)
    texts = first.generate_until([request("generate_until", CONTEXT, settings),
                                  request("generate_until", "Another context", settings, doc_id=1)])
    assert len(list(tmp_path.glob("*.json"))) == 2

    def computed(*args, **kwargs):
        raise AssertionError("a cached generation was computed again")

    monkeypatch.setattr(bridge, "greedy_tokens", computed)
    again = ExplorerLM(model=tiny, cache_dir=tmp_path)
    assert again.generate_until([request("generate_until", CONTEXT, settings),
                                 request("generate_until", "Another context", settings, doc_id=1)]) == texts
    assert again.generations == first.generations
    other_view = ExplorerLM(model=tiny, temperature=0.5, cache_dir=tmp_path)
    with pytest.raises(AssertionError, match="computed again"):  # another view is another generation
        other_view.generate_until([request("generate_until", CONTEXT, settings)])


def test_the_wilson_interval_is_the_published_one():
    assert wilson_interval(20, 20) == (0.8389, 1.0)  # 20 of 20: the interval is not zero wide
    assert wilson_interval(10, 20) == (0.2993, 0.7007)
    assert wilson_interval(0, 6) == (0.0, 0.3903)
    with pytest.raises(ValueError):
        wilson_interval(0, 0)


def test_sampling_is_refused_with_the_reason(tiny):
    model = ExplorerLM(model=tiny)
    with pytest.raises(AnalysisError, match="generates greedily"):
        model.generate_until([request("generate_until", CONTEXT, {"do_sample": True, "temperature": 0.8})])


@pytest.mark.parametrize(("arguments", "message"), [
    ({"temperature": 0}, "out of range"),
    ({"temperature": 250}, "out of range"),
    ({"rope": "warp:2"}, "unknown"),
    ({"rope": "self-extend:2,16"}, None),  # a remapping scores and generates (engine.continuation)
    ({"schedule": "bogus"}, "unknown schedule"),
    ({"schedule": "all"}, "one view per model"),
    ({"temperature": 0.9, "schedule": "qwen-logn:trained"}, "not both"),
    ({"temprature": 0.9}, "unknown model argument"),
    ({"max_length": 1}, "max_length"),
])
def test_a_bad_model_argument_is_one_clear_error(tiny, arguments, message):
    if message is None:
        model = ExplorerLM(model=tiny, **arguments)
        model.generate_until([request("generate_until", CONTEXT, {"until": [], "max_gen_toks": 2})])
        assert model.generations[-1].new_tokens == 2
        return
    with pytest.raises(AnalysisError, match=message) as raised:
        ExplorerLM(model=tiny, **arguments)
    assert "\n" not in str(raised.value)


def test_niah_single_1_runs_offline_from_the_models_own_tokenizer(tiny, monkeypatch):
    from transformers import AutoTokenizer

    loaded_from, real = [], AutoTokenizer.from_pretrained

    def local_only(name, *args, **kwargs):
        loaded_from.append((str(name), os.path.isdir(name)))
        return real(name, *args, **kwargs)

    monkeypatch.setattr(AutoTokenizer, "from_pretrained", local_only)
    document = run_ruler(tiny, RulerRequest(tasks=("niah_single_1",), lengths=(512,), limit=1,
                                            views=(View(1.0),), trained_length=tiny.max_positions))
    assert loaded_from and all(is_folder for _, is_folder in loaded_from)  # never a hub name
    score, = document.scores
    sample, = score.samples
    assert sample.answers[0].isdigit() and len(sample.answers[0]) == 7  # RULER's needle: a 7-digit number
    assert 320 < sample.prompt_tokens <= 512 and sample.cut_tokens == 0 and sample.new_tokens == 128
    assert score.score == sample.score == float(sample.answers[0] in sample.response)
    assert score.interval == wilson_interval(sample.score, 1)
    assert LmEvalDocument.from_dict(json.loads(json.dumps(document.to_dict()))) == document


def test_a_length_past_the_trained_length_needs_a_recipe_or_the_flag(tiny):
    past = RulerRequest(tasks=("niah_single_1",), lengths=(2048,), limit=1, views=(View(1.0),),
                        trained_length=tiny.max_positions)
    with pytest.raises(AnalysisError, match="past the trained length"):
        check_ruler(tiny, past)
    check_ruler(tiny, RulerRequest(**{**past.__dict__, "views": (View(1.0, parse_rope("yarn-rope:2")),)}))


@pytest.mark.parametrize(("argv", "message"), [
    (["--lengths", "100", "--limit", "1"], "length must be between"),
    (["--lengths", "2048", "--limit", "0"], "limit must be >= 1"),
    (["--lengths", "2048", "--limit", "1", "--tasks", "qa_squad"], "invalid choice"),
    (["--lengths", "2048", "--limit", "1", "--rope", "warp:2"], "unknown"),
    (["--lengths", "2048", "--limit", "1", "--model", "tiny-random"], "past the trained length"),
])
def test_a_mistake_on_the_command_line_is_one_line_and_status_2(argv, message, capsys):
    assert main(["lmeval", *argv]) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1
