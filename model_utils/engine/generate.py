"""What the model says at each temperature: the top next tokens after a text and a greedy continuation generated
with the temperature inside every layer at every step. One batch row per temperature (in-model mode), stepped
together through the model's own key-value cache; the attention function scales each row's queries by its logit
multiplier 1 / T (`attention_multipliers`), so at T = 1 the continuation is transformers' own greedy decoding. In
isolated mode the temperature changes only the statistics, never what the model computes, so the output is T = 1's
for every temperature and says so."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from model_utils.core.errors import AnalysisError
from model_utils.core.limits import MAX_TOKENS, MODES, check_int, resolve_temperatures
from model_utils.core.progress import TOKEN, OnProgress, Progress, report_progress
from model_utils.core.schedules import Schedule
from model_utils.engine.analyze import tokenize, top_tokens
from model_utils.models import LoadedModel

MAX_NEW_TOKENS = 64  # a few sentences: enough to read over-softening as words, short enough for a page request
TOP_NEXT = 5


@dataclass(frozen=True, kw_only=True)
class GenerationRequest:
    """What `generate_continuations` is asked for: numbers T (no schedules: a continuation has no fixed length),
    up to MAX_NEW_TOKENS greedy tokens after the text cut to `max_tokens`."""

    temperatures: Sequence = (0.5, 1.0, 2.0)
    max_new_tokens: int = 32
    mode: str = "in-model"
    max_tokens: int = 2048


@dataclass(frozen=True, kw_only=True)
class Continuation:
    """What the model says at one temperature."""

    temperature: float
    top_next: list[dict]  # TOP_NEXT {"token", "prob"} after the text, at this temperature
    token_ids: list[int]  # the greedy continuation, ending at the end-of-text token if it came
    text: str
    first_logits: np.ndarray  # [vocab] float32: the next-token logits after the text (step 1)

    def to_dict(self) -> dict:
        return {"temperature": self.temperature, "top_next": self.top_next, "token_ids": self.token_ids,
                "text": self.text}


@dataclass(frozen=True, kw_only=True)
class Generation:
    """One continuation per temperature after the same text."""

    model: str
    mode: str
    prompt_tokens: int
    truncated: bool  # the text was cut to max_tokens
    continuations: list[Continuation]
    seconds: float
    note: str | None  # isolated mode: every continuation is T = 1's

    def to_dict(self) -> dict:
        return {"model": self.model, "mode": self.mode, "prompt_tokens": self.prompt_tokens,
                "truncated": self.truncated, "seconds": self.seconds, "note": self.note,
                "continuations": [continuation.to_dict() for continuation in self.continuations]}


def check_generation(loaded: LoadedModel, request: GenerationRequest) -> list[float]:
    """The request's temperatures, after every check that needs no text; AnalysisError naming the fix."""
    temperatures = resolve_temperatures(request.temperatures)
    if any(isinstance(entry, Schedule) for entry in temperatures):
        raise AnalysisError("a continuation takes constant temperatures only: a schedule's multiplier depends on a "
                            "length the continuation does not have yet")
    if request.mode not in MODES:
        raise AnalysisError(f"mode must be one of {', '.join(MODES)}, got {request.mode!r}")
    check_int("max_new_tokens", request.max_new_tokens, 1, MAX_NEW_TOKENS)
    check_int("max_tokens", request.max_tokens, 2, MAX_TOKENS)
    return [float(t) for t in temperatures]


def generate_continuations(loaded: LoadedModel, text: str, request: GenerationRequest,
                           progress: OnProgress | None = None) -> Generation:
    """Check, tokenize, and generate one greedy continuation per temperature (see the module docstring)."""
    temperatures = check_generation(loaded, request)
    ids, truncated = tokenize(loaded, text, request.max_tokens)
    total = len(ids) + request.max_new_tokens
    if total > loaded.max_positions:
        raise AnalysisError(f"the text ({len(ids):,} tokens) and {request.max_new_tokens} new tokens run past the "
                            f"model's trained length of {loaded.max_positions:,}; shorten the text or ask for fewer "
                            "new tokens (a continuation is generated only within the trained length)")
    started = time.perf_counter()
    rows = [1.0] if request.mode == "isolated" else temperatures  # isolated: the model itself runs at T = 1
    first, generated = _greedy(loaded, ids, rows, request.max_new_tokens, progress)
    eos = loaded.tokenizer.eos_token_id
    continuations = []
    for temperature in temperatures:
        row = 0 if request.mode == "isolated" else temperatures.index(temperature)
        tokens = _until_eos(generated[row], eos)
        log_probs = torch.log_softmax(first[row].float(), dim=-1)
        continuations.append(Continuation(
            temperature=temperature, top_next=top_tokens(loaded, log_probs, TOP_NEXT), token_ids=tokens,
            text=loaded.tokenizer.decode(tokens, clean_up_tokenization_spaces=False),
            first_logits=first[row].float().numpy()))
    note = ("isolated mode: the temperature changes only the measured attention, so every continuation is the "
            "model's own at T = 1") if request.mode == "isolated" else None
    return Generation(model=loaded.name, mode=request.mode, prompt_tokens=len(ids), truncated=truncated,
                      continuations=continuations, seconds=time.perf_counter() - started, note=note)


def _greedy(loaded: LoadedModel, ids: list[int], temperatures: list[float], steps: int,
            progress: OnProgress | None) -> tuple[torch.Tensor, list[list[int]]]:
    """([rows, vocab] first-step logits, per row the `steps` greedy tokens), row r at temperature r, all rows
    stepped together through one key-value cache."""
    rows = len(temperatures)
    multipliers = torch.tensor([1.0 / t for t in temperatures], dtype=torch.float32, device=loaded.device)
    tokens = torch.tensor([ids] * rows, device=loaded.device)  # [rows, n]
    cache, first, generated = None, None, []
    with torch.inference_mode():
        for step in range(steps):
            output = loaded.model(input_ids=tokens, cache=cache, use_cache=True,
                                  attention_multipliers=multipliers)
            cache, logits = output.cache, output.logits[:, -1]  # [rows, vocab]
            first = logits.cpu() if first is None else first
            tokens = logits.argmax(dim=-1, keepdim=True)  # [rows, 1]
            generated.append(tokens[:, 0].tolist())
            report_progress(progress, Progress(stage=TOKEN, fraction=(step + 1) / steps, step=step + 1, steps=steps))
    return first, [list(column) for column in zip(*generated, strict=True)]


def _until_eos(tokens: list[int], eos: int | None) -> list[int]:
    """The tokens up to and including the first end-of-text token."""
    return tokens[: tokens.index(eos) + 1] if eos is not None and eos in tokens else tokens
