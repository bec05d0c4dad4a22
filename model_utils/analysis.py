"""`analyze`: text -> tokens -> one forward pass with a probe -> a `Report` of plain numpy data.

All temperatures run in one batched forward pass (in-model mode: one batch row per temperature; isolated mode:
one row at T = 1 whose scores every temperature re-softmaxes). The report carries what the pages and the command
line need, so that they only draw: per-head statistics for every layer (means over the measured queries, and per
query-position bucket), the loss and the next-token NLL of every position, the next-token guesses, the last
query's attention row in every layer and head, the attention mass by key distance, and (for layers asked for) the
queries and keys from which any attention map is rebuilt without running the model again.

Causality makes one pass hold every shorter context: the query at position p sees exactly p + 1 keys whatever
follows, so the buckets of a run over N tokens are those of every run over its first L <= N tokens.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from model_utils.capture import LayerInputs, Probe, chunk_logits, multipliers_for
from model_utils.errors import AnalysisError
from model_utils.loading import LoadedModel
from model_utils.metrics import (
    MASS_PARTS,
    ROW_FIELDS,
    STATISTICS,
    bucket_bounds,
    first_stat_query,
    mass_by_distance,
    summarize,
)
from model_utils.schedules import Schedule, logit_multipliers, spec_label
from model_utils.validation import MAX_TEMPERATURES, MAX_TOKENS, MODES, check_int, resolve_temperatures

__all__ = ["MAX_TEMPERATURES", "MODES", "AnalysisError", "Report", "TemperatureResult", "analyze",
           "resolve_temperatures"]

LOSS_CHUNK = 128  # positions per lm_head chunk: [4 rows, 128, 49152] is 100 MB; all 4096 positions would be 3.2 GB
Progress = Callable[[float, str], None]


@dataclass
class TemperatureResult:
    """Everything measured at one temperature (or one schedule)."""

    label: str
    temperature: float | None  # None for a schedule
    schedule: str | None
    loss: float  # mean next-token NLL over every position
    next_token: list[dict]  # top 5 {"token", "prob"} at the last position
    heads: dict[str, np.ndarray]  # statistic -> [layer, head], means over the queries q_start..n-1
    last_rows: np.ndarray  # [layer, head, n] attention of the last query
    last_log_probs: np.ndarray  # [vocab] next-token log-probabilities at the last position
    position_nll: np.ndarray  # [n - 1] NLL of token p + 1 predicted at position p
    bucket_heads: dict[str, np.ndarray]  # statistic -> [bucket, layer, head]
    bucket_nll: np.ndarray  # [bucket] mean NLL of the positions in the bucket that have a next token (NaN: none)
    distance_profile: np.ndarray  # [bucket, layer, bin] attention mass by key distance, mean over heads

    def layer_mean(self, name: str) -> np.ndarray:
        """[layer] mean over heads of one statistic (geometric mean for top_ratio, which is a ratio)."""
        if name == "top_ratio":
            return np.exp(self.heads["log_top_ratio"].mean(axis=-1))
        return self.heads[name].mean(axis=-1)

    def masses_by_layer(self) -> dict[str, np.ndarray]:
        """Mean over heads of the sink, distant and recent mass, per layer (they add up to 1)."""
        return {part.removesuffix("_mass"): self.layer_mean(part) for part in MASS_PARTS}

    def mean_masses(self) -> dict[str, float]:
        """Sink, recent and distant mass, mean over layers and heads."""
        return {part: float(self.heads[part].mean()) for part in MASS_PARTS}

    def last_distance_profile(self, edges: np.ndarray, layer: int | None = None) -> np.ndarray:
        """The last query's attention mass per key-distance bin, mean over heads of `layer` (None: all layers)."""
        rows = self.last_rows if layer is None else self.last_rows[[layer]]
        return mass_by_distance(rows.mean(axis=(0, 1)), edges)

    def to_dict(self, with_buckets: bool = False) -> dict:
        values = {name: self.heads[name].tolist() for name in STATISTICS}  # [layer][head] Python floats at once
        heads = [[{name: values[name][layer][head] for name in STATISTICS} for head in range(len(by_head))]
                 for layer, by_head in enumerate(values["entropy"])]
        document = {"temperature": self.temperature, "label": self.label, "schedule": self.schedule,
                    "loss": self.loss, "next_token": self.next_token, "heads": heads}
        if with_buckets:
            document["buckets"] = {
                "nll": [None if math.isnan(v) else float(v) for v in self.bucket_nll],
                "heads": {name: self.bucket_heads[name].tolist() for name in STATISTICS},
                "distance_profile": self.distance_profile.mean(axis=1).tolist(),  # [bucket][bin] over all layers
            }
        return document


@dataclass
class Report:
    model: str
    n_tokens: int
    tokens: list[str]
    token_ids: list[int]
    truncated: bool
    mode: str
    window: int
    q_start: int
    layers: list[int] | None  # where the temperature applies; None = all
    seconds: float
    results: list[TemperatureResult]
    trained_length: int = 0
    beyond_trained: bool = False
    bucket_size: int | None = None  # None: one bucket, q_start..n-1; else boundaries at its multiples
    buckets: list[tuple[int, int]] = field(default_factory=list)  # [start, stop) query positions
    distance_edges: np.ndarray = field(default_factory=lambda: np.array([0, 1]))
    kernel: str = "fused"  # "fused" (fused_attention.c) or "torch"
    kept: dict[int, LayerInputs] = field(default_factory=dict, repr=False)
    multipliers: np.ndarray | None = field(default=None, repr=False)  # [V, n] per-view logit multipliers

    @property
    def labels(self) -> list[str]:
        return [result.label for result in self.results]

    @property
    def n_layers(self) -> int:
        return self.results[0].heads["entropy"].shape[0]

    @property
    def n_heads(self) -> int:
        return self.results[0].heads["entropy"].shape[1]

    @property
    def n_queries(self) -> int:
        """How many queries each whole-text statistic averages: q_start..n-1."""
        return self.n_tokens - self.q_start

    @property
    def reference_index(self) -> int:
        """The result to compare against: T = 1 if it was run, else the constant temperature closest to it."""
        def distance(result: TemperatureResult) -> float:
            return abs(math.log(result.temperature)) if result.temperature is not None else math.inf
        return min(range(len(self.results)), key=lambda i: distance(self.results[i]))

    def answer_probabilities(self, token_id: int) -> list[float]:
        """P(token_id) as the next token after the last position, per result."""
        return [float(np.exp(result.last_log_probs[token_id])) for result in self.results]

    def multiplier_range(self, view: int) -> tuple[float, float]:
        """Smallest and largest logit multiplier of a result over the measured queries (q_start..n-1)."""
        values = self.multipliers[view, self.q_start :]
        return float(values.min()), float(values.max())

    def to_dict(self) -> dict:
        with_buckets = self.bucket_size is not None
        document = {"model": self.model, "n_tokens": self.n_tokens, "tokens": self.tokens,
                    "truncated": self.truncated, "mode": self.mode, "window": self.window, "q_start": self.q_start,
                    "n_queries": self.n_queries, "layers": self.layers, "trained_length": self.trained_length,
                    "beyond_trained": self.beyond_trained, "seconds": self.seconds,
                    "results": [result.to_dict(with_buckets) for result in self.results]}
        if with_buckets:
            document |= {"bucket_size": self.bucket_size, "buckets": [list(b) for b in self.buckets],
                         "distance_bins": self.distance_edges.tolist()}
        return document

    def attention_map(self, layer: int, head: int | None, view: int) -> np.ndarray:
        """[n, n] attention weights of `head` (None: mean of heads) in `layer` at result `view`, rebuilt from the
        kept queries and keys with the engine's own logits function. Zero above the diagonal."""
        if layer not in self.kept:
            raise AnalysisError(f"layer {layer} was not kept; pass keep_maps with it to analyze")
        if head is not None:
            check_int("head", head, 0, self.n_heads - 1)
        check_int("temperature index", view, 0, len(self.results) - 1)
        inputs = self.kept[layer]
        row = view if inputs.query.shape[0] > 1 else 0
        multipliers = multipliers_for(torch.from_numpy(self.multipliers), self.layers, layer)[view : view + 1]
        logits = chunk_logits(inputs.query[row : row + 1], inputs.key[row : row + 1], inputs.scaling, multipliers,
                              0, self.n_tokens, inputs.sliding, inputs.softcap)
        probs = torch.softmax(logits[0], dim=-1)  # [H, n, n]
        chosen = probs.mean(dim=0) if head is None else probs[head]
        return chosen.numpy()

    def head_rows(self) -> list[dict]:
        """One flat row per (temperature, layer, head): the per-head statistics table for CSV export."""
        rows = []
        for result in self.results:
            for layer in range(self.n_layers):
                for head in range(self.n_heads):
                    row = {"temperature": result.label, "layer": layer, "head": head}
                    row.update({name: float(result.heads[name][layer, head]) for name in STATISTICS})
                    rows.append(row)
        return rows


# --- validation -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """A checked request: everything `analyze` was asked for, in the engine's terms."""

    specs: list[float | Schedule]
    mode: str
    window: int
    layers: list[int] | None
    keep: frozenset[int]
    max_tokens: int
    bucket_size: int | None
    q_start: int | None
    trained_length: int
    beyond_trained: bool


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


def validate(loaded: LoadedModel, temperatures: Sequence, mode: str, window: int, layers, keep_maps, max_tokens: int,
             bucket_size: int | None, q_start: int | None, trained_length: int | None,
             beyond_trained: bool) -> Request:
    """Check every argument of `analyze` before any work; raise AnalysisError naming the fix."""
    specs = resolve_temperatures(temperatures)
    if mode not in MODES:
        raise AnalysisError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    chosen = None if layers is None else sorted({check_int("layer", layer, 0, loaded.n_layers - 1)
                                                 for layer in layers})
    if chosen is not None and not chosen:
        raise AnalysisError("layers is empty; give at least one layer, or None for all")
    trained = loaded.max_positions if trained_length is None else check_int("trained_length", trained_length, 2)
    return Request(specs, mode, check_int("window", window, 1), chosen,
                   _keep_layers(keep_maps, loaded.n_layers, loaded.n_heads),
                   check_int("max_tokens", max_tokens, 2, MAX_TOKENS),
                   None if bucket_size is None else check_int("bucket_size", bucket_size, 1),
                   None if q_start is None else check_int("q_start", q_start, 1), trained, bool(beyond_trained))


def tokenize(loaded: LoadedModel, text: str, max_tokens: int) -> tuple[list[int], bool]:
    """Token ids of `text`, cut to `max_tokens`. Tokenizes a growing prefix, so 1 MB of text costs what the
    kept tokens cost, not minutes."""
    if not isinstance(text, str) or not text.strip():
        raise AnalysisError("the text is empty; type or paste some text to analyse")
    prefix_chars = max_tokens * 8
    while True:
        ids = loaded.tokenizer(text[:prefix_chars], add_special_tokens=True)["input_ids"]
        if len(ids) > max_tokens or prefix_chars >= len(text):
            break
        prefix_chars *= 4
    truncated = len(ids) > max_tokens or prefix_chars < len(text)
    ids = ids[:max_tokens]
    if len(ids) < 2:
        raise AnalysisError("the text is a single token; attention needs at least two tokens")
    return ids, truncated


def check_length(loaded: LoadedModel, n_tokens: int, request: Request) -> None:
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


# --- the forward pass -------------------------------------------------------------------------------------------


def _view_multipliers(specs: list[float | Schedule], n: int) -> torch.Tensor:
    return torch.tensor(np.stack([logit_multipliers(spec, n) for spec in specs]), dtype=torch.float32)  # [V, n]


def position_nll(loaded: LoadedModel, hidden: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Next-token NLL of every position [B, n - 1] (float64; their mean is what labels=input_ids gives) and the
    last position's log-probs [B, vocab], computing the lm_head LOSS_CHUNK positions at a time."""
    batch, n, _ = hidden.shape
    nll = torch.empty(batch, n - 1, dtype=torch.float64, device=hidden.device)
    for start in range(0, n - 1, LOSS_CHUNK):
        stop = min(n - 1, start + LOSS_CHUNK)
        logits = loaded.next_token_logits(hidden[:, start:stop].contiguous()).float()  # [B, c, vocab]; mm, not bmm
        targets = ids[start + 1 : stop + 1].expand(batch, -1)
        # rows of a contiguous [B * c, vocab] block: 3.7x as fast as the class axis moved to dim 1 (a strided softmax)
        nll[:, start:stop] = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none").view(batch, -1)
    last = torch.log_softmax(loaded.next_token_logits(hidden[:, -1]).float(), dim=-1)
    return nll.cpu(), last.cpu()


def top_tokens(loaded: LoadedModel, log_probs: torch.Tensor, k: int = 5) -> list[dict]:
    values, indices = log_probs.topk(k)
    return [{"token": loaded.tokenizer.decode([int(i)], clean_up_tokenization_spaces=False), "prob": float(v.exp())}
            for v, i in zip(values, indices, strict=True)]


def token_labels(loaded: LoadedModel, ids: list[int]) -> list[str]:
    return [loaded.tokenizer.decode([token_id], clean_up_tokenization_spaces=False) for token_id in ids]


def run(loaded: LoadedModel, ids: list[int], request: Request, q_start: int, progress: Progress | None
        ) -> tuple[Probe, torch.Tensor, torch.Tensor]:
    """The forward pass: (the filled probe, per-position NLL [B, n - 1], last log-probs [B, vocab])."""
    n, n_layers = len(ids), loaded.n_layers
    in_model = request.mode == "in-model"
    n_views = len(request.specs)
    started = time.perf_counter()

    def on_layer(layer: int) -> None:
        if progress is None:
            return
        done = (layer + 1) / n_layers
        left = (time.perf_counter() - started) * (1 - done) / done  # from the measured speed of the layers done
        what = f"{n_views} temperature(s) at once" if in_model else "T = 1, re-softmaxed at each temperature"
        progress(done, f"Layer {layer + 1} of {n_layers} ({what}, {n:,} tokens), about {left:.0f} s left")

    probe = Probe(_view_multipliers(request.specs, n), request.window, q_start, propagate=in_model,
                  layers=None if request.layers is None else frozenset(request.layers), keep_layers=request.keep,
                  bucket_size=request.bucket_size, on_layer=on_layer)
    input_ids = torch.tensor(ids, device=loaded.device)
    batch = input_ids[None].expand(n_views if in_model else 1, -1)
    with torch.inference_mode():
        hidden = loaded.model.base_model(input_ids=batch, use_cache=False, attention_probe=probe).last_hidden_state
        nll, last = position_nll(loaded, hidden, input_ids)
    if len(probe.sums) != n_layers:
        raise AnalysisError(f"model {loaded.name!r} does not route its attention through transformers' attention "
                            "interface, so the explorer cannot apply a temperature inside it")
    return probe, nll, last


# --- the report -------------------------------------------------------------------------------------------------


def bucket_means(nll: np.ndarray, bounds: list[tuple[int, int]]) -> np.ndarray:
    """[bucket] mean of the per-position NLL (positions 0..n-2) over each bucket's positions; NaN for none."""
    means = []
    for start, stop in bounds:
        values = nll[start : min(stop, len(nll))]
        means.append(float(values.mean()) if len(values) else math.nan)
    return np.array(means)


def _result(loaded, spec, view: int, row: int, probe: Probe, nll, last, bounds) -> TemperatureResult:
    layers = range(loaded.n_layers)
    sums = np.stack([probe.sums[layer][view].numpy() for layer in layers], axis=1)  # [H, L, buckets, W] -> below
    sums = sums.transpose(2, 1, 0, 3)  # [bucket, layer, head, W]
    counts = np.array([stop - start for start, stop in bounds], dtype=np.float64)
    per_bucket = sums / counts[:, None, None, None]
    whole = summarize(sums.sum(axis=0)[..., : len(ROW_FIELDS)] / counts.sum())
    per_bucket_named = summarize(per_bucket[..., : len(ROW_FIELDS)])
    position = nll[row].numpy()
    return TemperatureResult(
        label=spec_label(spec),
        temperature=None if isinstance(spec, Schedule) else spec,
        schedule=spec.label if isinstance(spec, Schedule) else None,
        loss=float(position.mean()),
        next_token=top_tokens(loaded, last[row]),
        heads=whole,
        last_rows=np.stack([probe.last_rows[layer][view].numpy() for layer in layers]),
        last_log_probs=last[row].numpy(),
        position_nll=position,
        bucket_heads=per_bucket_named,
        bucket_nll=bucket_means(position, bounds),
        distance_profile=per_bucket[..., len(ROW_FIELDS) :].mean(axis=2),  # [bucket, layer, bin]
    )


def set_threads(count: int) -> None:
    """Torch threads for the passes the calling thread runs from now on, at least one. OpenMP keeps the count per
    calling thread, and the fused kernel reads it there, so a server can give each of its running passes a share of
    the cores (components/cache.py does, between layers) without touching the others."""
    torch.set_num_threads(max(1, int(count)))


def analyze(
    loaded: LoadedModel,
    text: str,
    temperatures: Sequence = (0.5, 1.0, 2.0),
    mode: str = "in-model",
    window: int = 32,
    layers: Sequence[int] | None = None,
    keep_maps=None,
    max_tokens: int = 2048,
    progress: Progress | None = None,
    *,
    bucket_size: int | None = None,
    q_start: int | None = None,
    trained_length: int | None = None,
    beyond_trained: bool = False,
) -> Report:
    """Run `text` through the model at each temperature and measure its attention (see the module docstring).

    temperatures: numbers T in metrics.TEMPERATURE_RANGE and/or Schedule objects; mode: "in-model" or "isolated";
    layers: where the temperature applies (None: all); keep_maps: (layer, head) pairs, or "all", whose maps
    `Report.attention_map` can rebuild; bucket_size: also report statistics and NLL per query-position bucket
    (boundaries at multiples of bucket_size; the first bucket starts at q_start, default
    max(1, min(window, n - 1))); trained_length: the model's trained context (default its
    max_position_embeddings); beyond_trained: allow a text longer than that.
    Raises AnalysisError for a request it refuses, before any work.
    """
    started = time.perf_counter()
    request = validate(loaded, temperatures, mode, window, layers, keep_maps, max_tokens, bucket_size, q_start,
                       trained_length, beyond_trained)
    ids, truncated = tokenize(loaded, text, request.max_tokens)
    n = len(ids)
    check_length(loaded, n, request)
    first = first_stat_query(n, request.window) if request.q_start is None else request.q_start
    if first > n - 1:
        raise AnalysisError(f"q_start must be below the number of tokens ({n}), got {first}")
    probe, nll, last = run(loaded, ids, request, first, progress)
    bounds = bucket_bounds(first, n, request.bucket_size)
    in_model = request.mode == "in-model"
    results = [_result(loaded, spec, view, view if in_model else 0, probe, nll, last, bounds)
               for view, spec in enumerate(request.specs)]
    return Report(loaded.name, n, token_labels(loaded, ids), ids, truncated, request.mode, request.window, first,
                  request.layers, time.perf_counter() - started, results, request.trained_length,
                  request.beyond_trained, request.bucket_size, bounds, probe.edges.numpy(),
                  "torch" if probe.kernel is None else "fused", probe.kept, probe.view_multipliers.numpy())


def answer_token(loaded: LoadedModel, prompt: str, answer: str) -> tuple[int, str]:
    """Id and text of the first token of `answer` written right after `prompt`. A space is put in front when the
    prompt does not end in whitespace, as a writer would (the tokenizer folds it into the word: " Marigold")."""
    answer = answer.strip()
    if not answer:
        raise AnalysisError("the expected answer is empty")
    prefix = "" if prompt[-1:].isspace() else " "
    first = loaded.tokenizer(prefix + answer, add_special_tokens=False)["input_ids"][0]
    return first, loaded.tokenizer.decode([first], clean_up_tokenization_spaces=False)
