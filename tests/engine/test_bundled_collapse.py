"""The Collapse inspector on the bundled SmolLM2-135M and issue 56's vault prompt (tests/support/vault.py: the fact
first, about 1,600 tokens of the built-in long text, the question last), slow: the whole answer's log-probability at
T = 1 is transformers' own teacher-forced one, and the first sentence gives the recent, fact and sink mass at T = 1
and names the temperatures whose continuation says "4817", as the data has them."""

import numpy as np
import pytest
import torch

from model_utils import analyze
from model_utils.core.collapse import FactSource, find_fact
from model_utils.engine.answer import AnswerRequest, answer_ids, answer_probe
from model_utils.engine.prompt import prompt_tokens
from model_utils.verdicts.collapse import collapse_verdict
from model_utils.verdicts.words import collapse_sentence, share
from tests.engine.test_collapse import (
    assert_decoded_offsets_are_the_offsets_mapping,
    assert_spans_are_held_by_the_fewest_tokens_whose_text_holds_them,
)
from tests.support.models import reference_copy
from tests.support.reference import reference_last_query_masses
from tests.support.vault import VAULT_ANSWER, VAULT_FACT, vault_prompt

pytestmark = pytest.mark.slow

TEMPERATURES = [0.5, 1.0, 1.5, 2.0]  # the sidebar's default
LIMIT = 2048  # the page's default token limit


@pytest.fixture(scope="module")
def vault(bundled):
    text = vault_prompt(bundled.tokenizer)
    report = analyze(bundled, text, temperatures=TEMPERATURES, window=32, max_tokens=LIMIT, cut="question")
    probe = answer_probe(bundled, text, AnswerRequest(temperatures=TEMPERATURES, answer=VAULT_ANSWER,
                                                      max_tokens=LIMIT))
    return text, report, probe


def test_the_vault_prompt_is_the_issues(bundled, vault):
    text, report, _ = vault
    assert text.startswith(VAULT_FACT + "\n\n") and text.endswith("\n\nWhat is the code for the vault?")
    assert 1500 <= report.n_tokens <= 1700 and not report.truncated  # about 1,600 tokens of filler


def test_the_whole_answer_at_t1_is_transformers_teacher_forced_log_probability(bundled, vault):
    """model(input_ids).logits, log_softmax, summed over the answer's tokens: the answer ' 4817' is five tokens
    (' ', '4', '8', '1', '7'), never the space alone. Measured: -12.1781 both ways, 1e-4 apart at most."""
    text, _, probe = vault
    ids = prompt_tokens(bundled, text, LIMIT, keep_question=True).ids
    answer = answer_ids(bundled, text, VAULT_ANSWER)
    assert probe.answer_tokens == (" ", "4", "8", "1", "7") and len(answer) == 5
    with torch.inference_mode():
        logits = reference_copy(bundled, "sdpa")(torch.tensor([ids + answer])).logits[0].double()
    log_probs = torch.log_softmax(logits, dim=-1)
    each = [float(log_probs[len(ids) - 1 + index, token]) for index, token in enumerate(answer)]
    at_1 = probe.views[TEMPERATURES.index(1.0)]
    np.testing.assert_allclose(at_1.token_log_probs, each, atol=5e-4)
    assert at_1.answer_log_prob == pytest.approx(sum(each), abs=1e-3)


def test_the_first_sentence_gives_the_masses_at_t1_and_which_temperatures_answer(vault):
    text, report, probe = vault
    search = find_fact(text, report.offsets, answer=VAULT_ANSWER)
    assert search.fact.source is FactSource.ANSWER and search.fact.text == VAULT_ANSWER
    verdict = collapse_verdict(report, search, probe)
    at_1 = report.results[TEMPERATURES.index(1.0)]
    rows = at_1.last_rows.reshape(-1, report.n_tokens)  # [layer x head, n]
    masses = {part: float(np.mean([reference_last_query_masses(row, 32, search.fact.tokens)[part] for row in rows]))
              for part in ("recent", "fact", "sink")}
    sentence = collapse_sentence(verdict)
    assert sentence.startswith(f'At T = 1 the last token ("?") puts {share(masses["recent"])} of its attention on '
                               f'the last 32 tokens, {share(masses["fact"])} on the fact and {share(masses["sink"])} '
                               "on the first token (the sink); ")
    said = {view.label: " ".join(view.text.split()) for view in probe.views}
    answering = [label for label, text in said.items() if VAULT_ANSWER in text]
    if not answering:
        assert sentence.endswith('; no temperature tried answers "4817".'), (sentence, said)
    elif len(answering) == len(said):
        assert sentence.endswith('; every temperature tried answers "4817".'), (sentence, said)
    else:
        named = sentence.split("; ")[-1]
        assert all(label.removeprefix("T=") in named.split(" answer")[0] for label in answering), (named, said)
    for view in probe.views:  # a special token ends a continuation and is shown apart
        assert all(not piece.special for piece in view.continuation[:-1])


def test_the_bundled_tokenizer_locates_spans_by_its_offsets(bundled):
    assert_decoded_offsets_are_the_offsets_mapping(bundled)
    assert_spans_are_held_by_the_fewest_tokens_whose_text_holds_them(bundled)
