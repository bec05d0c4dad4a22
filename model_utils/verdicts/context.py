"""The context-length verdict, in plain words and a few big numbers: of one sweep document
(core.records.sweep.SweepDocument) or, through verdicts/corpus.py, of a corpus summary. The numbers come from
verdicts/past.py; sweep_document stores them as the document's verdict, so a page that reads the file needs no
per-position loss. Every saving is "saves" = NLL at T = 1 minus NLL (positive = better).

The page's API: `context_verdict(document) -> ContextVerdict | None`; `ContextVerdict.headline()` (at most four
`Headline`s: the held-out gain with its interval, where the loss breaks, the best recipe's saving, the share of the
loss rise recovered), `.sentences()` (the full verdict bullets), `.to_dict()` (the JSON verdict); and
`entropy_with_length(document)` for the published entropy argument next to what the sweep measured."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

import numpy as np

from model_utils.core.bootstrap import BOOTSTRAP_BLOCK, fold_sums
from model_utils.core.records import field
from model_utils.core.records.sweep import SweepDocument, SweepResult
from model_utils.verdicts import NO_VALUE
from model_utils.verdicts.decomposition import FAMILIES, Decomposition, Lever, percent_of_rise
from model_utils.verdicts.layers import LayerTypeMass, layer_groups
from model_utils.verdicts.past import (
    FORMAT,
    OLDER_FORMATS,
    DocumentFolds,
    PastData,
    PositionFolds,
    ViewInfo,
    entropy_trend,
    length_numbers,
)

SEED = 0  # of the verdict's resamples: the same sweep always gives the same verdict
PUBLISHED_ENTROPY = ("Published argument (Chiang & Cholak 2022; Nakanishi 2025, Scalable-Softmax): with attention "
                     "scores of a fixed spread, attention entropy grows like ln n as the context grows, so attention "
                     "spreads thin; the length schedules multiply the logits by m >= 1 to counter that.")
SAVES = "saves = NLL at T = 1 minus NLL, positive = better"
ONE_TEXT = "one model, one text"  # the scope of a sweep's numbers


@dataclass(frozen=True, kw_only=True)
class Headline:
    """One big number of a verdict: what it is, its value as shown, and how it was measured."""

    label: str
    value: str
    help: str


@dataclass(frozen=True, kw_only=True)
class ContextVerdict:
    """What a sweep (or a corpus) says past the model's trained length, every number computed from the data; the
    fields are the JSON verdict's keys (verdicts/past.py says how each is computed). Savings in nats per token
    past the trained length against T = 1 on the model's own positions; intervals 95%, None without resamples."""

    format: int
    scope: str  # "one model, one text" or "N documents"
    trained_length: int
    past: list[int]  # [start, stop) of the positions past the trained length
    before: list[int]  # the second half of the trained context, the loss rise's baseline
    nll_before: float  # mean NLL at T = 1 there and past the trained length
    nll_past: float
    rise: float
    bootstrap: str  # what the resamples draw
    in_context_nll: list[float]  # [lowest, highest] bucket mean at T = 1 inside the trained context
    breaks_at: int | None  # the first bucket start past the trained length whose loss leaves that range
    breaks: dict | None  # bucket, ratio (start / trained length), nll, interval, earlier (past buckets before)
    grid: list[float]  # the constant temperatures tried on the model's own positions
    gain_oracle: dict | None  # saved, interval: best T per bucket, chosen and scored on the same positions
    gain_held_out: dict | None  # saved, interval, method: best T per bucket, chosen and scored apart
    held_out_missing: str | None  # why there is no held-out gain, where there is none
    gain_constant: dict | None  # temperature, saved, interval, worse_buckets, buckets, held_out
    share_recovered: float | None  # gain_held_out / rise
    best: list[dict]  # per past bucket: bucket, temperature, saved, temperature_interval
    grid_edges: list[dict]  # recipe, bucket (None: the whole past region), temperature, edge
    grid_edge: bool
    attention: dict | None  # untrained (per past bucket: mass, share, uniform_share), beyond_uniform_from, entropy
    layer_types: tuple[LayerTypeMass, ...] | None  # the untrained mass per layer type, where there are several
    schedules: list[dict]  # label, saved, interval, m_past, m_trained_context
    decomposition: Decomposition  # the levers' shares of the rise, the dominant one, and the table (rows)
    entropy_trend: dict | None  # entropy_with_length's numbers

    @classmethod
    def from_dict(cls, numbers: Mapping) -> ContextVerdict:
        """The verdict of this format, or of format 2, which had no layer types (read as None)."""
        older = {"layer_types": None} if numbers.get("format") in OLDER_FORMATS else {}
        found = {item.name: field(older | dict(numbers), item.name, "context verdict") for item in fields(cls)}
        layer_types = found["layer_types"]
        return cls(**found | {"decomposition": Decomposition.from_dict(found["decomposition"]),
                              "layer_types": None if layer_types is None else
                              tuple(LayerTypeMass.from_dict(entry) for entry in layer_types)})

    def to_dict(self) -> dict:
        """The JSON verdict (a sweep document's and a corpus summary's verdict)."""
        found = {item.name: getattr(self, item.name) for item in fields(self)}
        return found | {"decomposition": self.decomposition.to_dict(),
                        "layer_types": None if self.layer_types is None else
                        [entry.to_dict() for entry in self.layer_types]}

    def answer(self) -> str:
        """The answer first: which lever brings the loss back past the trained length, and the temperature's share
        (Decomposition.sentence, chosen by the numbers)."""
        return self.decomposition.sentence()

    def headline(self) -> list[Headline]:
        """At most four big numbers, led by the dominant lever (what recovers the rise, with its share): then the
        best constant temperature alone with its interval (the oracle, named so, where it could not be scored
        apart), where the loss breaks, and the best recipe when it is not the lead."""
        lead = self._lever_headline(self.decomposition.lever(self.decomposition.dominant))
        said = [lead, self._gain_headline(), self._break_headline()]
        if self.decomposition.dominant != "recipe":
            said.append(self._recipe_headline())
        return [item for item in said if item is not None][:4]

    @property
    def held_out_scoring(self) -> str | None:
        """How the best temperature's saving was scored apart from its choice, in a few words ("held out over
        documents", "cross-fit on one text"); None where it could not be."""
        return None if self.gain_held_out is None else self.gain_held_out["short"]

    @property
    def remaps(self) -> bool:
        """Whether a view of the decomposition remaps distances (its untrained mass is then given twice)."""
        return any(row.get("remaps") for row in self.decomposition.rows)

    def decomposition_rows(self) -> list[dict[str, str]]:
        """The decomposition past the trained length as table rows, each view with what it is, what it saves
        against T = 1 on the model's own positions (95% interval) and where it leaves the untrained-distance mass;
        empty without a RoPE recipe (then it only repeats the in-sample sentence)."""
        if not any(row["kind"] in ("recipe", "own_temperature") for row in self.decomposition.rows):
            return []

        def saved(row: dict) -> str:
            low, high = row["interval"] or (None, None)
            return f"{row['saved']:+.3f}" + ("" if low is None else f" ({low:+.3f} to {high:+.3f})")

        def mass(row: dict) -> str:
            raw, effective = row["untrained_mass_past"], _effective_mass(row)
            moved = f" ({row['untrained']})" if row.get("untrained") and row["kind"] != "reference" else ""
            if raw is None:
                return NO_VALUE
            if not row.get("remaps"):
                return f"{raw:.3f}{moved}"
            said = "not measured" if effective is None else f"{effective:.3f}{moved}"
            return f"{said} on the remapped distances; {raw:.3f} in the text"

        by_type = {} if not self.layer_types else {"by layer type": self._by_layer_type}
        return [{"view": row["label"], "what it is": row["what"],
                 "saves past the trained length (95% interval)": saved(row),
                 "untrained-distance mass past it": mass(row)}
                | {f"untrained-distance mass past it, {name}": cell(row) for name, cell in by_type.items()}
                for row in self.decomposition.rows if row["saved"] is not None]

    def _by_layer_type(self, row: dict) -> str:
        """A decomposition row's untrained-distance mass past the trained length per layer type ('sliding 512:
        0.000; global: 0.312'), NO_VALUE where the row has no pass of its own."""
        masses = row.get("untrained_mass_by_layer_type")
        if masses is None:
            return NO_VALUE
        return "; ".join(f"{kind.short}: {mass:.3f}" for kind, mass in zip(self.layer_types, masses, strict=True))

    def sentences(self) -> list[str]:
        """The verdict in full, one bullet each: the held-out gain, where the loss breaks, the in-sample numbers,
        the best temperature per bucket and the grid's edge, where attention goes, the decomposition, the
        schedules, and the published entropy argument next to what was measured."""
        said = [self.answer(), self._held_out_sentence(), self._break_sentence(), self._in_sample_sentence(),
                *self._best_sentences(), self._edge_sentence(), *self._attention_sentences(),
                self._layer_type_sentence(), self._decomposition_sentence(), self.families_sentence(),
                self._schedules_sentence()]
        if self.entropy_trend is not None:
            said += EntropyTrend(**self.entropy_trend).sentences()
        return [sentence for sentence in said if sentence]

    # --- big numbers ----------------------------------------------------------------------------------------------

    def _lever_headline(self, lever: Lever | None) -> Headline | None:
        if lever is None or lever.saved is None:
            return None
        share = "" if lever.share_of_rise is None else f" ({percent_of_rise(lever)})"
        return Headline(label=f"Brings the loss back: {lever.label}",
                        value=f"{lever.saved:+.3f} nats/token" + _short(lever.interval),
                        help=f"{lever.what}: {SAVES}, per token over {_span(self.past)} against T = 1 on the "
                             f"model's own positions{share}; the loss rose {self.rise:.2f} nats per token from "
                             f"{_span(self.before)} to past the trained length ({self.scope}).")

    def _gain_headline(self) -> Headline | None:
        gain = self.gain_held_out or self.gain_oracle
        if gain is None:
            return None
        how = (f"the best T per bucket, {gain['method']}" if self.gain_held_out is not None else
               "the oracle, in-sample: the best T per bucket chosen and scored on the same positions (no "
               "out-of-sample gain could be measured)")
        share = "" if self.share_recovered is None else f", {self.share_recovered:.1%} of the loss rise"
        return Headline(label=f"Best temperature alone ({gain['short']})" if self.gain_held_out is not None
                        else "Best temperature alone (oracle, in-sample)",
                        value=f"{gain['saved']:+.3f} nats/token" + _short(gain["interval"]),
                        help=f"{SAVES[0].upper()}{SAVES[1:]}, per token over {_span(self.past)}"
                             + (f", 95% interval in brackets ({self.bootstrap})" if gain["interval"] else "")
                             + f"; {how}{share} ({self.scope}).")

    def _break_headline(self) -> Headline:
        low, high = self.in_context_nll
        rule = (f"lies above every bucket inside the trained context ({low:.2f}-{high:.2f} nats per token at T = 1) "
                f"beyond its own 95% interval ({self.scope})")
        if self.breaks is None:
            return Headline(label="Loss at T = 1 breaks at", value="does not break",
                            help=f"No bucket past the trained length, up to position {self.past[1] - 1:,}, {rule}.")
        return Headline(label="Loss at T = 1 breaks at",
                        value=f"{self.breaks_at:,} ({self.breaks['ratio']:.3g}x)",
                        help=f"Position {self.breaks_at:,}, {self.breaks['ratio']:.3g}x the trained length of "
                             f"{self.trained_length:,}: the first bucket past it that {rule}.")

    def _recipe_headline(self) -> Headline | None:
        """The recipe the answer sentence names (Decomposition.lever: the interpolation alone where it ran, its
        attention factor being a temperature on top), so that the number and the sentence agree."""
        lever = self.decomposition.lever("recipe")
        if lever is None:
            return None
        return Headline(label=f"Best recipe: {lever.label}", value=f"{lever.saved:+.3f} nats/token"
                        + _short(lever.interval),
                        help=f"{lever.what}: {SAVES}, per token over {_span(self.past)} against T = 1 on the "
                             f"model's own positions ({self.scope}).")

    # --- sentences ------------------------------------------------------------------------------------------------

    def _held_out_sentence(self) -> str | None:
        if self.gain_held_out is None:
            return None if self.gain_oracle is None else (
                f"No held-out gain could be measured ({self.scope}): {self.held_out_missing}; the in-sample numbers "
                "below choose and score on the same positions.")
        gain = self.gain_held_out
        said = (f"{gain['short'].capitalize()} ({self.scope}): the best T per bucket, {gain['method']}, saves "
                f"{gain['saved']:+.3f} nats "
                f"per token past the trained length against T = 1{_bracket(gain['interval'], '; ' + SAVES)}")
        levels = (f"{self.nll_before:.2f} nats per token at T = 1 ({_span(self.before)}) to {self.nll_past:.2f} past "
                  f"the trained length ({_span(self.past)})")
        if self.share_recovered is None:
            return f"{said}; the loss does not rise there, from {levels}."
        return f"{said}: {self.share_recovered:.1%} of the loss rise, from {levels}."

    def _break_sentence(self) -> str:
        low, high = self.in_context_nll
        if self.breaks is None:
            return (f"The loss at T = 1 does not break ({self.scope}): up to position {self.past[1] - 1:,} no bucket "
                    f"past the trained length rises above the range of the buckets inside it ({low:.2f}-{high:.2f} "
                    "nats per token) beyond its own 95% interval.")
        found = self.breaks
        bounds = found["interval"]
        said = (f"The loss at T = 1 breaks at position {self.breaks_at:,}, {found['ratio']:.3g}x the trained length "
                f"of {self.trained_length:,} ({self.scope}): {found['nll']:.2f} nats per token for "
                f"{_span(found['bucket'])}" + (f" (95% interval {bounds[0]:.2f}-{bounds[1]:.2f})" if bounds else "")
                + f", above every bucket inside the trained context ({low:.2f}-{high:.2f})")
        earlier = found["earlier"]
        if earlier and earlier[1] > high:  # a mean above the range whose interval still reaches into it
            return said + (f"; the past buckets before it ({earlier[0]:.2f}-{earlier[1]:.2f}) reach above that "
                           f"range already, up to {earlier[1]:.2f}, in their means but not beyond their 95% "
                           "intervals: the loss leaves the range before the break; the break is where that is "
                           "sure.")
        return said + (f"; the past buckets before it: {earlier[0]:.2f}-{earlier[1]:.2f}." if earlier else ".")

    def _in_sample_sentence(self) -> str | None:
        if self.gain_oracle is None:
            return None
        oracle, constant = self.gain_oracle, self.gain_constant
        held = constant["held_out"]
        return (f"In-sample, for comparison ({self.scope}): the oracle (the best T per bucket chosen and scored on "
                f"the same positions) saves {oracle['saved']:+.3f}{_bracket(oracle['interval'])}; one constant "
                f"temperature for the whole past region, T = {constant['temperature']:g}, saves "
                f"{constant['saved']:+.3f} in-sample"
                + (f" and {held['saved']:+.3f} held out{_bracket(held['interval'])}" if held else "")
                + f", and is worse than T = 1 in {constant['worse_buckets']} of the {constant['buckets']} past "
                  "buckets.")

    def _best_sentences(self) -> list[str]:
        if not self.best:
            return []
        if all(entry["temperature"] == 1 for entry in self.best):
            return ["No temperature tried does better than T = 1 in any bucket past the trained length "
                    "(in-sample)."]
        where = ", ".join(f"{t:g} for {_span([start, stop])}" for t, start, stop in _runs(self.best))
        above = sum(entry["temperature"] > 1 for entry in self.best)
        below = sum(entry["temperature"] < 1 for entry in self.best)
        said = [f"Best T per bucket past the trained length (in-sample): T = {where}: above 1 (softer) in {above} of "
                f"{len(self.best)} buckets, below 1 (sharper) in {below}."]
        unsure = [entry for entry in self.best if entry["temperature"] != 1 and entry["temperature_interval"]
                  and entry["temperature_interval"][0] <= 1 <= entry["temperature_interval"][1]]
        if unsure:
            said.append(f"In {len(unsure)} of those buckets the 95% interval of the best temperature includes 1: "
                        "there T = 1 is not ruled out.")
        return said

    def _edge_sentence(self) -> str | None:
        groups: dict[tuple, list] = {}
        for edge in self.grid_edges:
            groups.setdefault((edge["recipe"], edge["temperature"], edge["edge"]), []).append(edge["bucket"])
        clauses = []
        for (recipe, temperature, edge), buckets in groups.items():
            runs = _runs([{"bucket": bucket, "temperature": 0} for bucket in buckets if bucket is not None])
            where = [_span([start, stop]) for _, start, stop in runs]
            where += ["the whole past region"] * (None in buckets)
            on = "" if recipe is None else f" on {recipe}"
            clauses.append(f"T = {temperature:g}{on}, the {edge} temperature tried there, is the best for "
                           f"{' and '.join(where)} (the best may lie {'above' if edge == 'largest' else 'below'} "
                           "it)")
        return f"On the grid's edge: {'; '.join(clauses)}." if clauses else None

    def _attention_sentences(self) -> list[str]:
        if self.attention is None:
            return []
        said = []
        rows = self.attention["untrained"]
        if rows:
            first, last = rows[0], rows[-1]
            moves = (f"the untrained-distance mass (sink excluded) goes {first['mass']:.3f} -> {last['mass']:.3f} over "
                     f"the past buckets, {first['share']:.1%} -> {last['share']:.1%} of the non-sink mass")
            start = self.attention["beyond_uniform_from"]
            if start is not None:
                shares = [row["uniform_share"] for row in rows if row["bucket"][0] >= start]
                said.append(f"Attention at T = 1 moves onto keys farther back than the trained length, distances "
                            f"never trained ({self.scope}): {moves}; from position {start:,} on, that share is above "
                            f"what uniform attention over the visible keys would give ({min(shares):.0%}-"
                            f"{max(shares):.0%} there), so the far keys draw more than their number.")
            else:
                said.append(f"Attention at T = 1 keeps mostly to distances it was trained on ({self.scope}): {moves}, "
                            "below what uniform attention over the visible keys would give in every past bucket "
                            f"(up to {max(row['uniform_share'] for row in rows):.0%}).")
        said.append(_entropy_sentence(self.attention["entropy"], self.scope, self.before))
        return said

    def _layer_type_sentence(self) -> str | None:
        """The untrained-distance mass at T = 1 per layer type, where the model has several, and which layers cannot
        meet an untrained distance at all (a window no longer than the trained length)."""
        if not self.layer_types:
            return None
        parts = [f"{kind.name} ({_layers(kind.layers)}): {kind.untrained_mass[0]:.3f} -> "
                 f"{kind.untrained_mass[-1]:.3f}, {kind.untrained_mass_past:.3f} over the past region"
                 for kind in self.layer_types]
        said = (f"By layer type ({self.scope}), the untrained-distance mass at T = 1 (sink excluded) goes, over the "
                "past buckets: " + "; ".join(parts))
        blind = [kind for kind in self.layer_types if kind.window is not None and kind.window <= self.trained_length]
        if blind:
            said += (f"; a sliding-window layer of {', '.join(f'{kind.window:,}' for kind in blind)} keys, no more "
                     f"than the trained length of {self.trained_length:,}, never sees a key that far back")
        return said + "."

    def _decomposition_sentence(self) -> str | None:
        if not any(row["kind"] in ("recipe", "own_temperature") for row in self.decomposition.rows):
            return None
        reference = self.decomposition.rows[0]
        rows = self.decomposition.rows[1:]
        mass = ""
        if reference["untrained_mass_past"] is not None and reference.get("untrained_constant_range"):
            low, high = reference["untrained_constant_range"]
            mass = (f"; untrained-distance mass past it in brackets, {reference['untrained_mass_past']:.3f} at T = 1 "
                    f"and {low:.3f}-{high:.3f} under the constant temperatures")
        if mass and any(row.get("remaps") for row in rows):
            mass += (", for a distance remapping on the distances it gives the model (in the text, the keys stay as "
                     "far back)")
        parts = [f"{row['label']} {row['saved']:+.3f}{_bracket(row['interval'])}" + _mass_bracket(row)
                 for row in rows if row["saved"] is not None]
        return (f"Decomposition past the trained length ({self.scope}), nats per token saved against T = 1 on the "
                f"model's own positions ({SAVES}{mass}): " + "; ".join(parts) + ".")

    def families_sentence(self) -> str | None:
        """The recipe families side by side, where more than the frequency changes ran (None otherwise): each
        family's recipe that saves the most at T = 1, its share of the rise, and where it leaves the
        untrained-distance mass (for a remapping on the distances it gives and in the text)."""
        decomposition = self.decomposition
        if decomposition.families() in ([], ["frequency"]):
            return None
        rows = {row["label"]: row for row in decomposition.rows}
        parts = []
        for family in decomposition.families():
            lever = decomposition.family_lever(family)
            share = "" if lever.share_of_rise is None else f", {percent_of_rise(lever)}"
            parts.append(f"{FAMILIES[family]}, {lever.label}: {lever.saved:+.3f}{_bracket(lever.interval)}{share}"
                         + _mass_bracket(rows.get(lever.label, {})))
        said = (f"The recipe families past the trained length, each by its recipe that saves the most at T = 1 "
                f"({self.scope}; {SAVES}; untrained-distance mass past it in brackets): " + "; ".join(parts) + ".")
        gap = decomposition.family_gap()
        if gap is None or gap["saved"] is None:
            return said
        return (f"{said} The first two on the same resamples: {gap['label']} {gap['saved']:+.3f}"
                f"{_bracket(gap['interval'])}.")

    def _schedules_sentence(self) -> str | None:
        if not self.schedules:
            return None
        ranked = sorted(self.schedules, key=lambda entry: -entry["saved"])
        return (f"Published schedules past the trained length ({self.scope}; {SAVES}; m is the logit multiplier "
                "there, m > 1 sharpens): " + "; ".join(_schedule_text(entry) for entry in ranked) + ".")


def _layers(layers: Sequence[int]) -> str:
    """'3 layers: 5, 11, 17' or '15 layers: 0-4, 6-10, 12-16': runs of consecutive layers as ranges."""
    runs: list[list[int]] = []
    for layer in layers:
        if runs and runs[-1][1] == layer - 1:
            runs[-1][1] = layer
        else:
            runs.append([layer, layer])
    spans = ", ".join(f"{first}" if first == last else f"{first}-{last}" for first, last in runs)
    return f"{len(layers)} layer{'s' if len(layers) != 1 else ''}: {spans}"


def _effective_mass(row: dict) -> float | None:
    """A decomposition row's untrained-distance mass on the distances the model is given (a verdict stored before
    the remappings has the raw one alone, which is that on the model's own positions)."""
    return row.get("effective_untrained_mass_past", row["untrained_mass_past"])


def _mass_bracket(row: dict) -> str:
    """' [0.020, goes away]': a row's untrained-distance mass past the trained length and its word; a remapping's
    on the remapped distances, with the distances in the text's beside it."""
    if not row.get("untrained"):
        return ""
    said = f"{_effective_mass(row):.3f}"
    if row.get("remaps"):
        raw = row["untrained_mass_past"]
        return f" [{said} on the remapped distances, {row['untrained']}" + \
            ("" if raw is None else f"; {raw:.3f} on the distances in the text") + "]"
    return f" [{said}, {row['untrained']}]"


def _span(bounds: Sequence[int]) -> str:
    return f"positions {bounds[0]:,}-{bounds[1] - 1:,}"


def _bracket(bounds: Sequence[float] | None, tail: str = "") -> str:
    """' (95% interval +0.050 to +0.190)' for a saving with an interval, '' without (then only `tail`)."""
    if bounds is None:
        return f" ({tail.lstrip('; ')})" if tail else ""
    return f" (95% interval {bounds[0]:+.3f} to {bounds[1]:+.3f}{tail})"


def _short(bounds: Sequence[float] | None) -> str:
    """' (+0.050 to +0.190)': a big number's interval."""
    return "" if bounds is None else f" ({bounds[0]:+.3f} to {bounds[1]:+.3f})"


def _runs(best: list[dict]) -> list[tuple[float, int, int]]:
    """Consecutive buckets with the same best temperature, as (T, first position, stop)."""
    runs: list[list] = []
    for entry in best:
        start, stop = entry["bucket"]
        if runs and runs[-1][0] == entry["temperature"] and runs[-1][2] == start:
            runs[-1][2] = stop
        else:
            runs.append([entry["temperature"], start, stop])
    return [tuple(run) for run in runs]


def _schedule_text(entry: dict) -> str:
    text = f"{entry['label']} {entry['saved']:+.3f}{_bracket(entry['interval'])}"
    low, high = entry.get("m_past") or (None, None)
    if low is None:
        return text
    text += f" (m {low:.3g}" + (f"-{high:.3g}" if high != low else "")
    inside = entry.get("m_trained_context")
    if inside and inside[0] < 1:
        text += f"; softer before the trained length, m down to {inside[0]:.3g}"
    return text + ")"


def _entropy_sentence(entropy: dict, scope: str, before: Sequence[int]) -> str:
    """Normalized entropy past the trained length against the range of its bucket means inside the trained
    context: a change within that range is no more than the text's own ups and downs at trained lengths."""
    low, high = entropy["in_context"]
    past_low, past_high = entropy["past"]
    inside = f"the {low:.3f}-{high:.3f} of the buckets inside the trained context"
    if not entropy["above"] and not entropy["below"]:
        return (f"Normalized entropy at T = 1 barely changes ({scope}): past the trained length its bucket means are "
                f"{past_low:.3f}-{past_high:.3f}, within {inside} (mean {entropy['before']:.3f} at {_span(before)}, "
                f"{entropy['past_mean']:.3f} past).")
    moves = []
    if entropy["above"]:
        moves.append(f"rises above {inside} in {entropy['above']} of {entropy['buckets']} past buckets, up to "
                     f"{past_high:.3f} (attention spreads out there)")
    if entropy["below"]:
        where = "it" if moves else inside
        moves.append(f"falls below {where} in {entropy['below']} of {entropy['buckets']} past buckets, down to "
                     f"{past_low:.3f} (attention sharpens there)")
    within = entropy["buckets"] - entropy["above"] - entropy["below"]
    rest = f"; the other {within} stay within it" if within else ""
    return f"Normalized entropy at T = 1 {' and '.join(moves)}{rest} ({scope})."


@dataclass(frozen=True, kw_only=True)
class EntropyTrend:
    """Attention entropy at T = 1 (mean of layers and heads) along the text: from the first to the last bucket
    inside the trained context, and from there to the last bucket past it; in nats and normalized (entropy / ln of
    the keys a query sees)."""

    scope: str
    inside: dict  # "from", "to": [start, stop); "entropy", "normalized": [at "from", at "to"]
    past: dict | None  # the same from the last bucket inside to the last one past the trained length

    def to_dict(self) -> dict:
        return {"scope": self.scope, "inside": self.inside, "past": self.past}

    def sentences(self) -> list[str]:
        """The published argument, said as the published argument, and what this model measured next to it."""
        inside = self.inside
        said = (f"Measured here ({self.scope}; T = 1, mean of layers and heads): inside the trained context attention "
                f"entropy goes {inside['entropy'][0]:.2f} -> {inside['entropy'][1]:.2f} nats from "
                f"{_span(inside['from'])} to {_span(inside['to'])}, while normalized entropy "
                f"{_verb(inside['normalized'])} {inside['normalized'][0]:.3f} -> {inside['normalized'][1]:.3f}")
        if self.past is not None:
            past = self.past
            said += (f"; past it, to {_span(past['to'])}, {past['entropy'][0]:.2f} -> {past['entropy'][1]:.2f} nats, "
                     f"normalized {past['normalized'][0]:.3f} -> {past['normalized'][1]:.3f}")
        return [PUBLISHED_ENTROPY, said + "."]


def _verb(pair: Sequence[float]) -> str:
    first, last = (round(value, 3) for value in pair)
    return "rises" if last > first else "falls" if last < first else "stays at"


def entropy_with_length(document: SweepDocument) -> EntropyTrend | None:
    """The entropy trend at T = 1 of a sweep document, to show next to the published argument that entropy grows
    like ln n; None with fewer than two buckets inside the trained context."""
    reference = document.reference()
    scored = [i for i, nll in enumerate(reference.nll) if nll is not None]
    entropy, normalized = (np.asarray(_bucket_statistic(reference, name))[scored]
                           for name in ("entropy", "normalized_entropy"))
    numbers = entropy_trend(ONE_TEXT, [list(document.buckets[i]) for i in scored], document.trained_length, entropy,
                            normalized)
    return None if numbers is None else EntropyTrend(**numbers)


def _bucket_statistic(result: SweepResult, name: str) -> np.ndarray:
    """[bucket] a statistic's mean over layers and heads."""
    return result.heads[name].mean(axis=(1, 2))


def corpus_scope(documents: int) -> str:
    return f"one model, {documents} document{'s' if documents != 1 else ''}"


def sweep_data(document: SweepDocument, position_nll: Mapping[str, Sequence[float]] | None = None,
               seed: int = SEED) -> PastData:
    """A sweep document as the verdict reads it; with each view's per-position NLL (label -> [n - 1]) its resamples
    are alternating blocks of positions (held-out gains and intervals), without it the bucket means alone."""
    scored = [i for i, nll in enumerate(document.reference().nll) if nll is not None]
    buckets = [list(document.buckets[i]) for i in scored]
    n = document.n_tokens
    weights = np.array([max(0, min(stop, n - 1) - start) for start, stop in buckets], dtype=np.float64)
    results = document.results
    nll = np.array([[result.nll[i] for i in scored] for result in results], dtype=np.float64)
    names = [name for name in ("entropy", "normalized_entropy", "sink_mass", "untrained_mass")
             if all(name in result.heads for result in results)]
    statistics = {name: np.array([_bucket_statistic(result, name)[scored] for result in results]) for name in names}
    if "untrained_mass" in statistics:  # NaN where a pass predates it (it remapped nothing: past.effective_untrained)
        statistics["effective_untrained_mass"] = np.array([
            _bucket_statistic(result, "effective_untrained_mass")[scored] if "effective_untrained_mass" in result.heads
            else np.full(len(scored), np.nan) for result in results])
    past = [i for i, (start, _) in enumerate(buckets) if start >= document.trained_length]
    layer_types = layer_groups(document.layer_windows, [result.heads["untrained_mass"][scored] for result in results]) \
        if all("untrained_mass" in result.heads for result in results) else []
    if position_nll is None:
        resamples = DocumentFolds(sums=(nll * weights)[None][:, :, past], counts=weights[past][None],
                                  weights=np.ones((1, 1)), bootstrap="none",
                                  missing="this file carries no per-position losses (rerun the sweep)")
    else:
        resamples = position_folds(position_nll, [result.label for result in results],
                                   [buckets[i] for i in past], n, seed)
    return PastData(scope=ONE_TEXT, trained_length=document.trained_length, buckets=buckets,
                    weights=weights, views=[_view_info(result) for result in results], nll=nll,
                    statistics=statistics, reported_best=[entry.to_dict() for entry in document.best],
                    resamples=resamples, layer_types=layer_types)


def position_folds(position_nll: Mapping[str, Sequence[float]], labels: list[str], buckets: list[list[int]],
                   n_tokens: int, seed: int = SEED) -> PositionFolds:
    """Each bucket's positions in alternating blocks (core.bootstrap.fold_sums), every view on the same blocks."""
    rng = np.random.default_rng(seed)
    losses = np.array([np.asarray(position_nll[label], dtype=np.float64) for label in labels])  # [view, n - 1]
    folds = [fold_sums(losses[:, start : min(stop, n_tokens - 1)], rng) for start, stop in buckets]
    if not folds:  # a text within the trained length: nothing to resample
        return PositionFolds(sums=np.zeros((1, 0, 2, len(labels))), counts=np.zeros((0, 2)), block=BOOTSTRAP_BLOCK)
    return PositionFolds(sums=np.stack([sums for sums, _ in folds], axis=1),
                         counts=np.array([counts for _, counts in folds]), block=BOOTSTRAP_BLOCK)


def _view_info(result: SweepResult) -> ViewInfo:
    return ViewInfo(label=result.label, temperature=result.temperature, schedule=result.schedule, rope=result.rope,
                    multipliers=None if result.multipliers is None else result.multipliers.to_dict())


def sweep_verdict(document: SweepDocument, position_nll: Mapping[str, Sequence[float]] | None = None,
                  seed: int = SEED) -> dict | None:
    """The verdict's numbers of a sweep document (ContextVerdict.to_dict()), or None when the text does not reach
    past the trained length with a bucket that has a loss (the last token alone predicts nothing), or no bucket
    lies wholly before it. sweep_document passes each pass's per-position NLL, for the held-out gains."""
    return length_numbers(sweep_data(document, position_nll, seed))


def context_verdict(document: SweepDocument) -> ContextVerdict | None:
    """The verdict of a sweep document: the numbers sweep_document stored with it, or, for numbers of an older
    verdict format, what its bucket means alone give (no held-out gain, no intervals)."""
    stored = document.verdict
    if stored is None:
        return None
    if stored.get("format") in (FORMAT, *OLDER_FORMATS):
        return ContextVerdict.from_dict(stored)
    numbers = sweep_verdict(document)
    return None if numbers is None else ContextVerdict.from_dict(numbers)
