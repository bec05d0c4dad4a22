"""The cut-context reference pass (core.records.cut_context): each position p >= L of a long text predicted from at
most its last L tokens, in windows of L tokens at T = 1, `stride` positions scored per window (the last position's
prediction, of the token just after the window, included). A window reads what a fresh read of its text would: the
tokens the tokenizer puts before a text (Gemma's BOS; none for SmolLM2) first, then the text up to the position, L
tokens in all, as the full pass, which starts with them, reads its first L. (n - L) / stride passes of L tokens; each
window is cached on its own, keyed by the tokens it reads, so an interrupted run resumes and a sweep, a tune and a
rerun share what is done."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model_utils.core.errors import AnalysisError
from model_utils.core.files import write_atomic
from model_utils.core.records.cut_context import CutContextPass
from model_utils.engine.analyze import AnalysisRequest, analyze_tokens
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.models import LoadedModel

FORMAT = 1  # of a cached window: bump when a window's numbers would come out different
STRIDE_PARTS = 8  # the default stride is an eighth of the trained length: a position reads 7/8 of it at least


@dataclass(frozen=True, kw_only=True)
class CutSettings:
    """Whether and how a sweep or a tune measures the cut-context reference: the stride (None: the trained length
    // STRIDE_PARTS: 1,024 for the bundled model, 4,096 for Gemma 3 270M) and the window cache."""

    folder: Path
    stride: int | None = None

    def stride_for(self, trained_length: int) -> int:
        return self.stride or max(1, trained_length // STRIDE_PARTS)


def windows(n_tokens: int, trained_length: int, stride: int) -> list[tuple[int, int]]:
    """(first, stop) positions each window scores: positions L .. n - 2 in blocks of `stride`. The window of a block
    is the L tokens that end at its last position, stop - 1, so position p reads p - (stop - L) + 1 tokens."""
    if stride < 1 or stride > trained_length:
        raise AnalysisError(f"the cut-context stride must be 1 to the trained length ({trained_length:,}), got "
                            f"{stride}")
    return [(first, min(n_tokens - 1, first + stride)) for first in range(trained_length, n_tokens - 1, stride)]


def lead_tokens(tokenizer) -> tuple[int, ...]:
    """The token ids a tokenizer puts before every text it encodes with its special tokens (Gemma 3: its BOS; the
    bundled SmolLM2: none), found by encoding a sample with and without them."""
    sample = "Attention, temperature."
    plain = tokenizer(sample, add_special_tokens=False)["input_ids"]
    full = tokenizer(sample, add_special_tokens=True)["input_ids"]
    for start in range(len(full) - len(plain) + 1):
        if list(full[start : start + len(plain)]) == list(plain):
            return tuple(int(i) for i in full[:start])
    return ()


def window_tokens(ids: Sequence[int], stop: int, trained_length: int, lead: Sequence[int]) -> list[int]:
    """What the window that ends before `stop` reads: the lead, then the text's last trained_length - len(lead)
    tokens before `stop`, trained_length tokens in all."""
    return [*lead, *ids[stop - trained_length + len(lead) : stop]]


def window_nll(loaded: LoadedModel, ids: Sequence[int], first: int, stop: int, trained_length: int,
               lead: Sequence[int] = ()) -> np.ndarray:
    """NLL of positions first .. stop - 1 from one T = 1 pass over window_tokens (the lead, then the text up to
    stop): the pass's own position NLL, and its last position's log-probabilities for token `stop`."""
    start = stop - trained_length  # where the window's position 0 would lie in the text without a lead
    request = AnalysisRequest(temperatures=[1.0], max_tokens=trained_length, trained_length=trained_length,
                              loss_span=(first - start, trained_length - 1))  # the output layer on those only
    result = analyze_tokens(loaded, window_tokens(ids, stop, trained_length, lead), request).results[0]
    inside = result.position_nll[first - start : trained_length - 1]
    return np.append(inside, -float(result.last_log_probs[ids[stop]]))


def cut_context_pass(loaded: LoadedModel, ids: Sequence[int], trained_length: int, stride: int,
                     cache_dir: Path, *, on_window: Callable[[int, int], None] | None = None,
                     fingerprint: str | None = None) -> CutContextPass:
    """The reference of `ids` (a text cut as its sweep or tune cuts it, the tokenizer's lead first), each window from
    `cache_dir` where it is, else computed and saved there at once. `on_window(i, count)` hears of each window
    computed."""
    lead = lead_tokens(loaded.tokenizer)
    if tuple(ids[: len(lead)]) != lead:
        raise AnalysisError("the text's tokens do not start with what the tokenizer puts before a text: tokenize it "
                            "with its special tokens, as a sweep does")
    if stride > trained_length - len(lead):
        raise AnalysisError(f"the cut-context stride must leave the window room for its lead: at most "
                            f"{trained_length - len(lead):,}, got {stride:,}")
    if len(ids) <= trained_length + 1:
        raise AnalysisError(f"the text has {len(ids):,} tokens: no position past the trained length "
                            f"({trained_length:,}) to score")
    blocks = windows(len(ids), trained_length, stride)
    cache_dir.mkdir(parents=True, exist_ok=True)
    fingerprint = fingerprint or model_fingerprint(loaded, portable=True)
    parts, seconds = [], 0.0
    for index, (first, stop) in enumerate(blocks):
        read = window_tokens(ids, stop, trained_length, lead)
        path = cache_dir / f"{_key(fingerprint, read, ids[stop], stop - first)}.json"
        if not path.is_file():
            if on_window is not None:
                on_window(index, len(blocks))
            started = time.perf_counter()
            nll = window_nll(loaded, ids, first, stop, trained_length, lead)
            write_atomic(path, json.dumps({"format": FORMAT, "first": first, "stop": stop,
                                           "seconds": round(time.perf_counter() - started, 2),
                                           "nll": [round(float(v), 5) for v in nll]}))
        cached = json.loads(path.read_text())
        parts.append(np.asarray(cached["nll"], dtype=np.float64))
        seconds += cached["seconds"]
    return CutContextPass(trained_length=trained_length, stride=stride, n_tokens=len(ids),
                          min_context=trained_length - stride + 1, windows=len(blocks), lead=len(lead),
                          position_nll=np.concatenate(parts), seconds=round(seconds, 1))


def _key(fingerprint: str, read: Sequence[int], target: int, scored: int) -> str:
    """A window's cache key: the model, the tokens it reads and the target after them, and how many it scores (a
    window without a lead reads what it read before leads were, so its key and its cached numbers stay)."""
    tokens = np.asarray([*read, target], dtype=np.int64).tobytes()
    parts = [str(FORMAT), fingerprint, hashlib.sha256(tokens).hexdigest(), str(scored)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]
