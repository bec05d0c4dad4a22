"""What the model says at each temperature: at T = 1 the greedy continuation is transformers' own
generate(do_sample=False); at every T the first step's logits are the analysis pass's; over-softening changes the
words; a schedule or a RoPE recipe (a distance remapping too) steps as analysis passes of the growing text find it;
and a request the engine cannot serve is refused with the reason."""

import numpy as np
import pytest
import torch

from model_utils import AnalysisError, analyze
from model_utils.core.rope import parse_rope
from model_utils.core.schedules import Schedule
from model_utils.core.views import View
from model_utils.engine.analyze import tokenize
from model_utils.engine.generate import MAX_NEW_TOKENS, GenerationRequest, generate_continuations, greedy_tokens

TEXT = "The capital of France is Paris. The capital of Germany is"


def transformers_greedy(loaded, text: str, steps: int) -> list[int]:
    ids, _ = tokenize(loaded, text, 2048)
    with torch.inference_mode():
        out = loaded.model.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=steps,
                                    pad_token_id=loaded.tokenizer.eos_token_id)
    tokens = out[0, len(ids):].tolist()
    eos = loaded.tokenizer.eos_token_id
    return tokens[: tokens.index(eos) + 1] if eos in tokens else tokens


def first_step_differences(loaded, text: str, temperatures) -> list[float]:
    generation = generate_continuations(loaded, text, GenerationRequest(temperatures=temperatures,
                                                                          max_new_tokens=1))
    report = analyze(loaded, text, temperatures=temperatures)
    differences = []
    for result, continuation in zip(report.results, generation.continuations, strict=True):
        log_probs = torch.log_softmax(torch.from_numpy(continuation.first_logits), -1).numpy()
        differences.append(float(np.abs(log_probs - result.last_log_probs).max()))
    return differences


def test_at_t1_the_continuation_is_transformers_greedy_decoding(tiny):
    generation = generate_continuations(tiny, TEXT, GenerationRequest(temperatures=[1.0, 2.0], max_new_tokens=16))
    assert generation.continuations[0].token_ids == transformers_greedy(tiny, TEXT, 16)
    assert generation.continuations[0].text == tiny.tokenizer.decode(generation.continuations[0].token_ids)


def test_the_first_step_logits_are_those_of_the_analysis_pass_at_every_temperature(tiny):
    assert max(first_step_differences(tiny, TEXT, [0.5, 1.0, 2.0])) < 1e-4


def test_each_temperature_has_its_top_next_tokens_sorted_and_summing_below_one(tiny):
    generation = generate_continuations(tiny, TEXT, GenerationRequest(temperatures=[0.5, 4.0], max_new_tokens=2))
    for continuation in generation.continuations:
        probs = [entry["prob"] for entry in continuation.top_next]
        assert len(probs) == 5 and probs == sorted(probs, reverse=True) and sum(probs) <= 1.0 + 1e-6
    assert generation.continuations[0].top_next != generation.continuations[1].top_next


def test_isolated_mode_says_every_continuation_is_t1s(tiny):
    generation = generate_continuations(tiny, TEXT, GenerationRequest(temperatures=[0.5, 1.0, 4.0],
                                                                      max_new_tokens=8, mode="isolated"))
    assert len({tuple(c.token_ids) for c in generation.continuations}) == 1
    assert generation.continuations[0].token_ids == transformers_greedy(tiny, TEXT, 8)
    assert "T = 1" in generation.note


@pytest.mark.parametrize(("text", "request_args", "message"), [
    ("   ", {}, "the text is empty"),
    (TEXT, {"max_new_tokens": MAX_NEW_TOKENS + 1}, f"between 1 and {MAX_NEW_TOKENS}"),
    (TEXT, {"max_new_tokens": 0}, "max_new_tokens"),
    (TEXT, {"temperatures": [0.0]}, "temperature"),
    (TEXT, {"mode": "sideways"}, "mode must be one of"),
])
def test_bad_requests_are_refused_with_the_fix(tiny, text, request_args, message):
    with pytest.raises(AnalysisError, match=message):
        generate_continuations(tiny, text, GenerationRequest(**request_args))


def test_a_continuation_past_the_trained_length_is_refused(tiny):
    long = "word " * (tiny.max_positions - 4)
    with pytest.raises(AnalysisError, match="past the model's trained length"):
        generate_continuations(tiny, long, GenerationRequest(max_new_tokens=32, max_tokens=4096))


@pytest.mark.slow
def test_bundled_t1_is_greedy_decoding_the_first_step_agrees_and_softening_changes_the_words(bundled):
    generation = generate_continuations(bundled, TEXT, GenerationRequest(temperatures=[1.0, 4.0],
                                                                         max_new_tokens=12))
    at_one, softened = generation.continuations
    assert at_one.token_ids == transformers_greedy(bundled, TEXT, 12)
    assert at_one.token_ids[:6] != softened.token_ids[:6]  # over-softening shows within the first words
    assert max(first_step_differences(bundled, TEXT, [0.5, 1.0, 2.0])) < 2e-4


def test_progress_is_one_event_per_generated_token(tiny):
    from model_utils.core.progress import TOKEN

    events = []
    generate_continuations(tiny, TEXT, GenerationRequest(temperatures=[1.0, 2.0], max_new_tokens=3),
                           progress=events.append)
    assert [(event.stage, event.step, event.steps, event.fraction) for event in events] == [
        (TOKEN, 1, 3, 1 / 3), (TOKEN, 2, 3, 2 / 3), (TOKEN, 3, 3, 1.0)]


def teacher_forced_tokens(loaded, ids: list[int], view, steps: int) -> list[int]:
    """The greedy tokens as analysis passes find them: the most likely next token after the ids so far, one full
    pass per step (no key-value cache), at `view`."""
    from model_utils.engine.analyze import AnalysisRequest, analyze_tokens

    tokens = []
    for _ in range(steps):
        report = analyze_tokens(loaded, ids + tokens, AnalysisRequest(temperatures=[view], max_tokens=4096))
        tokens.append(int(np.argmax(report.results[0].last_log_probs)))
    return tokens


@pytest.mark.parametrize("view", [
    View(Schedule("qwen-logn", 16.0)),  # 1 up to position 15, then log_16(p + 1): a multiplier per generated query
    View(1.0, parse_rope("yarn-rope:2")),
    View(0.7, parse_rope("linear:2")),
    View(1.0, parse_rope("self-extend:2,16")),  # the text is ~60 tokens: its far pairs are remapped
    View(0.7, parse_rope("rerope:16")),
], ids=["schedule", "yarn-rope", "linear-at-0.7", "self-extend", "rerope-at-0.7"])
def test_a_schedule_or_recipe_steps_as_analysis_passes_of_the_growing_text_find_it(tiny, view):
    ids, _ = tokenize(tiny, TEXT, 2048)
    first, generated = greedy_tokens(tiny, ids, [view], 6)
    assert generated[0] == teacher_forced_tokens(tiny, ids, view, 6)
    report = analyze(tiny, TEXT, temperatures=[view])
    np.testing.assert_allclose(torch.log_softmax(first[0].float(), -1).numpy(), report.results[0].last_log_probs,
                               atol=1e-4)


def test_the_recipe_and_the_schedule_reach_the_generation(tiny):
    ids, _ = tokenize(tiny, TEXT, 2048)
    plain, _ = greedy_tokens(tiny, ids, [View(1.0)], 1)
    for view in (View(Schedule("qwen-logn", 16.0)), View(1.0, parse_rope("yarn-rope:2")),
                 View(1.0, parse_rope("self-extend:2,16"))):
        changed, _ = greedy_tokens(tiny, ids, [view], 1)
        assert float((changed - plain).abs().max()) > 1e-3


def test_a_row_stops_where_its_stop_says_and_the_loop_when_every_row_has(tiny):
    ids, _ = tokenize(tiny, TEXT, 2048)
    _, full = greedy_tokens(tiny, ids, [View(1.0), View(2.0)], 8)
    _, stopped = greedy_tokens(tiny, ids, [View(1.0), View(2.0)], 8, stop=lambda tokens: len(tokens) >= 3)
    assert [len(row) for row in full] == [8, 8]
    assert stopped == [row[:3] for row in full]


def test_a_recipe_lets_a_continuation_run_past_the_trained_length(tiny):
    long = "word " * (tiny.max_positions // 5 + 8)  # one token per byte: past the 1,024 trained positions
    generation = generate_continuations(tiny, long, GenerationRequest(
        temperatures=[1.0], rope=parse_rope("yarn-rope:2"), max_new_tokens=4, max_tokens=4096))
    assert generation.prompt_tokens > tiny.max_positions and len(generation.continuations[0].token_ids) >= 1


def test_a_distance_remapping_steps_each_row_on_its_own_and_stops_each_row(tiny):
    ids, _ = tokenize(tiny, TEXT, 2048)
    views = [View(1.0, parse_rope("self-extend:2,16")), View(2.0, parse_rope("self-extend:2,16"))]
    first, rows = greedy_tokens(tiny, ids, views, 5, stop=lambda tokens: len(tokens) >= 3)
    assert [len(row) for row in rows] == [3, 3] and first.shape[0] == 2
    assert rows == [greedy_tokens(tiny, ids, [view], 3)[1][0] for view in views]


@pytest.mark.parametrize(("views", "message"), [
    ([View(1.0), View(1.0, parse_rope("yarn-rope:2"))], "share one RoPE recipe"),
])
def test_a_generation_the_cache_cannot_run_is_refused_with_the_reason(tiny, views, message):
    ids, _ = tokenize(tiny, TEXT, 2048)
    with pytest.raises(AnalysisError, match=message):
        greedy_tokens(tiny, ids, views, 2)
