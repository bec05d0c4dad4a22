"""What the model says at each temperature: the top next tokens after a text and a greedy continuation generated
with the temperature inside every layer at every step. One batch row per temperature (in-model mode), stepped
together through the model's own key-value cache; the attention function scales each row's queries by its logit
multiplier 1 / T (`attention_multipliers`), so at T = 1 the continuation is transformers' own greedy decoding. In
isolated mode the temperature changes only the statistics, never what the model computes, so the output is T = 1's
for every temperature and says so. `greedy_tokens` is the loop itself, on token ids: a row may also run a schedule
(each query at its own position's multiplier, as in a pass), all rows may run on one RoPE recipe (a distance
remapping steps each row through the engine's own kept keys: continuation.remapped_greedy), and a
caller may stop a row early (the lm-eval bridge stops at its stop strings)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from model_utils.core.errors import AnalysisError
from model_utils.core.limits import MAX_TOKENS, MODES, check_int, resolve_temperatures
from model_utils.core.progress import TOKEN, OnProgress, Progress, report_progress
from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule
from model_utils.core.views import View
from model_utils.engine.analyze import tokenize, top_tokens
from model_utils.engine.continuation import remapped_greedy
from model_utils.engine.rope import check_recipe, recipe_positions
from model_utils.models import LoadedModel

MAX_NEW_TOKENS = 64  # a few sentences: enough to read over-softening as words, short enough for a page request
TOP_NEXT = 5


@dataclass(frozen=True, kw_only=True)
class GenerationRequest:
    """What `generate_continuations` is asked for: numbers T (no schedules: a continuation has no fixed length),
    on the model's own rotary positions or a RoPE frequency recipe `rope` (which allows running past the trained
    length, as in an analysis), up to MAX_NEW_TOKENS greedy tokens after the text cut to `max_tokens`."""

    temperatures: Sequence = (0.5, 1.0, 2.0)
    rope: Rope | None = None
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
    check_generation_recipe(loaded, request.rope)
    return [float(t) for t in temperatures]


def check_generation_recipe(loaded: LoadedModel, rope: Rope | None) -> None:
    """Refuse a recipe the model cannot run (engine.rope.check_recipe), naming why. A distance remapping runs too:
    greedy_tokens steps it through the engine's own kept keys (continuation.remapped_greedy), not transformers'
    key-value cache, whose keys are rotated once at their own positions."""
    if rope is None:
        return
    if not isinstance(rope, Rope):
        raise AnalysisError(f"rope must be a Rope recipe (e.g. Rope('yarn', 2)) or None, got {rope!r}")
    check_recipe(loaded, rope)


def generate_continuations(loaded: LoadedModel, text: str, request: GenerationRequest,
                           progress: OnProgress | None = None) -> Generation:
    """Check, tokenize, and generate one greedy continuation per temperature (see the module docstring)."""
    temperatures = check_generation(loaded, request)
    ids, truncated = tokenize(loaded, text, request.max_tokens)
    total = len(ids) + request.max_new_tokens
    if total > loaded.max_positions and request.rope is None:
        raise AnalysisError(f"the text ({len(ids):,} tokens) and {request.max_new_tokens} new tokens run past the "
                            f"model's trained length of {loaded.max_positions:,}; shorten the text or ask for fewer "
                            "new tokens (a continuation is generated only within the trained length)")
    started = time.perf_counter()
    rows = [1.0] if request.mode == "isolated" else temperatures  # isolated: the model itself runs at T = 1
    views = [View(temperature, request.rope) for temperature in rows]
    first, generated = greedy_tokens(loaded, ids, views, request.max_new_tokens, progress=progress)
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


def greedy_tokens(loaded: LoadedModel, ids: list[int], views: Sequence[View], steps: int, *,
                  trained_length: int | None = None, stop: Callable[[list[int]], bool] | None = None,
                  progress: OnProgress | None = None) -> tuple[torch.Tensor, list[list[int]]]:
    """([rows, vocab] first-step logits, per row its greedy tokens): row r runs views[r] (a temperature, or a
    schedule whose multiplier each query takes at its own position) on the views' one RoPE recipe (anchored at
    `trained_length`, default the model's), all rows stepped together through one key-value cache for at most
    `steps` tokens. A row ends once `stop(its tokens)` is true; the loop ends when every row has (None: never, so
    every row has `steps` tokens)."""
    recipes = {view.rope for view in views}
    if len(recipes) != 1:
        raise AnalysisError("the rows of one generation share one RoPE recipe (one key-value cache); generate each "
                            "recipe on its own")
    rope = recipes.pop()
    check_generation_recipe(loaded, rope)
    trained = loaded.max_positions if trained_length is None else trained_length
    if rope is not None and rope.remaps:
        return _remapped_rows(loaded, ids, views, steps, trained, stop, progress)
    n = len(ids)
    multipliers = torch.tensor(np.stack([view.multipliers(n + steps) for view in views]), dtype=torch.float32,
                               device=loaded.device)  # [rows, n + steps]
    tokens = torch.tensor([ids] * len(views), device=loaded.device)  # [rows, n]
    cache, first, generated = None, None, [[] for _ in views]
    running = list(range(len(views)))
    with torch.inference_mode(), recipe_positions(loaded, rope, trained):
        for step in range(steps):
            queries = multipliers[:, : n] if cache is None else multipliers[:, n + step - 1 : n + step]  # [rows, q]
            # logits_to_keep: the output layer on the last position only (a prompt of 8,192 tokens would make
            # [rows, 8192, vocab] logits, 1.6 GB per row for SmolLM2, of which the step reads one position)
            output = loaded.model(input_ids=tokens, cache=cache, use_cache=True, attention_multipliers=queries,
                                  logits_to_keep=1)
            cache, logits = output.cache, output.logits[:, -1]  # [rows, vocab]
            first = logits.cpu() if first is None else first
            tokens = logits.argmax(dim=-1, keepdim=True)  # [rows, 1]
            for row in running:
                generated[row].append(int(tokens[row, 0]))
            running = [row for row in running if stop is None or not stop(generated[row])]
            report_progress(progress, Progress(stage=TOKEN, fraction=(step + 1) / steps, step=step + 1, steps=steps))
            if not running:
                break
    return first, generated


def _remapped_rows(loaded: LoadedModel, ids: list[int], views: Sequence[View], steps: int, trained: int,
                   stop: Callable[[list[int]], bool] | None, progress: OnProgress | None
                   ) -> tuple[torch.Tensor, list[list[int]]]:
    """greedy_tokens under a distance remapping: each row on its own (continuation.remapped_greedy)."""
    firsts, generated = [], []
    for row, view in enumerate(views):
        first, tokens = remapped_greedy(loaded, ids, view, steps, trained, stop)
        firsts.append(first)
        generated.append(tokens)
        report_progress(progress, Progress(stage=TOKEN, fraction=(row + 1) / len(views), step=row + 1,
                                           steps=len(views)))
    return torch.stack(firsts), generated


def _until_eos(tokens: list[int], eos: int | None) -> list[int]:
    """The tokens up to and including the first end-of-text token."""
    return tokens[: tokens.index(eos) + 1] if eos is not None and eos in tokens else tokens
