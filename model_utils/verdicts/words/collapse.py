"""The Collapse inspector's words: where the last token's attention goes at the reference view (its recent window,
the fact, the sink), which temperatures make the model give the expected answer, how the fact was found, how a
long prompt was cut, and an answer's log-probability as odds a reader says. Records of verdicts/collapse.py in."""

from __future__ import annotations

import math
from collections.abc import Sequence

from model_utils.core.collapse import FactSource
from model_utils.core.report import Cut
from model_utils.verdicts.collapse import CollapseVerdict, ViewOutcome
from model_utils.verdicts.words.common import joined

__all__ = ["FACT_SOURCES", "QUOTED", "answer_log_prob_words", "collapse_more_sentences", "collapse_sentence",
           "cut_sentence", "fact_sentences", "odds_words", "quoted", "said_words", "share", "token_words", "view_name",
           "view_names"]

QUOTED = 80  # characters of a quoted phrase or question; a longer one is cut with an ellipsis
FACT_SOURCES = {FactSource.MARKED: "the phrase you marked",
                FactSource.ANSWER: "where the expected answer first appears in the prompt",
                FactSource.QUESTION: "the earlier sentence that shares most of the question's words"}


def quoted(text: str, limit: int = QUOTED) -> str:
    """'"4817"': a phrase in quotes, on one line, cut to `limit` characters."""
    line = " ".join(text.split())
    return f'"{line if len(line) <= limit else line[: limit - 1].rstrip() + "…"}"'


def share(value: float) -> str:
    """A share of attention: two decimals ('0.41'), or at most two significant digits below 0.01 ('0.00034',
    '0.000007'), so that a small share is not said as nothing; '0' for none."""
    if value >= 0.01 or value <= 0:
        return f"{max(value, 0.0):.2f}" if value > 0 else "0"
    return f"{value:.{1 - math.floor(math.log10(value))}f}".rstrip("0")


def view_name(view: ViewOutcome) -> str:
    """'T = 1' for a constant temperature, else the view's own label."""
    return view.label if view.temperature is None else f"T = {view.temperature:g}"


def view_names(views: Sequence[ViewOutcome]) -> str:
    """'T = 0.5, 1.5 and 2' when every view is a constant temperature, else each view by its name."""
    if all(view.temperature is not None for view in views):
        return "T = " + joined([f"{view.temperature:g}" for view in views])
    return joined([view_name(view) for view in views])


def token_words(token: str) -> str:
    """A token as a sentence quotes it: '"?"', or what it is when it has nothing visible ('a line break')."""
    if token.strip():
        return quoted(token.strip(), 20)
    return "a line break" if "\n" in token else "a space" if token else "an empty token"


def _answer_clause(verdict: CollapseVerdict) -> str:
    """'T = 1 answers "4817", T = 0.5, 1.5 and 2 do not'."""
    if verdict.answer is None:
        return "give the expected answer to see which temperature makes the model say it"
    said = quoted(verdict.answer)
    yes = [view for view in verdict.views if view.answers]
    no = [view for view in verdict.views if not view.answers]
    if not no:
        return f"{view_names(yes)} answers {said}" if len(yes) == 1 else f"every temperature tried answers {said}"
    if not yes:
        return f"{view_names(no)} does not answer {said}" if len(no) == 1 else f"no temperature tried answers {said}"
    return (f"{view_names(yes)} {'answers' if len(yes) == 1 else 'answer'} {said}, "
            f"{view_names(no)} {'does not' if len(no) == 1 else 'do not'}")


def collapse_sentence(verdict: CollapseVerdict) -> str:
    """The Collapse inspector's first sentence: at the reference view, the last token's attention on its recent
    window, on the fact and on the sink, and which views answer."""
    reference = verdict.views[verdict.reference]
    masses = reference.masses
    fact = verdict.fact
    recent = f"{share(masses.recent)} of its attention on the last {verdict.window} tokens"
    sink = f"{share(masses.sink)} on the first token (the sink)"
    head = f"At {view_name(reference)} the last token ({token_words(verdict.last_token)}) puts "
    if masses.fact is not None:
        head += f"{recent}, {share(masses.fact)} on the fact and {sink}"
    elif fact is not None:
        head += f"{recent} and {sink}; the fact lies in the part of the prompt that was left out"
    else:
        head += f"{recent} and {sink}; no fact was found to measure (mark one under the prompt)"
    return f"{head}; {_answer_clause(verdict)}."


def collapse_more_sentences(verdict: CollapseVerdict) -> list[str]:
    """What follows the first sentence: the views that answer where the reference does not, and how far the fact's
    share moves between the temperatures."""
    said = []
    reference = view_name(verdict.views[verdict.reference])
    helped = [verdict.views[index] for index in verdict.helped]
    if helped:
        verb = "answers" if len(helped) == 1 else "answer"
        said.append(f"A temperature helps here: {view_names(helped)} {verb} where {reference} does not.")
    likeliest = verdict.likeliest
    if likeliest is not None and len(verdict.views) > 1:
        best, base = verdict.views[likeliest], verdict.views[verdict.reference]
        against = ("no other temperature tried makes it likelier" if best is base
                   else f"against {base.said.answer_log_prob:.2f} at {reference}")
        said.append(f"The whole answer is likeliest at {view_name(best)} (log-probability "
                    f"{best.said.answer_log_prob:.2f}; {against}).")
    ends = verdict.fact_range
    if ends is not None:
        low, high = (verdict.views[index] for index in ends)
        if share(low.masses.fact) == share(high.masses.fact):
            said.append(f"The fact's share stays at {share(high.masses.fact)} at every temperature tried.")
        else:
            said.append(f"The fact's share runs from {share(low.masses.fact)} at {view_name(low)} to "
                        f"{share(high.masses.fact)} at {view_name(high)}.")
    return said


def fact_sentences(verdict: CollapseVerdict) -> list[str]:
    """Which span is the fact and how it was found; a marked phrase the prompt does not hold; a fact that lies in
    the recent window."""
    said = []
    if verdict.marked_missing is not None:
        said.append(f"{quoted(verdict.marked_missing)} is not in the prompt (in any case or spacing), so the fact is "
                    "found without it.")
    fact = verdict.fact
    if fact is None:
        return said
    where = (f"tokens {fact.tokens[0]:,} to {fact.tokens[1] - 1:,}" if fact.tokens[1] - fact.tokens[0] > 1
             else f"token {fact.tokens[0]:,}") if fact.kept else "in the part left out"
    said.append(f"The fact: {quoted(fact.text)}, {FACT_SOURCES[fact.source]} ({where}).")
    if verdict.fact_in_recent:
        said.append(f"Part of it lies in the last {verdict.window} tokens, where it counts as recent.")
    return said


def cut_sentence(cut: Cut) -> str:
    """How a prompt too long for the page was cut, said before the verdict."""
    if cut.question_tokens:
        return (f"The prompt is longer than the {cut.limit:,} tokens this page reads, so its middle was left out: "
                f"its first {cut.head_tokens:,} tokens and its question ({quoted(cut.question)}, "
                f"{cut.question_tokens:,} tokens) were kept, and the {cut.left_out_chars:,} characters between them "
                "dropped. Everything below is measured on that shorter prompt.")
    return (f"The prompt is longer than the {cut.limit:,} tokens this page reads, so it was cut to its first "
            f"{cut.head_tokens:,}: its last sentence ({quoted(cut.question)}) is too long to keep apart, so the "
            "question at its end is not in what was read.")


def said_words(view: ViewOutcome) -> str:
    """'answers', 'does not answer', or '' without an expected answer."""
    return "" if view.answers is None else "answers" if view.answers else "does not answer"


def odds_words(log_prob: float) -> str:
    """A log-probability as odds a reader says: 'about 1 in 210', 'less than 1 in a million'."""
    odds = math.exp(min(-log_prob, 700.0))
    if odds < 1.05:
        return "almost certain"
    if odds >= 1e6:
        return "less than 1 in a million"
    return f"about 1 in {odds:,.1f}" if odds < 10 else f"about 1 in {float(f'{odds:.2g}'):,.0f}"


def answer_log_prob_words(log_prob: float, tokens: int) -> str:
    """'log-probability of the whole answer (5 tokens): -5.34, about 1 in 210'."""
    return (f"log-probability of the whole answer ({tokens} token{'s' if tokens != 1 else ''}): {log_prob:.2f}, "
            f"{odds_words(log_prob)}")

