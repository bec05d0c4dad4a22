"""What an analysis returns: a `Report` of plain numpy data (pickled by the page cache, written as JSON by the
command line), one `TemperatureResult` per temperature or schedule, and the kept queries and keys from which the
engine rebuilds any attention map without running the model again (`model_utils.engine.maps`). It sits on the
lowest floor because the verdicts and the presenters read it, and neither may import the engine."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from model_utils.core.softmax import entropy
from model_utils.core.statistics import MASS_PARTS, REPORTED_STATISTICS, STATISTICS, mass_by_distance
from model_utils.core.views import OfView, View


@dataclass(kw_only=True)
class LayerInputs:
    """What rebuilds any attention map of one layer without running the model again."""

    query: np.ndarray  # [B, H, n, d] float32, after RoPE
    key: np.ndarray  # [B, KV, n, d]
    scaling: float
    sliding: int | None  # the layer's sliding window, None for full attention
    softcap: float | None  # the layer's attention logit soft cap
    far_query: np.ndarray | None = None  # [B, H, n, d] under a distance remapping: q and k at their far positions
    far_key: np.ndarray | None = None  # [B, KV, n, d]


@dataclass(kw_only=True)
class TemperatureResult(OfView):
    """Everything measured under one view (a temperature or a schedule, on a RoPE recipe or not)."""

    view: View
    applied_rope: dict | None  # the recipe as applied (recipe, rope_type, factor, attention_factor); None: none
    loss: float  # mean next-token NLL over every position
    next_token: list[dict]  # top 5 {"token", "prob"} at the last position
    heads: dict[str, np.ndarray]  # statistic -> [layer, head], means over the queries q_start..n-1
    last_rows: np.ndarray  # [layer, head, n] attention of the last query
    last_log_probs: np.ndarray  # [vocab] next-token log-probabilities at the last position
    position_nll: np.ndarray  # [n - 1] NLL of token p + 1 predicted at position p
    position_greedy: np.ndarray  # [n - 1] bool: token p + 1 is the most likely one at position p
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

    def last_distance_profile(self, edges: np.ndarray, layer: int | None = None, sink: bool = True) -> np.ndarray:
        """The last query's attention mass per key-distance bin, mean over heads of `layer` (None: all layers).
        With `sink=False` key 0 is left out of its bin (the farthest), to be shown apart (`last_sink_mass`)."""
        row = self.last_rows.mean(axis=(0, 1)) if layer is None else self.last_rows[layer].mean(axis=0)
        if not sink:
            row = np.concatenate([[0.0], row[1:]])
        return mass_by_distance(row, edges)

    def last_sink_mass(self, layer: int | None = None) -> float:
        """The last query's weight on key 0 (the sink), mean over heads of `layer` (None: all layers)."""
        rows = self.last_rows if layer is None else self.last_rows[[layer]]
        return float(rows[..., 0].mean())

    def to_dict(self, with_buckets: bool = False) -> dict:
        values = {name: self.heads[name].tolist() for name in REPORTED_STATISTICS}  # [layer][head] floats at once
        heads = [[{name: values[name][layer][head] for name in REPORTED_STATISTICS} for head in range(len(by_head))]
                 for layer, by_head in enumerate(values["entropy"])]
        schedule = self.view.schedule
        document = {"temperature": self.temperature, "label": self.label,
                    "schedule": None if schedule is None else schedule.label, "rope": self.applied_rope,
                    "loss": self.loss, "next_token": self.next_token, "heads": heads}
        if with_buckets:
            document["buckets"] = {
                "nll": [None if math.isnan(v) else float(v) for v in self.bucket_nll],
                "heads": {name: self.bucket_heads[name].tolist() for name in REPORTED_STATISTICS},
                "distance_profile": self.distance_profile.mean(axis=1).tolist(),  # [bucket][bin] over all layers
            }
        return document


MIN_SPREAD_RISE = 0.01  # a head whose normalized entropy rises less than this from the sharpest to the softest T is
# no pick: nothing a reader could see has changed


def runner_up_ratio(weights: np.ndarray) -> float:
    """The largest weight of a row over the second largest (inf where that is 0): what softmax(s / T) makes
    exp(gap / T) for one head."""
    first, second = np.sort(np.asarray(weights, dtype=np.float64))[::-1][:2]
    return float(first / second) if second > 0 else math.inf


@dataclass(frozen=True, kw_only=True)
class HeadPick:
    """The (layer, head) whose attention for one query spreads most from the sharpest to the softest constant
    temperature: the largest rise of the query row's normalized entropy H / ln(visible keys), the number the maps'
    titles give. Bounded, unlike the top / runner-up ratio, so a head near one-hot at both ends (a sink head, whose
    ratio can still fall 10^10-fold) is not picked over one whose shading visibly spreads. Pairs: (sharpest T,
    softest T)."""

    layer: int
    head: int
    query: int
    temperatures: tuple[float, float]
    entropies: tuple[float, float]  # the query row's normalized entropy at each
    ratios: tuple[float, float]  # its top / runner-up weight ratio at each (runner_up_ratio)

    @property
    def ratio_factor(self) -> float:
        """How many times the ratio at the sharpest T is the ratio at the softest."""
        return self.ratios[0] / self.ratios[1]

@dataclass(frozen=True, kw_only=True)
class Cut:
    """How a prompt longer than the limit was cut to keep its question: its first `head_tokens` tokens, then its
    question (the sentence or line that asks, `question_tokens` tokens from `question_start` in the text), with the
    `left_out_chars` characters between them left out. question_tokens = 0: the question was too long to keep apart,
    so the prompt was cut at its end like any other text."""

    limit: int  # the tokens the prompt was cut to, at most
    head_tokens: int
    question_tokens: int
    question_start: int  # character offset of the question in the text
    left_out_chars: int
    question: str


@dataclass(kw_only=True)
class Report:
    """An analysis of one text at several temperatures or schedules (the module docstring)."""

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
    trained_length: int
    beyond_trained: bool
    bucket_size: int | None  # None: one bucket, q_start..n-1; else boundaries at its multiples
    buckets: list[tuple[int, int]]  # [start, stop) query positions
    distance_edges: np.ndarray
    kernel: str  # "fused" (fused_attention.c) or "torch"
    multipliers: np.ndarray = field(repr=False)  # [V, n] per-view logit multipliers
    kept: dict[int, LayerInputs] = field(default_factory=dict, repr=False)
    map_rows: list[int] = field(default_factory=list, repr=False)  # per view, its batch row in the kept arrays
    offsets: list[tuple[int, int]] = field(default_factory=list, repr=False)  # per token, its characters in the text
    cut: Cut | None = None  # a prompt cut to keep its question (AnalysisRequest.cut = "middle")

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

    def temperature_ends(self) -> tuple[int, int] | None:
        """The results at the sharpest and the softest constant temperature, or None with fewer than two."""
        constants = [i for i, result in enumerate(self.results) if result.temperature is not None]
        if len(constants) < 2:
            return None
        return (min(constants, key=lambda i: self.results[i].temperature),
                max(constants, key=lambda i: self.results[i].temperature))

    def visible_keys(self, layer: int, query: int) -> int:
        """How many keys `query` sees in `layer`: every key up to itself, or its sliding window's (a kept layer)."""
        sliding = self.kept[layer].sliding if layer in self.kept else None
        return min(query + 1, sliding) if sliding else query + 1

    def head_pick(self, sharp: np.ndarray, soft: np.ndarray, query: int) -> HeadPick | None:
        """The head whose attention for `query` spreads most with T (HeadPick), from its rows at the sharpest and
        the softest constant temperature (`sharp`, `soft`: [layer, head, query + 1], as engine.maps gives them).
        None with fewer than two constant temperatures, for a query that sees only itself, or where no head's spread
        rises by MIN_SPREAD_RISE (T acts on no layer, or in none that this query's row shows)."""
        ends = self.temperature_ends()
        if ends is None or query < 1:
            return None
        visible = np.array([self.visible_keys(layer, query) for layer in range(sharp.shape[0])], dtype=np.float64)
        spread = [entropy(rows) / np.log(visible)[:, None] for rows in (sharp, soft)]  # [layer, head] each
        rise = np.where(visible[:, None] > 1, spread[1] - spread[0], -np.inf)
        layer, head = (int(i) for i in np.unravel_index(int(np.argmax(rise)), rise.shape))
        if rise[layer, head] < MIN_SPREAD_RISE:
            return None
        return HeadPick(layer=layer, head=head, query=query,
                        temperatures=tuple(self.results[i].temperature for i in ends),
                        entropies=(float(spread[0][layer, head]), float(spread[1][layer, head])),
                        ratios=(runner_up_ratio(sharp[layer, head]), runner_up_ratio(soft[layer, head])))

    def multiplier_range(self, view: int) -> tuple[float, float]:
        """Smallest and largest logit multiplier of a result over the measured queries (q_start..n-1)."""
        values = self.multipliers[view, self.q_start :]
        return float(values.min()), float(values.max())

    def to_dict(self) -> dict:
        with_buckets = self.bucket_size is not None
        document = {"model": self.model, "n_tokens": self.n_tokens, "tokens": self.tokens,
                    "truncated": self.truncated, "mode": self.mode, "window": self.window, "q_start": self.q_start,
                    "n_queries": self.n_queries, "layers": self.layers, "trained_length": self.trained_length,
                    "beyond_trained": self.beyond_trained, "seconds": self.seconds, "kernel": self.kernel,
                    "results": [result.to_dict(with_buckets) for result in self.results]}
        if with_buckets:
            document |= {"bucket_size": self.bucket_size, "buckets": [list(b) for b in self.buckets],
                         "distance_bins": self.distance_edges.tolist()}
        if self.cut is not None:
            document["cut"] = asdict(self.cut)
        return document

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


