"""A text as the tokens a pass reads, with each token's characters in the text: cut at the end to a token limit, or
(for a prompt that asks a question at its end) cut before its question, so that the head of the prompt and its
question are kept and the middle is left out. The characters come from the tokenizer's offsets mapping where it has
one, else from each token's decoded text found in the prompt in order."""

from __future__ import annotations

from dataclasses import dataclass

from model_utils.core.collapse import question_start, sentence_start
from model_utils.core.errors import AnalysisError
from model_utils.core.report import Cut
from model_utils.models import LoadedModel

Offsets = list[tuple[int, int]]
ALIGN_REACH = 64  # characters a decoded token may lie past the previous one (whitespace the decoder dropped)


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """Token ids, each token's [start, end) characters in the text, whether the text was cut, and how (a cut that
    keeps the question; None for a cut at the end or none)."""

    ids: list[int]
    offsets: Offsets
    truncated: bool
    cut: Cut | None = None


def encode(loaded: LoadedModel, text: str, special: bool) -> tuple[list[int], Offsets]:
    """Token ids of `text` (with the tokenizer's special tokens when `special`) and their characters in it."""
    tokenizer = loaded.tokenizer
    try:
        encoded = tokenizer(text, add_special_tokens=special, return_offsets_mapping=True)
        return list(encoded["input_ids"]), [(int(start), int(end)) for start, end in encoded["offset_mapping"]]
    except (NotImplementedError, ValueError, TypeError, KeyError):  # a slow tokenizer has no offsets mapping
        ids = list(tokenizer(text, add_special_tokens=special)["input_ids"])
        return ids, decoded_offsets(loaded, text, ids)


def decoded_offsets(loaded: LoadedModel, text: str, ids: list[int]) -> Offsets:
    """Each token's characters in `text`, found from its decoded text in order (a token whose text is not found
    within ALIGN_REACH characters, such as a special token, gets an empty span where the search stands)."""
    offsets, cursor = [], 0
    for token_id in ids:
        piece = loaded.tokenizer.decode([token_id], clean_up_tokenization_spaces=False)
        key = piece.strip() or piece
        found = text.find(key, cursor, cursor + ALIGN_REACH + len(key)) if key else -1
        if found < 0:
            offsets.append((cursor, cursor))
            continue
        start = found if piece == key else max(cursor, found - (len(piece) - len(piece.lstrip())))
        offsets.append((start, found + len(key)))
        cursor = found + len(key)
    return offsets


def _head(loaded: LoadedModel, text: str, max_tokens: int) -> tuple[list[int], Offsets, bool]:
    """The first `max_tokens` tokens of `text` and whether they are all of it. Tokenizes a growing prefix, so 1 MB of
    text costs what the kept tokens cost, not minutes."""
    prefix_chars = max_tokens * 8
    while True:
        ids, offsets = encode(loaded, text[:prefix_chars], special=True)
        if len(ids) > max_tokens or prefix_chars >= len(text):
            break
        prefix_chars *= 4
    whole = len(ids) <= max_tokens and prefix_chars >= len(text)
    return ids[:max_tokens], offsets[:max_tokens], whole


def prompt_tokens(loaded: LoadedModel, text: str, max_tokens: int, keep_question: bool = False) -> Prompt:
    """`text` as at most `max_tokens` tokens (Prompt). A longer text is cut at its end, or with `keep_question`
    before its question (core.collapse.question_start): its head, then its question, which may take at most half
    of the tokens (a longer one is cut at the end like any text, and the Cut says so with question_tokens = 0)."""
    if not isinstance(text, str) or not text.strip():
        raise AnalysisError("the text is empty; type or paste some text to analyse")
    ids, offsets, whole = _head(loaded, text, max_tokens)
    prompt = Prompt(ids=ids, offsets=offsets, truncated=not whole)
    if not whole and keep_question:
        prompt = _keep_question(loaded, text, max_tokens, prompt)
    if len(prompt.ids) < 2:
        raise AnalysisError("the text is a single token; attention needs at least two tokens")
    return prompt


def _keep_question(loaded: LoadedModel, text: str, max_tokens: int, cut_at_end: Prompt) -> Prompt:
    start = question_start(text)
    lead = len(text[:start].rstrip())  # the question keeps the line break or space before it
    question_ids, question_offsets = encode(loaded, text[lead:], special=False)
    if start == 0 or not question_ids or len(question_ids) > max_tokens // 2:
        end = cut_at_end.offsets[-1][1] if cut_at_end.offsets else 0
        cut = Cut(limit=max_tokens, head_tokens=len(cut_at_end.ids), question_tokens=0, question_start=start,
                  left_out_chars=len(text) - end, question=text[start:].strip())
        return Prompt(ids=cut_at_end.ids, offsets=cut_at_end.offsets, truncated=True, cut=cut)
    head_ids, head_offsets, _ = _head(loaded, text[:lead], max_tokens - len(question_ids))
    keep = _whole_sentences(text, head_offsets)
    head_ids, head_offsets = head_ids[:keep], head_offsets[:keep]
    head_end = max((end for _, end in head_offsets), default=0)
    cut = Cut(limit=max_tokens, head_tokens=len(head_ids), question_tokens=len(question_ids), question_start=start,
              left_out_chars=lead - head_end, question=text[start:].strip())
    shifted = [(left + lead, right + lead) for left, right in question_offsets]
    return Prompt(ids=head_ids + question_ids, offsets=head_offsets + shifted, truncated=True, cut=cut)


def _whole_sentences(text: str, offsets: Offsets) -> int:
    """How many of the head's tokens to keep so that it ends with a whole sentence (its last kept sentence's mark),
    not in the middle of one; all of them where that would leave fewer than half."""
    end = max((right for _, right in offsets), default=0)
    boundary = len(text[: sentence_start(text, end)].rstrip())
    keep = sum(1 for _, right in offsets if right <= boundary)
    return keep if keep >= len(offsets) // 2 else len(offsets)
