"""What the Collapse inspector measures on one prompt, in numbers: where the prompt's question starts (a prompt too
long for the page is cut before it), which span of the prompt is the fact (one the user marks, else the expected
answer's first appearance, else the earlier sentence that shares most of the question's words) and which tokens hold
it, the last query's attention on its recent window, the fact and the sink at each view, and what the model says
there (`AnswerProbe`, filled by engine/answer.py). Standard library and numpy only: the verdicts read these
records, and a page finds a span without torch."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from model_utils.core.report import Report, TemperatureResult

QUESTION_REACH = 400  # a "?" this near the prompt's end marks its question (a cue such as "Answer:" may follow it)
# The end of a sentence (its mark, closing quotes or brackets, whitespace) or a line break: where a sentence starts.
_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*\s+|\n\s*")
_WORD = re.compile(r"\w+")
# Words a question shares with any sentence: they say nothing about which sentence holds the fact.
QUESTION_STOP_WORDS = frozenset((
    "a", "an", "and", "answer", "are", "as", "at", "be", "by", "can", "could", "did", "do", "does", "for",
    "from", "had", "has", "have", "he", "her", "his", "how", "i", "in", "is", "it", "its", "me", "my", "no",
    "not", "of", "on", "or", "our", "question", "she", "should", "so", "that", "the", "their", "them", "there",
    "these", "they", "this", "those", "to", "was", "we", "were", "what", "when", "where", "which", "who",
    "whom", "whose", "why", "will", "with", "would", "you", "your"))


class FactSource(StrEnum):
    """How the fact was found."""

    MARKED = "marked"  # the phrase the user marked
    ANSWER = "answer"  # the expected answer's first appearance in the prompt
    QUESTION = "question"  # the earlier sentence sharing most of the question's words


@dataclass(frozen=True, kw_only=True)
class FactSpan:
    """The fact: characters [chars[0], chars[1]) of the prompt, held by the analysed tokens [tokens[0], tokens[1])
    ((0, 0) when the cut left it out)."""

    source: FactSource
    text: str  # as it stands in the prompt
    chars: tuple[int, int]
    tokens: tuple[int, int]

    @property
    def kept(self) -> bool:
        """Whether the analysed prompt holds the fact (a cut can leave it out)."""
        return self.tokens[1] > self.tokens[0]


@dataclass(frozen=True, kw_only=True)
class FactSearch:
    """The fact found (None: none), and the phrase the user marked where the prompt does not hold it."""

    fact: FactSpan | None
    marked_missing: str | None = None


@dataclass(frozen=True, kw_only=True)
class LastQueryMasses:
    """Where the last query's attention goes at one view: the sink (key 0), the recent window (its last `window`
    keys), the fact (its keys outside those two) and everything else; they add up to 1. Means over layers and heads,
    and per layer (mean over heads). fact is None without a fact in the analysed tokens."""

    label: str
    temperature: float | None
    sink: float
    recent: float
    fact: float | None
    elsewhere: float
    by_layer: dict[str, np.ndarray]  # "sink", "recent", "fact" (where there is one), "elsewhere" -> [layer]


@dataclass(frozen=True, kw_only=True)
class TextPiece:
    """A run of a continuation: plain text, or one special token (an end-of-turn mark such as <|im_end|>)."""

    text: str
    special: bool = False


@dataclass(frozen=True, kw_only=True)
class SaidAtView:
    """What the model does after the prompt at one view: the whole expected answer's log-probability, teacher-forced
    (the sum of its tokens' log-probabilities, each given the prompt and the answer's tokens before it), and its
    greedy continuation."""

    label: str
    temperature: float | None
    answer_log_prob: float
    token_log_probs: tuple[float, ...]
    continuation: tuple[TextPiece, ...]

    @property
    def text(self) -> str:
        """The continuation's plain text, special tokens left out."""
        return "".join(piece.text for piece in self.continuation if not piece.special)


@dataclass(frozen=True, kw_only=True)
class AnswerProbe:
    """The expected answer, as the tokens that continue the prompt, and what the model does with it at each view."""

    answer: str
    answer_tokens: tuple[str, ...]
    prompt_tokens: int
    new_tokens: int  # the greedy continuation's length at most (it stops at an end-of-text token)
    views: tuple[SaidAtView, ...]
    isolated: bool  # isolated mode: every view is the model's own at T = 1
    seconds: float

    @property
    def answer_probabilities(self) -> list[float]:
        """Per view, the probability of the whole answer (exp of its log-probability)."""
        return [math.exp(view.answer_log_prob) for view in self.views]


def question_start(text: str) -> int:
    """Where the prompt's question starts, as a character offset: the sentence (or line) holding the last "?" when
    that lies within QUESTION_REACH characters of the end (so a cue after it, "Answer: The password is", stays with
    it), else the last sentence. A sentence starts after a sentence mark and whitespace, or after a line break."""
    body = text.rstrip()
    if not body:
        return 0
    mark = body.rfind("?")
    end = mark if mark >= 0 and len(body) - mark <= QUESTION_REACH else len(body) - 1
    return sentence_start(body, end)


def sentence_start(text: str, position: int) -> int:
    """The start of the sentence holding character `position` of `text`."""
    start = 0
    for boundary in _BOUNDARY.finditer(text, 0, position):
        start = boundary.end()
    return start


def sentences(text: str, stop: int) -> list[tuple[int, int]]:
    """[start, end) of each sentence of text[:stop], its surrounding whitespace left out."""
    spans, start = [], 0
    for boundary in [*_BOUNDARY.finditer(text, 0, stop), None]:
        end = stop if boundary is None else boundary.end()
        piece = text[start:end]
        if piece.strip():
            left = start + len(piece) - len(piece.lstrip())
            spans.append((left, start + len(piece.rstrip())))
        start = end
    return spans


def phrase_pattern(phrase: str) -> re.Pattern:
    """A phrase as typed, found in any case and across any run of whitespace (a pasted line break), and as a whole
    word where it starts or ends with a letter or digit (the answer "Mar" is not found inside "Marigold")."""
    words = phrase.split()
    body = r"\s+".join(re.escape(word) for word in words)
    before = r"(?<!\w)" if words[0][0].isalnum() else ""
    after = r"(?!\w)" if words[-1][-1].isalnum() else ""
    return re.compile(before + body + after, re.IGNORECASE)


def question_words(question: str) -> set[str]:
    """The question's own words: lower-cased, the QUESTION_STOP_WORDS left out."""
    return {word for word in (match.lower() for match in _WORD.findall(question)) if word not in QUESTION_STOP_WORDS}


def question_sentence(text: str, asked_at: int) -> tuple[int, int] | None:
    """The earliest sentence before the question (which starts at `asked_at`) holding the most of the question's
    words, at least half of them; None when none does."""
    wanted = question_words(text[asked_at:])
    if not wanted:
        return None
    best, best_score = None, max(1, math.ceil(len(wanted) / 2)) - 1
    for start, end in sentences(text, asked_at):
        score = len(wanted & {word.lower() for word in _WORD.findall(text[start:end])})
        if score > best_score:
            best, best_score = (start, end), score
    return best


def token_span(offsets: list[tuple[int, int]], chars: tuple[int, int]) -> tuple[int, int]:
    """[first, last + 1) of the tokens whose characters overlap `chars` ((0, 0): none, e.g. a span the cut left out).
    Tokens without characters (a special token) overlap nothing."""
    start, end = chars
    hits = [index for index, (left, right) in enumerate(offsets) if right > left and right > start and left < end]
    return (hits[0], hits[-1] + 1) if hits else (0, 0)


def find_fact(text: str, offsets: list[tuple[int, int]], *, marked: str = "", answer: str = "") -> FactSearch:
    """The fact of the prompt `text` (analysed as tokens with character `offsets`): the `marked` phrase where the text
    holds it, else the expected `answer`'s first appearance, else the earlier sentence sharing most of the question's
    words (question_sentence). A marked phrase the text does not hold is returned as `marked_missing`."""
    missing = None
    for source, phrase in ((FactSource.MARKED, marked.strip()), (FactSource.ANSWER, answer.strip())):
        if not phrase:
            continue
        found = phrase_pattern(phrase).search(text)
        if found is not None:
            return FactSearch(fact=_span(text, offsets, source, found.span()), marked_missing=missing)
        if source is FactSource.MARKED:
            missing = phrase
    chars = question_sentence(text, question_start(text))
    fact = None if chars is None else _span(text, offsets, FactSource.QUESTION, chars)
    return FactSearch(fact=fact, marked_missing=missing)


def _span(text: str, offsets: list[tuple[int, int]], source: FactSource, chars: tuple[int, int]) -> FactSpan:
    return FactSpan(source=source, text=text[chars[0] : chars[1]], chars=chars, tokens=token_span(offsets, chars))


def last_query_masses(result: TemperatureResult, window: int, fact: FactSpan | None) -> LastQueryMasses:
    """The last query's sink, recent, fact and other mass at one view (LastQueryMasses). The recent window is the
    keys max(1, n - window) .. n - 1, as core.statistics defines it for the last query; the fact counts only its keys
    outside the sink and that window, so the four parts add up to 1."""
    rows = result.last_rows.astype(np.float64)  # [layer, head, n]
    n = rows.shape[-1]
    recent_from = max(1, n - window)
    parts = {"sink": rows[..., 0], "recent": rows[..., recent_from:].sum(axis=-1)}
    between = rows[..., 1:recent_from].sum(axis=-1)
    if fact is not None and fact.kept:
        start, stop = max(1, fact.tokens[0]), min(recent_from, fact.tokens[1])
        parts["fact"] = rows[..., start:stop].sum(axis=-1) if stop > start else np.zeros_like(between)
        between = between - parts["fact"]
    parts["elsewhere"] = between
    by_layer = {name: values.mean(axis=-1) for name, values in parts.items()}
    means = {name: float(values.mean()) for name, values in parts.items()}
    return LastQueryMasses(label=result.label, temperature=result.temperature, sink=means["sink"],
                           recent=means["recent"], fact=means.get("fact"), elsewhere=means["elsewhere"],
                           by_layer=by_layer)


def report_masses(report: Report, fact: FactSpan | None) -> list[LastQueryMasses]:
    """last_query_masses at every view of `report`, on its own recent window."""
    return [last_query_masses(result, report.window, fact) for result in report.results]


def fact_in_recent(report: Report, fact: FactSpan | None) -> bool:
    """Whether any of the fact's tokens lie in the last query's recent window (where they count as recent)."""
    return fact is not None and fact.kept and fact.tokens[1] > max(1, report.n_tokens - report.window)
