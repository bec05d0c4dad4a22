"""The Collapse inspector's engine on the tiny model: a long prompt cut before its question keeps its head and its
question; a span is held by the tokens whose text holds it (checked by decoding them); the last query's masses equal
those of transformers' own eager attention maps; and the answer probe's whole-answer log-probability is transformers'
teacher-forced one at T = 1 and the analysis pass's at every T, its greedy continuation transformers' generate."""

import numpy as np
import pytest
import torch

from model_utils import AnalysisError, AnalysisRequest, analyze
from model_utils.core.collapse import FactSource, find_fact, report_masses
from model_utils.engine.analyze import analyze_tokens
from model_utils.engine.answer import (
    ANSWER_ROOM,
    MAX_ANSWER_TOKENS,
    AnswerRequest,
    answer_ids,
    answer_probe,
    collapse_limit,
    text_pieces,
)
from model_utils.engine.prompt import decoded_offsets, encode, prompt_tokens
from tests.support.models import reference_copy
from tests.support.reference import reference_last_query_masses

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FACT = "The code for the vault is 4817."
QUESTION = "What is the code for the vault?"
FILLER = " ".join(f"Paragraph {i} tells of gardens, markets and rain." for i in range(40))
LONG = f"{FACT}\n\n{FILLER}\n\n{QUESTION}"  # 2,024 characters: 2,024 tokens of the byte-level tiny tokenizer
SHORT = f"{FACT} The garden grew peas and the market sold honey in the square. {QUESTION}"


def decoded(loaded, ids) -> str:
    return loaded.tokenizer.decode(ids, clean_up_tokenization_spaces=False)


def test_a_prompt_past_the_limit_keeps_its_head_and_its_question(tiny):
    prompt = prompt_tokens(tiny, LONG, 400, keep_question=True)
    cut = prompt.cut
    assert prompt.truncated and len(prompt.ids) <= 400
    assert cut.limit == 400 and cut.question == QUESTION and cut.question_tokens + cut.head_tokens == len(prompt.ids)
    assert decoded(tiny, prompt.ids[cut.head_tokens:]) == f"\n\n{QUESTION}"  # with the line break before it
    head = decoded(tiny, prompt.ids[: cut.head_tokens])
    assert LONG.startswith(head) and head.endswith(".")  # the head ends on a whole sentence
    assert cut.left_out_chars == len(LONG) - len(head) - len(f"\n\n{QUESTION}") > 0
    at_end = prompt_tokens(tiny, LONG, 400)
    assert at_end.cut is None and decoded(tiny, at_end.ids) == LONG[:400]  # the default cut keeps the first tokens
    whole = prompt_tokens(tiny, SHORT, 400, keep_question=True)
    assert not whole.truncated and whole.cut is None and decoded(tiny, whole.ids) == SHORT


def test_a_question_longer_than_half_the_limit_is_cut_at_the_end_and_says_so(tiny):
    prompt = prompt_tokens(tiny, "Fact. " + "a" * 600 + " word?", 400, keep_question=True)
    assert prompt.cut.question_tokens == 0 and prompt.cut.head_tokens == len(prompt.ids) == 400


SPAN_PHRASES = ("4817", "the vault is", "What is the code", "gardens, markets")


def assert_spans_are_held_by_the_fewest_tokens_whose_text_holds_them(loaded) -> None:
    """Each phrase of SPAN_PHRASES, marked in LONG cut to 400 tokens: the tokens found for it decode to a text that
    holds it, and neither without its first nor without its last token does (also run on the bundled model)."""
    prompt = prompt_tokens(loaded, LONG, 400, keep_question=True)
    for phrase in SPAN_PHRASES:
        start, stop = find_fact(LONG, prompt.offsets, marked=phrase).fact.tokens
        text = decoded(loaded, prompt.ids[start:stop])
        assert phrase in text, (loaded.name, phrase, text)
        assert phrase not in decoded(loaded, prompt.ids[start + 1 : stop])
        assert phrase not in decoded(loaded, prompt.ids[start : stop - 1])


def assert_decoded_offsets_are_the_offsets_mapping(loaded) -> None:
    ids, offsets = encode(loaded, SHORT, special=True)
    assert decoded_offsets(loaded, SHORT, ids) == offsets
    assert "".join(SHORT[start:end] for start, end in offsets) == SHORT


def test_a_span_is_held_by_the_fewest_tokens_whose_text_holds_it(tiny):
    assert_spans_are_held_by_the_fewest_tokens_whose_text_holds_them(tiny)


def test_a_fact_in_the_part_left_out_has_no_tokens(tiny):
    text = LONG.replace("Paragraph 30 tells", "The password is Tulip. Paragraph 30 tells")
    prompt = prompt_tokens(tiny, text, 400, keep_question=True)
    fact = find_fact(text, prompt.offsets, answer="Tulip").fact
    assert fact.source is FactSource.ANSWER and not fact.kept and fact.tokens == (0, 0)


def test_the_decoded_offsets_are_the_tokenizers_offsets_mapping(tiny):
    assert_decoded_offsets_are_the_offsets_mapping(tiny)


def test_the_last_query_masses_are_those_of_the_models_own_attention_maps(tiny):
    report = analyze(tiny, LONG, temperatures=[1.0], window=16, max_tokens=300, cut="question")
    fact = find_fact(LONG, report.offsets, answer="4817").fact
    masses = report_masses(report, fact)[0]
    with torch.inference_mode():
        maps = reference_copy(tiny, "eager")(torch.tensor([report.token_ids]), output_attentions=True).attentions
    rows = np.stack([layer[0, :, -1].double().numpy() for layer in maps])  # [layer, head, n]
    expected = [[reference_last_query_masses(head, 16, fact.tokens) for head in layer] for layer in rows]
    for part in ("sink", "recent", "fact", "elsewhere"):
        per_layer = [np.mean([head[part] for head in layer]) for layer in expected]
        np.testing.assert_allclose(masses.by_layer[part], per_layer, atol=2e-5)
    assert report.cut is not None and report.truncated
    assert report.to_dict()["cut"]["question"] == QUESTION  # the JSON download says how the prompt was cut


def test_an_unknown_cut_is_refused(tiny):
    with pytest.raises(AnalysisError, match="cut must be one of end, question"):
        analyze(tiny, SHORT, temperatures=[1.0], cut="middle")


def teacher_forced(loaded, ids: list[int], answer: list[int]) -> float:
    """transformers' own: model(input_ids).logits, log_softmax, summed over the answer's tokens."""
    with torch.inference_mode():
        logits = reference_copy(loaded, "sdpa")(torch.tensor([ids + answer])).logits[0].double()
    log_probs = torch.log_softmax(logits, dim=-1)
    return float(sum(log_probs[len(ids) - 1 + index, token] for index, token in enumerate(answer)))


def test_the_whole_answer_at_t1_is_transformers_teacher_forced_log_probability(tiny):
    probe = answer_probe(tiny, LONG, AnswerRequest(temperatures=[0.5, 1.0], answer="4817", max_tokens=400))
    ids = prompt_tokens(tiny, LONG, 400, keep_question=True).ids
    answer = answer_ids(tiny, LONG, "4817")
    assert decoded(tiny, answer) == " 4817" and probe.answer_tokens == (" ", "4", "8", "1", "7")
    said = probe.views[1]
    assert said.answer_log_prob == pytest.approx(teacher_forced(tiny, ids, answer), abs=1e-4)
    assert said.answer_log_prob == pytest.approx(sum(said.token_log_probs))
    with torch.inference_mode():
        out = reference_copy(tiny, "sdpa").generate(torch.tensor([ids]), do_sample=False, max_new_tokens=10,
                                                    pad_token_id=tiny.tokenizer.eos_token_id)
    assert "".join(piece.text for piece in said.continuation) == decoded(tiny, out[0, len(ids):].tolist())
    assert probe.prompt_tokens == len(ids) and probe.new_tokens == 10


def test_the_whole_answer_at_every_temperature_is_the_analysis_pass_loss_on_its_tokens(tiny):
    temperatures = [0.5, 1.0, 2.0]
    probe = answer_probe(tiny, SHORT, AnswerRequest(temperatures=temperatures, answer="4817"))
    ids = prompt_tokens(tiny, SHORT, 2048, keep_question=True).ids
    answer = answer_ids(tiny, SHORT, "4817")
    report = analyze_tokens(tiny, ids + answer, AnalysisRequest(temperatures=temperatures))
    for said, result in zip(probe.views, report.results, strict=True):
        assert said.answer_log_prob == pytest.approx(-result.position_nll[len(ids) - 1 :].sum(), abs=1e-3)
    assert len({said.answer_log_prob for said in probe.views}) == 3


def test_isolated_mode_runs_the_model_at_t1_for_every_temperature(tiny):
    probe = answer_probe(tiny, SHORT, AnswerRequest(temperatures=[0.5, 1.0, 2.0], answer="4817", mode="isolated"))
    assert probe.isolated and len({(said.answer_log_prob, said.continuation) for said in probe.views}) == 1
    assert [said.label for said in probe.views] == ["T=0.5", "T=1", "T=2"]


def test_the_answer_continues_the_prompt_and_a_bad_one_is_refused_with_the_fix(tiny):
    assert decoded(tiny, answer_ids(tiny, "The code is", "4817")) == " 4817"
    assert decoded(tiny, answer_ids(tiny, "The code is ", " 4817 ")) == "4817"  # the prompt's space is the prompt's
    with pytest.raises(AnalysisError, match="the expected answer is empty"):
        answer_ids(tiny, "The code is", "   ")
    with pytest.raises(AnalysisError, match=f"give at most {MAX_ANSWER_TOKENS}"):
        answer_ids(tiny, "The code is", "x" * 40)


def test_a_collapse_prompt_leaves_room_for_the_answer_within_the_trained_length(tiny):
    assert collapse_limit(tiny, 4096) == tiny.max_positions - ANSWER_ROOM
    assert collapse_limit(tiny, 512) == 512
    text = "The code is 4817. " + "Filler. " * 200 + QUESTION  # past the tiny model's 1,024 positions
    probe = answer_probe(tiny, text, AnswerRequest(temperatures=[1.0], answer="4817", max_tokens=4096))
    assert probe.prompt_tokens <= tiny.max_positions - ANSWER_ROOM


def test_special_tokens_are_pieces_of_their_own(tiny):
    eos = tiny.tokenizer.eos_token_id
    ids = tiny.tokenizer("ab", add_special_tokens=False)["input_ids"] + [eos]
    pieces = text_pieces(tiny, ids)
    assert [(piece.text, piece.special) for piece in pieces] == [("ab", False), ("<|endoftext|>", True)]
