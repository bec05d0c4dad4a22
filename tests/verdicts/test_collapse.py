"""The Collapse inspector's verdict (model_utils/verdicts/collapse.py) and its words: a continuation answers when it
holds the answer, case and spacing aside; which views answer where the reference does not; the fact's range; and the
first sentence quotes the reference's masses and names the views that answer, as the brief's example says it."""

import numpy as np
import pytest

from model_utils.core.collapse import AnswerProbe, FactSearch, SaidAtView, TextPiece
from model_utils.core.report import Cut, Report
from model_utils.verdicts.collapse import answers, collapse_verdict
from model_utils.verdicts.words import collapse_more_sentences, collapse_sentence, cut_sentence, odds_words, share
from tests.core.test_collapse import result_with_rows
from tests.verdicts.synthetic import collapse_case

VIEWS = [(0.5, "T=0.5", (0.45, 0.01, 0.40), " The answer is unclear."),
         (1.0, "T=1", (0.41, 0.02, 0.38), " 4817."),
         (1.5, "T=1.5", (0.30, 0.03, 0.20), "\n\nThe vault"),
         (2.0, "T=2", (0.20, 0.05, 0.10), " 48 17")]


def said(text: str) -> SaidAtView:
    return SaidAtView(label="T=1", temperature=1.0, answer_log_prob=-1.0, token_log_probs=(-1.0,),
                      continuation=(TextPiece(text=text), TextPiece(text="<|im_end|>", special=True)))


@pytest.mark.parametrize(("text", "answer", "expected"), [
    (" 4817.", "4817", True), (" The code is\n 4817", "4817", True), (" the  Password\nIS marigold", "marigold", True),
    (" 48 17", "4817", False), ("", "4817", False), (" im_end", "<|im_end|>", False), (" MARIGOLD", "Marigold", True),
    (" any", " ", False)])
def test_a_continuation_answers_when_it_holds_the_answer_case_and_spacing_aside(text, answer, expected):
    assert answers(said(text), answer) is expected


def test_the_first_sentence_gives_the_reference_masses_and_which_temperatures_answer():
    verdict = collapse_case(VIEWS, log_probs=[-9.0, -2.0, -7.0, -12.0])
    assert verdict.answering == [1] and verdict.helped == [] and verdict.likeliest == 1
    assert collapse_sentence(verdict) == (
        'At T = 1 the last token ("?") puts 0.41 of its attention on the last 32 tokens, 0.02 on the fact and 0.38 on '
        'the first token (the sink); T = 1 answers "4817", T = 0.5, 1.5 and 2 do not.')
    assert collapse_more_sentences(verdict) == [
        "The whole answer is likeliest at T = 1 (log-probability -2.00; no other temperature tried makes it "
        "likelier).", "The fact's share runs from 0.01 at T = 0.5 to 0.05 at T = 2."]


def test_a_temperature_that_answers_where_t1_does_not_helps():
    views = [VIEWS[0], (1.0, "T=1", (0.41, 0.02, 0.38), " No."), VIEWS[2], (2.0, "T=2", (0.2, 0.05, 0.1), "4817")]
    verdict = collapse_case(views)
    assert verdict.helped == [3] and verdict.fact_range == (0, 3) and verdict.likeliest == 0
    assert collapse_sentence(verdict).endswith('T = 2 answers "4817", T = 0.5, 1 and 1.5 do not.')
    assert collapse_more_sentences(verdict)[:2] == [
        "A temperature helps here: T = 2 answers where T = 1 does not.",
        "The whole answer is likeliest at T = 0.5 (log-probability -1.00; against -2.00 at T = 1)."]


def test_no_answer_no_fact_and_a_fact_left_out_are_each_said():
    assert collapse_sentence(collapse_case(VIEWS, answer=None)).endswith(
        "; give the expected answer to see which temperature makes the model say it.")
    none = [(t, label, (recent, None, sink), text) for t, label, (recent, _, sink), text in VIEWS]
    assert "; no fact was found to measure (mark one under the prompt);" in collapse_sentence(
        collapse_case(none, fact=None))
    assert "; the fact lies in the part of the prompt that was left out;" in collapse_sentence(
        collapse_case(none, fact=(0, 0)))
    everyone = [(t, label, masses, " 4817") for t, label, masses, _ in VIEWS]
    assert collapse_sentence(collapse_case(everyone)).endswith('; every temperature tried answers "4817".')
    nobody = [(t, label, masses, " no") for t, label, masses, _ in VIEWS]
    assert collapse_sentence(collapse_case(nobody)).endswith('; no temperature tried answers "4817".')


def test_a_small_share_keeps_two_significant_digits():
    assert [share(v) for v in (0.41, 0.0003, 0.00046, 7e-6, 0.0, 1.0)] == [
        "0.41", "0.0003", "0.00046", "0.000007", "0", "1.00"]
    assert [odds_words(v) for v in (0.0, -np.log(2.0), -np.log(210.0), -20.0)] == [
        "almost certain", "about 1 in 2.0", "about 1 in 210", "less than 1 in a million"]


def test_the_cut_is_said_with_what_was_kept():
    kept = Cut(limit=2048, head_tokens=2030, question_tokens=18, question_start=9000, left_out_chars=31245,
               question="What is the code for the vault?")
    assert cut_sentence(kept).startswith(
        'The prompt is longer than the 2,048 tokens this page reads, so its middle was left out: its first 2,030 '
        'tokens and its question ("What is the code for the vault?", 18 tokens) were kept, and the 31,245 characters')
    lost = Cut(limit=2048, head_tokens=2048, question_tokens=0, question_start=10, left_out_chars=900, question="x")
    assert "the question at its end is not in what was read" in cut_sentence(lost)


def test_the_verdict_refuses_a_probe_of_other_views():
    rows = np.full((1, 1, 4), 0.25)
    report = Report(model="m", n_tokens=4, tokens=list("abc?"), token_ids=[1, 2, 3, 4], truncated=False,
                    mode="in-model", window=2, q_start=1, layers=None, seconds=0.0,
                    results=[result_with_rows(rows)], trained_length=8, beyond_trained=False, bucket_size=None,
                    buckets=[(1, 4)], distance_edges=np.array([0, 1, 2, 4]), kernel="torch",
                    multipliers=np.ones((1, 4)))
    probe = AnswerProbe(answer="x", answer_tokens=("x",), prompt_tokens=4, new_tokens=1, views=(
        SaidAtView(label="T=2", temperature=2.0, answer_log_prob=-1.0, token_log_probs=(-1.0,), continuation=()),),
        isolated=False, seconds=0.0)
    with pytest.raises(ValueError, match="not the report's"):
        collapse_verdict(report, FactSearch(fact=None), probe)
    verdict = collapse_verdict(report, FactSearch(fact=None), None)
    assert verdict.views[0].masses.sink == 0.25 and verdict.views[0].masses.recent == 0.5
    assert verdict.last_token == "?" and verdict.answer is None
