"""`analyze`: text -> tokens -> one forward pass with a probe -> a `Report` of plain numpy data.

All temperatures run in one batched forward pass (in-model mode: one batch row per temperature; isolated mode:
one row at T = 1 whose scores every temperature re-softmaxes). The report carries what the pages and the command
line need: per-head statistics for every layer, the loss and next-token guesses, the last query's attention row in
every layer and head, and (for layers asked for) the queries and keys from which any attention map is rebuilt
without running the model again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from model_utils.capture import Probe, chunk_logits, multipliers_for
from model_utils.loading import LoadedModel
from model_utils.metrics import check_temperature, first_stat_query, summarize
from model_utils.schedules import Schedule

MODES = ("in-model", "isolated")
MAX_TEMPERATURES = 8
HEAD_FIELDS = ("entropy", "normalized_entropy", "sink_mass", "recent_mass", "distant_mass", "top_ratio")
LOSS_CHUNK = 128  # positions per lm_head chunk: [4 rows, 128, 49152] is 100 MB; all 4096 positions would be 3.2 GB


class AnalysisError(ValueError):
    """A request the engine refuses; the message says what to change."""


@dataclass
class TemperatureResult:
    """Everything measured at one temperature (or one schedule)."""

    label: str
    temperature: float | None  # None for a schedule
    schedule: str | None
    loss: float
    next_token: list[dict]  # top 5 {"token", "prob"} at the last position
    heads: dict[str, np.ndarray]  # field -> [layer, head]
    last_rows: np.ndarray  # [layer, head, n] attention of the last query
    last_log_probs: np.ndarray  # [vocab] next-token log-probabilities at the last position

    def to_dict(self) -> dict:
        n_layers, n_heads = self.heads["entropy"].shape
        heads = [
            [{name: float(self.heads[name][layer, head]) for name in HEAD_FIELDS} for head in range(n_heads)]
            for layer in range(n_layers)
        ]
        return {"temperature": self.temperature, "label": self.label, "schedule": self.schedule,
                "loss": self.loss, "next_token": self.next_token, "heads": heads}


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
    kept: dict[int, tuple[np.ndarray, np.ndarray, float]] = field(default_factory=dict, repr=False)
    multipliers: np.ndarray | None = field(default=None, repr=False)  # [V, n] per-view logit multipliers

    @property
    def labels(self) -> list[str]:
        return [result.label for result in self.results]

    def to_dict(self) -> dict:
        return {"model": self.model, "n_tokens": self.n_tokens, "tokens": self.tokens, "truncated": self.truncated,
                "mode": self.mode, "window": self.window, "q_start": self.q_start, "layers": self.layers,
                "seconds": self.seconds, "results": [result.to_dict() for result in self.results]}

    def attention_map(self, layer: int, head: int | None, view: int) -> np.ndarray:
        """[n, n] attention weights of `head` (None: mean of heads) in `layer` at result `view`, rebuilt from the
        kept queries and keys with the engine's own logits function. Zero above the diagonal."""
        if layer not in self.kept:
            raise AnalysisError(f"layer {layer} was not kept; pass keep_maps with it to analyze")
        n_heads = self.results[0].heads["entropy"].shape[1]
        if head is not None:
            _check_int("head", head, 0, n_heads - 1)
        _check_int("temperature index", view, 0, len(self.results) - 1)
        query, key, scaling = (torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in self.kept[layer])
        row = view if query.shape[0] > 1 else 0
        multipliers = self._layer_multipliers(layer)[view : view + 1]
        logits = chunk_logits(query[row : row + 1], key[row : row + 1], scaling, multipliers, 0, self.n_tokens)
        probs = torch.softmax(logits[0], dim=-1)  # [H, n, n]
        chosen = probs.mean(dim=0) if head is None else probs[head]
        return chosen.numpy()

    def _layer_multipliers(self, layer: int) -> torch.Tensor:
        return multipliers_for(torch.from_numpy(self.multipliers), self.layers, layer)

    def head_rows(self) -> list[dict]:
        """One flat row per (temperature, layer, head): the per-head statistics table for CSV export."""
        rows = []
        for result in self.results:
            n_layers, n_heads = result.heads["entropy"].shape
            for layer in range(n_layers):
                for head in range(n_heads):
                    row = {"temperature": result.label, "layer": layer, "head": head}
                    row.update({name: float(result.heads[name][layer, head]) for name in HEAD_FIELDS})
                    rows.append(row)
        return rows


def resolve_temperatures(temperatures: Sequence) -> list[float | Schedule]:
    """Check the list: 1..MAX_TEMPERATURES entries, each a T in (0, 100] or a Schedule, none twice."""
    if isinstance(temperatures, np.ndarray):
        temperatures = temperatures.tolist()
    if isinstance(temperatures, (str, bytes)) or not isinstance(temperatures, Sequence):
        raise AnalysisError("temperatures must be a list of numbers, e.g. [0.5, 1, 2]")
    if not temperatures:
        raise AnalysisError("give at least one temperature, e.g. [0.5, 1, 2]")
    if len(temperatures) > MAX_TEMPERATURES:
        raise AnalysisError(f"at most {MAX_TEMPERATURES} temperatures at once; {len(temperatures)} were given")
    resolved = []
    for entry in temperatures:
        try:
            value = entry if isinstance(entry, Schedule) else check_temperature(entry)
        except ValueError as error:
            raise AnalysisError(str(error)) from None
        if value in resolved:
            raise AnalysisError(f"temperature {entry} is listed twice; list each temperature once")
        resolved.append(value)
    return resolved


def _check_int(name: str, value, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise AnalysisError(f"{name} must be a whole number, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"between {low} and {high}"
        raise AnalysisError(f"{name} must be {bound}, got {value}")
    return int(value)


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


def token_labels(loaded: LoadedModel, ids: list[int]) -> list[str]:
    return [loaded.tokenizer.decode([token_id], clean_up_tokenization_spaces=False) for token_id in ids]


def _view_multipliers(specs: list[float | Schedule], n: int) -> torch.Tensor:
    rows = [spec.multipliers(n) if isinstance(spec, Schedule) else np.full(n, 1.0 / spec) for spec in specs]
    return torch.tensor(np.stack(rows), dtype=torch.float32)  # [V, n]


def _output_logits(loaded: LoadedModel, hidden: torch.Tensor) -> torch.Tensor:
    logits = loaded.model.get_output_embeddings()(hidden)
    softcap = getattr(loaded.config, "final_logit_softcapping", None)
    return softcap * torch.tanh(logits / softcap) if softcap else logits


def loss_and_last(loaded: LoadedModel, hidden: torch.Tensor, ids: torch.Tensor) -> tuple[np.ndarray, torch.Tensor]:
    """Mean next-token NLL per batch row (what labels=input_ids gives) and last-position log-probs [B, vocab],
    computing the lm_head LOSS_CHUNK positions at a time."""
    batch, n, _ = hidden.shape
    total = torch.zeros(batch, dtype=torch.float64)
    for start in range(0, n - 1, LOSS_CHUNK):
        stop = min(n - 1, start + LOSS_CHUNK)
        logits = _output_logits(loaded, hidden[:, start:stop]).float()  # [B, c, vocab]
        targets = ids[start + 1 : stop + 1].expand(batch, -1)
        nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
        total += nll.sum(dim=-1, dtype=torch.float64)
    last = torch.log_softmax(_output_logits(loaded, hidden[:, -1]).float(), dim=-1)
    return (total / (n - 1)).numpy(), last


def top_tokens(loaded: LoadedModel, log_probs: torch.Tensor, k: int = 5) -> list[dict]:
    values, indices = log_probs.topk(k)
    return [{"token": loaded.tokenizer.decode([int(i)], clean_up_tokenization_spaces=False), "prob": float(v.exp())}
            for v, i in zip(values, indices, strict=True)]


def _keep_layers(keep_maps, n_layers: int, n_heads: int) -> frozenset[int]:
    if keep_maps is None:
        return frozenset()
    if keep_maps == "all":
        return frozenset(range(n_layers))
    layers = set()
    for pair in keep_maps:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise AnalysisError(f"keep_maps entries are (layer, head) pairs, got {pair!r}")
        layers.add(_check_int("layer", pair[0], 0, n_layers - 1))
        _check_int("head", pair[1], 0, n_heads - 1)
    return frozenset(layers)


def analyze(
    loaded: LoadedModel,
    text: str,
    temperatures: Sequence = (0.5, 1.0, 2.0),
    mode: str = "in-model",
    window: int = 32,
    layers: Sequence[int] | None = None,
    keep_maps=None,
    max_tokens: int = 2048,
    progress: Callable[[float, str], None] | None = None,
) -> Report:
    """Run `text` through the model at each temperature and measure its attention (see the module docstring).

    temperatures: numbers T in (0, 100] and/or Schedule objects; mode: "in-model" or "isolated";
    layers: where the temperature applies (None: all); keep_maps: (layer, head) pairs, or "all", whose maps
    `Report.attention_map` can rebuild. Raises AnalysisError for a request it refuses.
    """
    started = time.perf_counter()
    specs = resolve_temperatures(temperatures)
    if mode not in MODES:
        raise AnalysisError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    window = _check_int("window", window, 1)
    n_layers, n_heads = loaded.n_layers, loaded.n_heads
    chosen = None if layers is None else sorted({_check_int("layer", layer, 0, n_layers - 1) for layer in layers})
    if chosen is not None and not chosen:
        raise AnalysisError("layers is empty; give at least one layer, or None for all")
    keep = _keep_layers(keep_maps, n_layers, n_heads)
    max_tokens = min(_check_int("max_tokens", max_tokens, 2), loaded.max_positions)
    ids, truncated = tokenize(loaded, text, max_tokens)
    n = len(ids)
    q_start = first_stat_query(n, window)
    multipliers = _view_multipliers(specs, n)
    n_views = len(specs)
    in_model = mode == "in-model"

    def on_layer(layer: int) -> None:
        if progress is not None:
            what = f"{n_views} temperature(s) at once" if in_model else "T = 1, re-softmaxed at each temperature"
            progress((layer + 1) / n_layers, f"Layer {layer + 1} of {n_layers} ({what}, {n} tokens)")

    probe = Probe(multipliers, window, q_start, propagate=in_model,
                  layers=None if chosen is None else frozenset(chosen), keep_layers=keep, on_layer=on_layer)
    input_ids = torch.tensor(ids)
    batch = input_ids[None].expand(n_views if in_model else 1, -1)
    with torch.inference_mode():
        hidden = loaded.model.base_model(input_ids=batch, use_cache=False, attention_probe=probe).last_hidden_state
        losses, last = loss_and_last(loaded, hidden, input_ids)
    if len(probe.sums) != n_layers:
        raise AnalysisError(f"model {loaded.name!r} does not route its attention through transformers' attention "
                            "interface, so the explorer cannot apply a temperature inside it")
    results = []
    for view, spec in enumerate(specs):
        row = view if in_model else 0
        heads = summarize(np.stack([probe.sums[layer][view].numpy() for layer in range(n_layers)]) / (n - q_start))
        results.append(TemperatureResult(
            label=spec.label if isinstance(spec, Schedule) else f"T={spec:g}",
            temperature=None if isinstance(spec, Schedule) else spec,
            schedule=spec.label if isinstance(spec, Schedule) else None,
            loss=float(losses[row]),
            next_token=top_tokens(loaded, last[row]),
            heads=heads,
            last_rows=np.stack([probe.last_rows[layer][view].numpy() for layer in range(n_layers)]),
            last_log_probs=last[row].numpy(),
        ))
    kept = {layer: (q.numpy(), k.numpy(), s) for layer, (q, k, s) in probe.kept.items()}
    return Report(loaded.name, n, token_labels(loaded, ids), ids, truncated, mode, window, q_start, chosen,
                  time.perf_counter() - started, results, kept, multipliers.numpy())


def masses_by_layer(result: TemperatureResult) -> dict[str, np.ndarray]:
    """Mean over heads of the sink, distant and recent mass, per layer (they add up to 1)."""
    return {part: mean_over_heads(result, f"{part}_mass") for part in ("sink", "distant", "recent")}


def answer_token(loaded: LoadedModel, prompt: str, answer: str) -> tuple[int, str]:
    """Id and text of the first token of `answer` written right after `prompt`. A space is put in front when the
    prompt does not end in whitespace, as a writer would (the tokenizer folds it into the word: " Marigold")."""
    answer = answer.strip()
    if not answer:
        raise AnalysisError("the expected answer is empty")
    prefix = "" if prompt[-1:].isspace() else " "
    first = loaded.tokenizer(prefix + answer, add_special_tokens=False)["input_ids"][0]
    return first, loaded.tokenizer.decode([first], clean_up_tokenization_spaces=False)


def mean_over_heads(result: TemperatureResult, name: str) -> np.ndarray:
    """[layer] mean over heads of one statistic (geometric mean for top_ratio, which is a ratio)."""
    values = result.heads[name]
    if name == "top_ratio":
        return np.exp(result.heads["log_top_ratio"].mean(axis=-1))
    return values.mean(axis=-1)

