"""`analyze`: text -> tokens -> one batched forward pass with a probe -> a `Report` of plain numpy data.

In-model mode runs one batch row per temperature; isolated mode runs one row at T = 1 whose scores every
temperature re-softmaxes. Each RoPE recipe asked for is a pass of its own (its views batched as above). Causality
makes one pass hold every shorter context: the query at position p sees exactly p + 1 keys whatever follows, so the
buckets of a run over N tokens are those of every run over its first L <= N tokens (except under dynamic NTK
scaling, whose frequencies depend on the length of the whole pass)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from model_utils.core.errors import AnalysisError
from model_utils.core.limits import MAX_TOKENS, MODES, check_int, resolve_views
from model_utils.core.progress import LAYER, OnProgress, Progress, report_progress
from model_utils.core.report import LayerInputs, Report, TemperatureResult
from model_utils.core.rope import Rope
from model_utils.core.statistics import ROW_FIELDS, bucket_bounds, first_stat_query, named_statistics
from model_utils.core.views import View, passes_of
from model_utils.engine.plugin import mask_free
from model_utils.engine.probe import Probe
from model_utils.engine.prompt import Prompt, prompt_tokens
from model_utils.engine.remap import build_remap, check_remap
from model_utils.engine.rope import check_recipe, recipe_positions
from model_utils.models import LoadedModel

# Logits per lm_head chunk [rows, positions, vocab]: 2^26 floats = 256 MB per temporary, whatever the vocabulary
# (SmolLM2's 49,152: 341 positions of 4 rows; Gemma 3's 262,144: 64, or 256 of one row). A chunk of 64 positions of
# one row reads Gemma 3's 671 MB output layer for every 64 positions: 1.23x as slow as 256 (bench/LOSS_CHUNK.md).
# All 4,096 positions of 4 rows of Gemma 3 at once would be 17 GB.
LOSS_CHUNK_ELEMENTS = 1 << 26


def loss_chunk(batch: int, vocab: int) -> int:
    """Positions per lm_head chunk: as many as keep [batch, positions, vocab] within LOSS_CHUNK_ELEMENTS, at least 1."""
    return max(1, LOSS_CHUNK_ELEMENTS // max(1, batch * vocab))


@dataclass(frozen=True, kw_only=True)
class AnalysisRequest:
    """What `analyze` is asked for. temperatures: numbers T (core.softmax.TEMPERATURE_RANGE), Schedules, and/or
    core.views.View (a temperature or schedule on a RoPE recipe of its own); rope: the RoPE recipe (core.rope.Rope)
    of every number and Schedule in temperatures, None for the model's own positions; mode: "in-model" or
    "isolated"; layers: where T applies (None: all); keep_maps: (layer, head) pairs, or "all", whose maps
    `engine.maps.attention_map` can rebuild; bucket_size: also report statistics and NLL per query-position bucket
    (boundaries at its multiples; the first bucket starts at q_start, default max(1, min(window, n - 1)));
    trained_length: the model's trained context (default its max_position_embeddings); beyond_trained: allow a text
    longer than that (implied by a RoPE recipe); loss_span: (start, stop), the only positions whose next-token loss
    is computed (NaN elsewhere; the output layer is most of a pass for a large vocabulary), None for all; cut: how a
    text longer than max_tokens is cut, "end" (its first max_tokens tokens) or "question" (its head and the question
    at its end, the middle left out: engine.prompt.prompt_tokens)."""

    temperatures: Sequence = (0.5, 1.0, 2.0)
    rope: Rope | None = None
    mode: str = "in-model"
    window: int = 32
    layers: Sequence[int] | None = None
    keep_maps: object = None
    max_tokens: int = 2048
    bucket_size: int | None = None
    q_start: int | None = None
    trained_length: int | None = None
    beyond_trained: bool = False
    loss_span: tuple[int, int] | None = None
    cut: str = "end"


CUTS = ("end", "question")


@dataclass(frozen=True, kw_only=True)
class CheckedRequest:
    """An AnalysisRequest checked against a model, in the engine's terms."""

    views: list[View]
    mode: str
    window: int
    layers: list[int] | None
    keep: frozenset[int]
    max_tokens: int
    bucket_size: int | None
    q_start: int | None
    trained_length: int
    beyond_trained: bool
    loss_span: tuple[int, int] | None
    cut: str


def _keep_layers(keep_maps, n_layers: int, n_heads: int) -> frozenset[int]:
    if keep_maps is None:
        return frozenset()
    if keep_maps == "all":
        return frozenset(range(n_layers))
    layers = set()
    for pair in keep_maps:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise AnalysisError(f"keep_maps entries are (layer, head) pairs, got {pair!r}")
        layers.add(check_int("layer", pair[0], 0, n_layers - 1))
        check_int("head", pair[1], 0, n_heads - 1)
    return frozenset(layers)


def validate(loaded: LoadedModel, request: AnalysisRequest) -> CheckedRequest:
    """Check every field of `request` before any work; raise AnalysisError naming the fix."""
    views = resolve_views(request.temperatures, request.rope)
    trained = (loaded.max_positions if request.trained_length is None
               else check_int("trained_length", request.trained_length, 2))
    for rope, _ in passes_of(views):
        if rope is not None and rope.remaps:
            check_remap(loaded, rope, trained)
        elif rope is not None:
            check_recipe(loaded, rope)
    if request.mode not in MODES:
        raise AnalysisError(f"mode must be one of {', '.join(MODES)}, got {request.mode!r}")
    layers = request.layers
    chosen = None if layers is None else sorted({check_int("layer", layer, 0, loaded.n_layers - 1)
                                                 for layer in layers})
    if chosen is not None and not chosen:
        raise AnalysisError("layers is empty; give at least one layer, or None for all")
    if request.cut not in CUTS:
        raise AnalysisError(f"cut must be one of {', '.join(CUTS)}, got {request.cut!r}")
    return CheckedRequest(
        views=views, mode=request.mode, window=check_int("window", request.window, 1), layers=chosen,
        keep=_keep_layers(request.keep_maps, loaded.n_layers, loaded.n_heads),
        max_tokens=check_int("max_tokens", request.max_tokens, 2, MAX_TOKENS),
        bucket_size=None if request.bucket_size is None else check_int("bucket_size", request.bucket_size, 1),
        q_start=None if request.q_start is None else check_int("q_start", request.q_start, 1),
        trained_length=trained,
        # a RoPE recipe exists to run past the trained length: asking for one allows it
        beyond_trained=bool(request.beyond_trained) or any(view.rope is not None for view in views),
        loss_span=None if request.loss_span is None else _span(request.loss_span), cut=request.cut)


def _span(span) -> tuple[int, int]:
    start, stop = (check_int(name, value, 0) for name, value in zip(("loss_span start", "loss_span stop"), span,
                                                                     strict=True))
    if stop < start:
        raise AnalysisError(f"loss_span must not end before it starts, got {start}..{stop}")
    return start, stop


def tokenize(loaded: LoadedModel, text: str, max_tokens: int) -> tuple[list[int], bool]:
    """Token ids of `text`, cut to `max_tokens`, and whether it was cut (engine.prompt.prompt_tokens)."""
    prompt = prompt_tokens(loaded, text, max_tokens)
    return prompt.ids, prompt.truncated


def check_length(loaded: LoadedModel, n_tokens: int, request: CheckedRequest) -> None:
    """Refuse a text past the trained length unless asked for, and past a learned position table always."""
    trained = request.trained_length
    if n_tokens <= trained:
        return
    if loaded.learned_positions and n_tokens > loaded.max_positions:
        raise AnalysisError(f"model {loaded.name!r} learned its positions as a table of {loaded.max_positions} rows "
                            f"and cannot run past them; ask for at most {loaded.max_positions} tokens")
    if not request.beyond_trained:
        raise AnalysisError(f"the text runs to {n_tokens:,} tokens (or more), past the model's trained length of "
                            f"{trained:,}; ask for at most {trained:,} tokens, or allow running past the trained "
                            "length (beyond_trained=True, --beyond-trained on the command line, the checkbox on "
                            "the page)")


def _view_multipliers(views: list[View], n: int) -> torch.Tensor:
    return torch.tensor(np.stack([view.multipliers(n) for view in views]), dtype=torch.float32)  # [V, n]


def position_nll(loaded: LoadedModel, hidden: torch.Tensor, ids: torch.Tensor, span: tuple[int, int] | None = None
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Next-token NLL of every position [B, n - 1] (float64; their mean is what labels=input_ids gives), whether
    that next token is the position's most likely one [B, n - 1] (bool: greedy decoding would write it) and the
    last position's log-probs [B, vocab], computing the lm_head a chunk of positions at a time (`loss_chunk`).
    With a span (start, stop), only its positions: the others' NLL is NaN and their greedy False."""
    batch, n, _ = hidden.shape
    chunk = loss_chunk(batch, loaded.text_config.vocab_size)
    nll = torch.full((batch, n - 1), math.nan, dtype=torch.float64, device=hidden.device)
    greedy = torch.zeros(batch, n - 1, dtype=torch.bool, device=hidden.device)
    first, last_stop = (0, n - 1) if span is None else span
    for start in range(first, last_stop, chunk):
        stop = min(last_stop, start + chunk)
        logits = loaded.next_token_logits(hidden[:, start:stop].contiguous()).float()  # [B, c, vocab]; mm, not bmm
        targets = ids[start + 1 : stop + 1].expand(batch, -1)
        # rows of a contiguous [B * c, vocab] block: 3.7x as fast as the class axis moved to dim 1 (a strided softmax)
        nll[:, start:stop] = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none").view(batch, -1)
        greedy[:, start:stop] = logits.argmax(dim=-1) == targets
    last = torch.log_softmax(loaded.next_token_logits(hidden[:, -1]).float(), dim=-1)
    return nll.cpu(), greedy.cpu(), last.cpu()


def top_tokens(loaded: LoadedModel, log_probs: torch.Tensor, k: int = 5) -> list[dict]:
    values, indices = log_probs.topk(k)
    return [{"token": loaded.tokenizer.decode([int(i)], clean_up_tokenization_spaces=False), "prob": float(v.exp())}
            for v, i in zip(values, indices, strict=True)]


def token_labels(loaded: LoadedModel, ids: list[int]) -> list[str]:
    return [loaded.tokenizer.decode([token_id], clean_up_tokenization_spaces=False) for token_id in ids]


@dataclass(kw_only=True)
class Pass:
    """One forward pass of an analysis: the views of one RoPE recipe, its filled probe, per-position NLL
    [B, n - 1], whether each next token was the most likely one [B, n - 1], last log-probs [B, vocab] and what the
    recipe applied."""

    views: list[int]  # indices into the request's views
    probe: Probe
    nll: torch.Tensor
    greedy: torch.Tensor
    last: torch.Tensor
    rope: dict | None


def run(loaded: LoadedModel, ids: list[int], request: CheckedRequest, q_start: int, progress: OnProgress | None,
        rope: Rope | None = None, views: list[int] | None = None, done_before: int = 0, passes: int = 1) -> Pass:
    """The forward pass of the views `views` (default all) on `rope`'s positions (None: the model's own). Its
    progress events count this pass as number done_before + 1 of `passes`."""
    n, n_layers = len(ids), loaded.n_layers
    in_model = request.mode == "in-model"
    chosen = list(range(len(request.views))) if views is None else views
    n_views = len(chosen)
    started = time.perf_counter()
    what = f"{n_views} temperature(s) at once" if in_model else "T = 1, re-softmaxed at each temperature"
    detail = f"{what}{'' if rope is None else f' on {rope.label}'}, {n:,} tokens"

    def on_layer(layer: int) -> None:
        done = (layer + 1) / n_layers
        left = (time.perf_counter() - started) * (1 - done) / done  # from the measured speed of the layers done
        report_progress(progress, Progress(stage=LAYER, fraction=(done_before + done) / passes, step=layer + 1,
                                           steps=n_layers, part=done_before + 1, parts=passes, seconds_left=left,
                                           detail=detail))

    remap = build_remap(loaded, rope, n, request.trained_length) if rope is not None and rope.remaps else None
    probe = Probe(view_multipliers=_view_multipliers([request.views[i] for i in chosen], n), window=request.window,
                  q_start=q_start, propagate=in_model, trained_length=request.trained_length,
                  layers=None if request.layers is None else frozenset(request.layers),
                  keep_layers=request.keep, bucket_size=request.bucket_size, on_layer=on_layer, remap=remap)
    input_ids = torch.tensor(ids, device=loaded.device)
    batch = input_ids[None].expand(n_views if in_model else 1, -1)
    positions = None if remap is not None else rope  # a remapping keeps the model's rotary positions
    with torch.inference_mode(), mask_free(), recipe_positions(loaded, positions, request.trained_length) as applied:
        hidden = loaded.model.base_model(input_ids=batch, use_cache=False, attention_probe=probe).last_hidden_state
        nll, greedy, last = position_nll(loaded, hidden, input_ids, request.loss_span)
        probe.move_to_host()  # the statistics stayed on the model's device during the pass
    if len(probe.sums) != n_layers:
        raise AnalysisError(f"model {loaded.name!r} does not route its attention through transformers' attention "
                            "interface, so the explorer cannot apply a temperature inside it")
    record = remap.layout.rope.applied() if remap is not None else None if applied is None else applied.as_dict()
    return Pass(views=chosen, probe=probe, nll=nll, greedy=greedy, last=last, rope=record)


def bucket_means(nll: np.ndarray, bounds: list[tuple[int, int]]) -> np.ndarray:
    """[bucket] mean of the per-position NLL (positions 0..n-2) over each bucket's scored positions; NaN for none."""
    means = []
    for start, stop in bounds:
        means.append(_scored_mean(nll[start : min(stop, len(nll))]))
    return np.array(means)


def _result(loaded, view: View, index: int, row: int, done: Pass, bounds) -> TemperatureResult:
    """The result of view number `index` of pass `done`, whose NLL is that of batch row `row`."""
    probe, layers = done.probe, range(loaded.n_layers)
    sums = np.stack([probe.sums[layer][index].numpy() for layer in layers], axis=1)  # [H, L, buckets, W] -> below
    sums = sums.transpose(2, 1, 0, 3)  # [bucket, layer, head, W]
    counts = np.array([stop - start for start, stop in bounds], dtype=np.float64)
    per_bucket = sums / counts[:, None, None, None]
    whole = named_statistics(sums.sum(axis=0)[..., : len(ROW_FIELDS)] / counts.sum())
    per_bucket_named = named_statistics(per_bucket[..., : len(ROW_FIELDS)])
    position = done.nll[row].numpy()
    return TemperatureResult(
        view=view,
        applied_rope=done.rope,
        loss=_scored_mean(position),
        next_token=top_tokens(loaded, done.last[row]),
        heads=whole,
        last_rows=np.stack([probe.last_rows[layer][index].numpy() for layer in layers]),
        last_log_probs=done.last[row].numpy(),
        position_nll=position,
        position_greedy=done.greedy[row].numpy(),
        bucket_heads=per_bucket_named,
        bucket_nll=bucket_means(position, bounds),
        distance_profile=per_bucket[..., len(ROW_FIELDS) :].mean(axis=2),  # [bucket, layer, bin]
    )


def _scored_mean(nll: np.ndarray) -> float:
    """The mean NLL over the scored positions (a request's loss_span; all by default), NaN for none."""
    scored = nll[~np.isnan(nll)]
    return float(scored.mean()) if len(scored) else math.nan


def _kept(passes: list[Pass]) -> dict[int, LayerInputs]:
    """The kept queries and keys of every pass, stacked along the batch axis in pass order; where a pass remapped
    distances, the far block's too (a pass without one stands in with its own, which no map of it reads)."""
    kept = {}
    for layer, inputs in passes[0].probe.kept.items():
        layers = [done.probe.kept[layer] for done in passes]
        remapped = any(each.far_query is not None for each in layers)
        kept[layer] = LayerInputs(
            query=np.concatenate([each.query for each in layers]), key=np.concatenate([each.key for each in layers]),
            scaling=inputs.scaling, sliding=inputs.sliding, softcap=inputs.softcap,
            far_query=np.concatenate([_far(each.far_query, each.query) for each in layers]) if remapped else None,
            far_key=np.concatenate([_far(each.far_key, each.key) for each in layers]) if remapped else None)
    return kept


def _far(far: np.ndarray | None, own: np.ndarray) -> np.ndarray:
    return own if far is None else far


def set_threads(count: int) -> None:
    """Torch threads for the passes the calling thread runs from now on, at least one. OpenMP keeps the count per
    calling thread, and the fused kernel reads it there, so a server can give each of its running passes a share of
    the cores (components/serving/cache.py does, between layers) without touching the others."""
    torch.set_num_threads(max(1, int(count)))


def analyze(loaded: LoadedModel, text: str, request: AnalysisRequest | None = None, *,
            progress: OnProgress | None = None, **fields) -> Report:
    """Run `text` through the model at each temperature and measure its attention (the module docstring). The
    request is an AnalysisRequest, or its fields as keywords (`temperatures=[0.5, 1, 2], window=16`). Raises
    AnalysisError for a request it refuses, before any work."""
    started = time.perf_counter()
    if request is None:
        request = AnalysisRequest(**fields)
    elif fields or not isinstance(request, AnalysisRequest):
        raise TypeError("analyze takes an AnalysisRequest or its fields as keywords, not both")
    checked = validate(loaded, request)
    prompt = prompt_tokens(loaded, text, checked.max_tokens, keep_question=checked.cut == "question")
    return _analyze_ids(loaded, prompt, checked, started, progress)


def analyze_tokens(loaded: LoadedModel, ids: list[int], request: AnalysisRequest, *,
                   progress: OnProgress | None = None) -> Report:
    """`analyze` on token ids the caller built (a probe that plants a passage at a chosen distance, a window cut
    out of a longer text): the same checks, pass and report, without tokenizing. AnalysisError for fewer than two
    ids or more than max_tokens."""
    started = time.perf_counter()
    checked = validate(loaded, request)
    if len(ids) < 2:
        raise AnalysisError("attention needs at least two tokens")
    if len(ids) > checked.max_tokens:
        raise AnalysisError(f"{len(ids):,} tokens is more than max_tokens ({checked.max_tokens:,})")
    prompt = Prompt(ids=[int(token) for token in ids], offsets=[], truncated=False)
    return _analyze_ids(loaded, prompt, checked, started, progress)


def _analyze_ids(loaded: LoadedModel, prompt: Prompt, checked: CheckedRequest, started: float,
                 progress: OnProgress | None) -> Report:
    ids = prompt.ids
    n = len(ids)
    check_length(loaded, n, checked)
    first = first_stat_query(n, checked.window) if checked.q_start is None else checked.q_start
    if first > n - 1:
        raise AnalysisError(f"q_start must be below the number of tokens ({n}), got {first}")
    if checked.loss_span is not None and checked.loss_span[1] > n - 1:
        raise AnalysisError(f"loss_span must end by position {n - 1} (the last with a next token), "
                            f"got {checked.loss_span[1]}")
    groups = passes_of(checked.views)
    passes = [run(loaded, ids, checked, first, progress, rope, views, number, len(groups))
              for number, (rope, views) in enumerate(groups)]
    bounds = bucket_bounds(first, n, checked.bucket_size)
    in_model = checked.mode == "in-model"
    results: list[TemperatureResult | None] = [None] * len(checked.views)
    map_rows = [0] * len(checked.views)
    offset = 0  # of each pass's rows in the kept queries and keys
    for done in passes:
        for index, view in enumerate(done.views):
            row = index if in_model else 0
            results[view] = _result(loaded, checked.views[view], index, row, done, bounds)
            map_rows[view] = offset + row
        offset += len(done.views) if in_model else 1
    multipliers = np.zeros((len(checked.views), n), dtype=np.float32)
    for done in passes:
        multipliers[done.views] = done.probe.view_multipliers.numpy()
    kernel = "fused" if all(done.probe.path == "fused" for done in passes) else "torch"  # which path ran
    return Report(model=loaded.name, n_tokens=n, tokens=token_labels(loaded, ids), token_ids=ids,
                  truncated=prompt.truncated, mode=checked.mode, window=checked.window, q_start=first,
                  layers=checked.layers, seconds=time.perf_counter() - started, results=results,
                  trained_length=checked.trained_length, beyond_trained=checked.beyond_trained,
                  bucket_size=checked.bucket_size, buckets=bounds, distance_edges=passes[0].probe.edges.numpy(),
                  kernel=kernel, kept=_kept(passes), map_rows=map_rows,
                  multipliers=multipliers, offsets=prompt.offsets, cut=prompt.cut)


def answer_token(loaded: LoadedModel, prompt: str, answer: str) -> tuple[int, str]:
    """Id and text of the first token of `answer` written right after `prompt`. A space is put in front when the
    prompt does not end in whitespace, as a writer would (the tokenizer folds it into the word: " Marigold")."""
    answer = answer.strip()
    if not answer:
        raise AnalysisError("the expected answer is empty")
    prefix = "" if prompt[-1:].isspace() else " "
    first = loaded.tokenizer(prefix + answer, add_special_tokens=False)["input_ids"][0]
    return first, loaded.tokenizer.decode([first], clean_up_tokenization_spaces=False)
