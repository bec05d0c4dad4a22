"""Where a retrieval probe puts its tokens: a passage planted early in a filler text and repeated `distance` tokens
later, against the same text with nothing planted (the filler runs on where the copy was), so the two differ only in
the copy's tokens and the repeat sits on the same positions; a view that computes each position the same whatever
the text's length (`reads_by_position`) reads each text once and every repeat as its continuation. The layout is
drawn in docs/ARCHITECTURE.md (The retrieval probe). Standard library only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model_utils.core.errors import AnalysisError
from model_utils.core.views import View

LEAD_TOKENS = 32  # filler before the planted copy: the first token (the sink) and the text's opening are never copied
PASSAGE_TOKENS = 256  # a built-in passage's length: long enough for a stable mean loss, short against the distances
MIN_PASSAGE_TOKENS = 2  # the repeat's first token is not scored (filler comes before it), so at least one is


@dataclass(frozen=True, kw_only=True)
class Layout:
    """One probe's token positions: `lead` filler tokens, the copy, then the repeat `distance` tokens after the
    copy's start (so every repeat token's own earlier copy is exactly `distance` tokens back)."""

    lead: int
    passage: int  # the passage's tokens
    distance: int

    @property
    def copy(self) -> tuple[int, int]:
        return self.lead, self.lead + self.passage

    @property
    def repeat(self) -> tuple[int, int]:
        return self.lead + self.distance, self.lead + self.distance + self.passage

    @property
    def n_tokens(self) -> int:
        return self.lead + self.distance + self.passage

    @property
    def scored(self) -> tuple[int, int]:
        """Positions whose next-token loss counts: each predicts a repeat token after the repeat's first."""
        start, stop = self.repeat
        return start, stop - 1


def check_layout(layout: Layout, filler_tokens: int, trained_length: int, beyond_trained: bool) -> None:
    """Refuse a probe that cannot be built or was not allowed, with the fix in the message (AnalysisError)."""
    passage, distance = layout.passage, layout.distance
    if passage < MIN_PASSAGE_TOKENS:
        raise AnalysisError(f"the passage is {'empty' if passage == 0 else 'a single token'}; give a passage of "
                            f"at least {MIN_PASSAGE_TOKENS} tokens")
    if distance < passage:
        raise AnalysisError(f"the passage ({passage:,} tokens) is longer than the distance {distance:,}: its copy "
                            f"would run into its repeat; give a distance of at least {passage:,} tokens or a "
                            "shorter passage")
    if layout.lead + distance > filler_tokens:
        raise AnalysisError(f"a distance of {distance:,} needs {layout.lead + distance:,} tokens of filler before "
                            f"the repeat and the filler has {filler_tokens:,}; give a distance of at most "
                            f"{filler_tokens - layout.lead:,} or a longer filler text")
    if layout.n_tokens > trained_length and not beyond_trained:
        raise AnalysisError(f"a distance of {distance:,} runs the text to {layout.n_tokens:,} tokens, past the "
                            f"model's trained length of {trained_length:,}; give a distance of at most "
                            f"{trained_length - layout.lead - passage:,}, or allow running past the trained length "
                            "(--beyond-trained on the command line, the checkbox on the page)")


def planted_ids(filler: Sequence[int], passage: Sequence[int], layout: Layout) -> list[int]:
    """The filler with the passage written over it at the copy and again at the repeat."""
    start, stop = layout.copy
    return [*filler[:start], *passage, *filler[stop : layout.repeat[0]], *passage]


def unplanted_ids(filler: Sequence[int], passage: Sequence[int], layout: Layout) -> list[int]:
    """The reference: the filler unbroken up to the repeat, then the passage (read for the first time)."""
    return [*filler[: layout.repeat[0]], *passage]


def reads_by_position(view: View, lengths: Sequence[int]) -> bool:
    """Whether `view` computes every position of a text of each of `lengths` tokens as it does in a text of the
    longest (so one pass over the longest serves the shorter ones): its logit multipliers and a remapping's far
    positions are the same on the shared positions, and its recipe is not dynamic NTK, whose frequencies follow the
    whole pass's length. False for a schedule whose parameter is the text's length."""
    if view.rope is not None and view.rope.rope_type == "dynamic":
        return False
    longest = max(lengths)
    whole = view.multipliers(longest)
    if not all(np.array_equal(view.multipliers(n), whole[:n]) for n in lengths):
        return False
    if view.rope is None or not view.rope.remaps:
        return True
    far = view.rope.far_positions(longest)
    return all(np.array_equal(mine, theirs[:n]) for n in lengths
               for mine, theirs in zip(view.rope.far_positions(n), far, strict=True))


def planted_prefix(filler: Sequence[int], passage: Sequence[int], lead: int, tokens: int) -> list[int]:
    """The first `tokens` tokens every planted text with a repeat at or past them shares: the lead, the copy, then
    the filler (planted_ids of any layout with repeat[0] >= tokens, cut there)."""
    return [*filler[:lead], *passage, *filler[lead + len(passage) : tokens]]
