"""The Collapse inspector's numbers without a model (model_utils/core/collapse.py): where the question starts, which
span is the fact and which tokens hold it, and the last query's sink, recent, fact and other mass, against a key-by-key
reference (tests/support/reference.py)."""

import numpy as np
import pytest

from model_utils.core.collapse import (
    FactSource,
    FactSpan,
    find_fact,
    last_query_masses,
    question_sentence,
    question_start,
    token_span,
)
from model_utils.core.report import TemperatureResult
from model_utils.core.statistics import distance_bins, mass_by_distance
from model_utils.core.views import View
from tests.support import ROOT
from tests.support.reference import reference_last_query_masses

NEEDLE = (ROOT / "assets/needle.txt").read_text()
VAULT = ("The code for the vault is 4817.\n\nThe garden grew peas. The market sold honey.\n\n"
         "What is the code for the vault?")


def word_offsets(text: str) -> list[tuple[int, int]]:
    """One 'token' per character: the simplest offsets, so a span's tokens are its characters."""
    return [(index, index + 1) for index in range(len(text))]


@pytest.mark.parametrize(("text", "question"), [
    (VAULT, "What is the code for the vault?"),
    (NEEDLE, "Question: What is the password for the archive room?\nAnswer: The password for the archive room is"),
    ("One fact. Then a statement without a question mark.", "Then a statement without a question mark."),
    ("Is this far? " + "Filler words here. " * 30 + "The last sentence.", "The last sentence."),
    ("A line\nand the last line", "and the last line"),
    ("Just one sentence", "Just one sentence"),
])
def test_the_question_is_the_sentence_holding_the_last_question_mark_near_the_end_else_the_last(text, question):
    assert text[question_start(text):] == question


def test_a_marked_phrase_is_found_in_any_case_and_spacing_and_comes_first():
    found = find_fact(VAULT, word_offsets(VAULT), marked="the CODE for\n the vault is", answer="4817")
    assert found.fact.source is FactSource.MARKED and found.marked_missing is None
    assert found.fact.text == "The code for the vault is" and found.fact.chars == (0, 25)
    assert found.fact.tokens == (0, 25)


def test_a_marked_phrase_not_in_the_prompt_is_reported_and_the_answer_taken_instead():
    found = find_fact(VAULT, word_offsets(VAULT), marked="the safe's code", answer="4817")
    assert found.marked_missing == "the safe's code"
    assert found.fact.source is FactSource.ANSWER and found.fact.text == "4817"
    assert found.fact.chars == (26, 30) == found.fact.tokens


def test_the_answer_is_found_as_a_whole_word_at_its_first_appearance():
    text = "Marigolds grow here. The password is marigold. Again: Marigold. What is the password?"
    found = find_fact(text, word_offsets(text), answer="Marigold")
    assert found.fact.chars == (37, 45)  # not inside "Marigolds", and the earlier of the two
    assert found.fact.source is FactSource.ANSWER


def test_without_the_answer_the_fact_is_the_earliest_sentence_sharing_most_of_the_questions_words():
    text = ("The vault is old. The code for the vault is 4817. The code for the vault is secret.\n\n"
            "What is the code for the vault?")
    found = find_fact(text, word_offsets(text), answer="1234")
    assert found.fact.source is FactSource.QUESTION
    assert found.fact.text == "The code for the vault is 4817."  # "code" and "vault", before the later tie
    assert question_sentence("Nothing shared here. Cats sleep.\n\nWhat is the vault code?", 34) is None
    assert find_fact("Cats sleep. Dogs bark. What is the vault code?", word_offsets("x" * 46)).fact is None


def test_a_span_is_held_by_the_tokens_that_overlap_it_and_none_for_a_span_left_out():
    offsets = [(0, 0), (0, 3), (3, 8), (8, 12), (40, 45), (45, 50)]  # a special token first; a cut after 12
    assert token_span(offsets, (4, 10)) == (2, 4)
    assert token_span(offsets, (3, 8)) == (2, 3)
    assert token_span(offsets, (20, 30)) == (0, 0)  # in the part left out
    assert token_span(offsets, (10, 42)) == (3, 5)  # straddles the cut: the kept tokens on both sides


def result_with_rows(rows: np.ndarray) -> TemperatureResult:
    empty = np.zeros(0)
    return TemperatureResult(view=View(1.0), applied_rope=None, loss=0.0, next_token=[],
                             heads={}, last_rows=rows, last_log_probs=empty, position_nll=empty,
                             position_greedy=empty, bucket_heads={}, bucket_nll=empty, distance_profile=empty)


@pytest.mark.parametrize(("n", "window", "fact"), [(60, 8, (10, 14)), (60, 8, (0, 3)), (60, 8, (50, 56)),
                                                    (20, 32, (5, 7)), (60, 8, None)])
def test_the_last_query_masses_are_the_reference_key_by_key_and_add_up_to_one(n, window, fact):
    rows = np.random.default_rng(n + window).dirichlet(np.ones(n) * 0.3, size=(3, 2))  # [layer, head, n]
    span = None if fact is None else FactSpan(source=FactSource.ANSWER, text="x", chars=fact, tokens=fact)
    masses = last_query_masses(result_with_rows(rows), window, span)
    expected = [[reference_last_query_masses(rows[layer, head], window, fact) for head in range(2)]
                for layer in range(3)]
    for part in ("sink", "recent", "fact", "elsewhere"):
        per_layer = np.array([np.mean([head[part] for head in layer]) for layer in expected])
        if part == "fact" and fact is None:
            assert masses.fact is None and "fact" not in masses.by_layer
            continue
        np.testing.assert_allclose(masses.by_layer[part], per_layer, atol=1e-12)
        assert getattr(masses, part) == pytest.approx(per_layer.mean(), abs=1e-12)
    total = masses.sink + masses.recent + (masses.fact or 0.0) + masses.elsewhere
    assert total == pytest.approx(1.0, abs=1e-9)


def test_the_distance_profile_can_leave_the_sink_out_of_the_farthest_bin():
    rows = np.random.default_rng(7).dirichlet(np.ones(40), size=(2, 3))
    result, edges = result_with_rows(rows), distance_bins(40)
    with_sink, without = result.last_distance_profile(edges), result.last_distance_profile(edges, sink=False)
    sink = result.last_sink_mass()
    assert sink == pytest.approx(rows[..., 0].mean())
    np.testing.assert_allclose(without[:-1], with_sink[:-1])
    assert without[-1] == pytest.approx(with_sink[-1] - sink)  # key 0 is the farthest key of the last query
    np.testing.assert_allclose(result.last_distance_profile(edges, 1, sink=False),
                               mass_by_distance(np.concatenate([[0.0], rows[1].mean(axis=0)[1:]]), edges))
    assert result.last_sink_mass(1) == pytest.approx(rows[1, :, 0].mean())
