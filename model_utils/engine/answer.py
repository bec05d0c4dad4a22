"""Whether the model answers, at each temperature: the whole expected answer's log-probability, teacher-forced over
all its tokens, and a short greedy continuation, from one batched pass. The pass reads the prompt and the answer's
tokens (one batch row per view, each at its own logit multipliers, in-model); the logits at the prompt's last
position and at each answer token but the last give the answer's log-probability, and the key-value cache, cropped
back to the prompt, continues greedily from the prompt's last position. The prompt is the one the Collapse
inspector's report reads (engine.prompt.prompt_tokens, cut before the question), within the trained length less
ANSWER_ROOM, so the answer and the continuation fit. In isolated mode the model itself runs at T = 1 for every
view."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from model_utils.core.collapse import AnswerProbe, SaidAtView, TextPiece
from model_utils.core.errors import AnalysisError
from model_utils.core.limits import MODES, check_int, resolve_views
from model_utils.core.progress import TOKEN, OnProgress, Progress, report_progress
from model_utils.core.views import View
from model_utils.engine.generate import greedy_tokens
from model_utils.engine.prompt import prompt_tokens
from model_utils.models import LoadedModel

MAX_ANSWER_TOKENS = 32  # an expected answer is a word, a number or a short phrase
ANSWER_ROOM = MAX_ANSWER_TOKENS  # positions a collapse prompt leaves free within the trained length
SAID_TOKENS = 10  # enough for " 4817." and an end-of-turn mark; the page shows it whole
MAX_SAID_TOKENS = ANSWER_ROOM
CONTEXT_CHARS = 200  # the end of the prompt the answer is tokenized after, so it continues the prompt's last token


@dataclass(frozen=True, kw_only=True)
class AnswerRequest:
    """What `answer_probe` is asked for: the views (temperatures or schedules, on the model's own positions), the
    expected answer, the mode, the prompt's token limit (as the report's) and the greedy continuation's length."""

    temperatures: Sequence = (0.5, 1.0, 2.0)
    answer: str = ""
    mode: str = "in-model"
    max_tokens: int = 2048
    new_tokens: int = SAID_TOKENS


def collapse_limit(loaded: LoadedModel, max_tokens: int) -> int:
    """The tokens a Collapse inspector prompt may take: `max_tokens`, within the trained length less ANSWER_ROOM."""
    return max(2, min(max_tokens, loaded.max_positions - ANSWER_ROOM))


def answer_ids(loaded: LoadedModel, prompt: str, answer: str) -> list[int]:
    """The expected answer's tokens as they continue `prompt`: after a space where the prompt does not end in
    whitespace (as a writer would put it), tokenized after the prompt's last CONTEXT_CHARS characters so that the
    tokenizer splits it as it would in place (standing alone where the answer would merge into the prompt's last
    token). AnalysisError for an empty answer or one longer than MAX_ANSWER_TOKENS."""
    answer = answer.strip() if isinstance(answer, str) else ""
    if not answer:
        raise AnalysisError("the expected answer is empty; type the words the prompt should make the model say")
    written = answer if prompt[-1:].isspace() else " " + answer
    context = prompt[-CONTEXT_CHARS:]
    tokenizer = loaded.tokenizer
    before = tokenizer(context, add_special_tokens=False)["input_ids"]
    both = tokenizer(context + written, add_special_tokens=False)["input_ids"]
    ids = both[len(before) :] if both[: len(before)] == before else tokenizer(written, add_special_tokens=False)[
        "input_ids"]
    if len(ids) > MAX_ANSWER_TOKENS:
        raise AnalysisError(f"the expected answer is {len(ids)} tokens; give at most {MAX_ANSWER_TOKENS} (a word, a "
                            "number or a short phrase)")
    return list(ids)


def check_answer_request(request: AnswerRequest) -> list[View]:
    """The request's views, after every check that needs no model; AnalysisError naming the fix."""
    views = resolve_views(request.temperatures)
    if request.mode not in MODES:
        raise AnalysisError(f"mode must be one of {', '.join(MODES)}, got {request.mode!r}")
    check_int("new_tokens", request.new_tokens, 1, MAX_SAID_TOKENS)
    check_int("max_tokens", request.max_tokens, 2)
    return views


def answer_probe(loaded: LoadedModel, text: str, request: AnswerRequest,
                 progress: OnProgress | None = None) -> AnswerProbe:
    """The expected answer's log-probability and the greedy continuation at each view, after `text` as the Collapse
    inspector's report reads it (the module docstring)."""
    views = check_answer_request(request)
    started = time.perf_counter()
    answer = answer_ids(loaded, text, request.answer)
    prompt = prompt_tokens(loaded, text, collapse_limit(loaded, request.max_tokens), keep_question=True)
    isolated = request.mode == "isolated"
    rows = [View(1.0)] if isolated else views
    log_probs, said = forced_then_greedy(loaded, prompt.ids, answer, rows, request.new_tokens, progress)
    results = tuple(SaidAtView(label=view.label, temperature=view.temperature,
                               answer_log_prob=float(log_probs[row].sum()),
                               token_log_probs=tuple(float(v) for v in log_probs[row]),
                               continuation=text_pieces(loaded, said[row]))
                    for view, row in ((view, 0 if isolated else index) for index, view in enumerate(views)))
    decode = loaded.tokenizer.decode
    return AnswerProbe(answer=request.answer.strip(), answer_tokens=tuple(decode([i]) for i in answer),
                       prompt_tokens=len(prompt.ids), new_tokens=request.new_tokens, views=results,
                       isolated=isolated, seconds=time.perf_counter() - started)


def forced_then_greedy(loaded: LoadedModel, ids: list[int], answer: list[int], views: Sequence[View], steps: int,
                       progress: OnProgress | None = None) -> tuple[np.ndarray, list[list[int]]]:
    """([rows, answer] float64 log-probability of each answer token, teacher-forced, per row its greedy tokens after
    `ids`, up to `steps`, ending at its first special token): one pass over ids + answer with a key-value cache, which
    is then cropped back to `ids` for the greedy steps (where a cache cannot be cropped, the greedy tokens come from
    a pass of their own)."""
    n, size = len(ids), len(answer)
    if n + max(size, steps) > loaded.max_positions:
        raise AnalysisError(f"the prompt ({n:,} tokens) and its answer or continuation run past the model's trained "
                            f"length of {loaded.max_positions:,}; shorten the prompt")
    multipliers = torch.tensor(np.stack([view.multipliers(n + max(size, steps)) for view in views]),
                               dtype=torch.float32, device=loaded.device)  # [rows, positions]
    tokens = torch.tensor([ids + answer] * len(views), device=loaded.device)  # [rows, n + size]
    with torch.inference_mode():
        output = loaded.model(input_ids=tokens, use_cache=True, attention_multipliers=multipliers[:, : n + size],
                              logits_to_keep=size + 1)
        logits = output.logits.float()  # [rows, size + 1, vocab]: positions n - 1 .. n + size - 1
        targets = torch.tensor(answer, device=logits.device).expand(len(views), -1)[..., None]
        forced = torch.log_softmax(logits[:, :size], dim=-1).gather(-1, targets)[..., 0].double().cpu().numpy()
        report_progress(progress, Progress(stage=TOKEN, fraction=1 / steps, step=1, steps=steps))
        if not _cropped(output.cache, size, n):
            return forced, greedy_tokens(loaded, ids, views, steps, stop=special_stop(loaded), progress=progress)[1]
        said = _greedy_steps(loaded, output.cache, logits[:, 0], multipliers, n, steps, progress)
    return forced, said


def _cropped(cache, size: int, n: int) -> bool:
    """Drop the answer's `size` positions from `cache` (transformers' DynamicCache.crop takes the count to remove as
    a negative number); whether it now holds exactly the prompt's n positions."""
    try:
        cache.crop(-size)
        return cache.get_seq_length() == n
    except (AttributeError, NotImplementedError, ValueError, RuntimeError):
        return False


def _greedy_steps(loaded: LoadedModel, cache, first: torch.Tensor, multipliers: torch.Tensor, n: int, steps: int,
                  progress: OnProgress | None) -> list[list[int]]:
    """Greedy tokens from `first` [rows, vocab] (the logits at the prompt's last position) through `cache`, which
    holds the prompt's n positions; a row ends at its first special token."""
    stop = special_stop(loaded)
    tokens = first.argmax(dim=-1, keepdim=True)  # [rows, 1]
    said = [[int(token)] for token in tokens[:, 0]]
    for step in range(1, steps):
        if all(stop(row) for row in said):
            break
        output = loaded.model(input_ids=tokens, cache=cache, use_cache=True,
                              attention_multipliers=multipliers[:, n + step - 1 : n + step], logits_to_keep=1)
        cache, tokens = output.cache, output.logits[:, -1].argmax(dim=-1, keepdim=True)
        for row, token in zip(said, tokens[:, 0], strict=True):
            if not stop(row):
                row.append(int(token))
        report_progress(progress, Progress(stage=TOKEN, fraction=(step + 1) / steps, step=step + 1, steps=steps))
    return said


def special_stop(loaded: LoadedModel):
    """A row's stop test: its last token is a special one (an end of text or of a turn)."""
    special = set(loaded.tokenizer.all_special_ids)
    return lambda row: bool(row) and row[-1] in special


def text_pieces(loaded: LoadedModel, ids: list[int]) -> tuple[TextPiece, ...]:
    """A continuation as runs of plain text (each run decoded whole, so a character split over tokens stays whole)
    and special tokens, each on its own."""
    special = set(loaded.tokenizer.all_special_ids)
    pieces, run = [], []

    def flush() -> None:
        if run:
            pieces.append(TextPiece(text=loaded.tokenizer.decode(run, clean_up_tokenization_spaces=False)))
            run.clear()

    for token in ids:
        if token in special:
            flush()
            pieces.append(TextPiece(text=loaded.tokenizer.decode([token]), special=True))
        else:
            run.append(token)
    flush()
    return tuple(pieces)
