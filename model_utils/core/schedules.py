"""Published length-dependent attention temperature schedules, as logit multipliers m (T = 1 / m). Past their
reference length every one multiplies the logits by m >= 1: it SHARPENS attention (a popular explanation says the
opposite). `Schedule` makes one of them a per-query-position multiplier the engine applies in place of 1 / T."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from model_utils.core.errors import AnalysisError
from model_utils.core.softmax import MAX_TEMPERATURE, MIN_TEMPERATURE


def yarn_multiplier(scale):
    """YaRN: m = (0.1 ln s + 1)^2 for a context scale factor s > 1, else 1.

    q and k are each multiplied by 0.1 ln s + 1, so the logits get its square. Source: Peng et al. 2023,
    "YaRN: Efficient Context Window Extension of Large Language Models", eq. 22; transformers
    `modeling_rope_utils._compute_yarn_parameters` (attention_factor). Constant over positions.
    """
    s = np.asarray(scale, dtype=np.float64)
    per_side = np.where(s > 1.0, 0.1 * np.log(np.maximum(s, 1.0)) + 1.0, 1.0)
    return per_side**2


def qwen_logn_multiplier(position, train_length):
    """Qwen-1 log-n attention: m = log_L(p + 1) on the query at 0-based position p when p + 1 > L, else 1.

    L is the training length. Source: Qwen-7B `modeling_qwen.py`, `use_logn_attn` (logn_list).
    """
    p1 = np.asarray(position, dtype=np.float64) + 1.0
    return np.where(p1 > train_length, np.log(np.maximum(p1, 1.0)) / math.log(train_length), 1.0)


def llama4_multiplier(position, floor_scale=8192, attn_scale=0.1):
    """Llama 4 attention temperature tuning: m = attn_scale * ln(floor((p + 1) / floor_scale) + 1) + 1.

    Applied to the query at 0-based position p, in Llama 4's NoPE layers only.
    Source: transformers `models/llama4/modeling_llama4.py` (Llama4TextAttention, attn_temperature_tuning).
    """
    p1 = np.asarray(position, dtype=np.float64) + 1.0
    return attn_scale * np.log(np.floor(p1 / floor_scale) + 1.0) + 1.0


def ssmax_multiplier(n, s):
    """Scalable-Softmax (SSMax): m = s * ln n for a query that sees n keys (s is learned; s = 1 / ln L gives
    m = 1 at length L). Source: Nakanishi 2025, "Scalable-Softmax Is Superior for Attention", arXiv 2501.19399.
    """
    return s * np.log(np.asarray(n, dtype=np.float64))


def logn_multiplier(n, base=512):
    """log-n scaling for entropy invariance: m = ln n / ln base for a query that sees n keys.

    Sources: Chiang & Cholak 2022, "Overcoming a Theoretical Limitation of Self-Attention";
    Su Jianlin, "Entropy invariance and the scale of attention" (kexue.fm 8823).
    """
    return np.log(np.asarray(n, dtype=np.float64)) / math.log(base)


@dataclass(frozen=True, kw_only=True)
class ScheduleInfo:
    """How a schedule maps 0-based query positions to multipliers, given its one knob; what it is and where it
    comes from, in words."""

    multiplier: Callable[[np.ndarray, float], np.ndarray]
    knob: str  # the knob's name, as shown to users
    default: float
    formula: str  # the multiplier in words, with {value} where the knob's value goes: see formula_for
    source: str
    applied: str  # what the explorer applies, next to what the publication does (the page and --help show it)

    def formula_for(self, parameter: float | None = None) -> str:
        """The formula with the knob's value written in (the default when None): 'ln n / ln 1024'."""
        return self.formula.format(value=f"{self.default if parameter is None else parameter:g}")


SCHEDULES = {
    "yarn": ScheduleInfo(
        multiplier=lambda positions, scale: yarn_multiplier(scale) * np.ones_like(positions),
        knob="scale",
        default=4.0,
        formula="(0.1 ln s + 1)^2 with s = {value}, the same at every position",
        source="Peng et al. 2023, YaRN, eq. 22",
        applied=(
            "As a schedule, only YaRN's attention factor is applied (every logit times (0.1 ln s + 1)^2), on the "
            "model's own rotary positions; YaRN's RoPE interpolation, which stretches the rotary positions by s and "
            "is what the factor was fitted with, is left out. The whole recipe, interpolation and factor, runs as "
            "the RoPE recipe yarn:S (the Context length page's form, --rope yarn:S), and the interpolation alone "
            "as yarn-rope:S.")),
    "qwen-logn": ScheduleInfo(
        multiplier=lambda positions, length: qwen_logn_multiplier(positions, length),
        knob="train_length",
        default=512.0,
        formula="log_{value}(p + 1) on the query at position p when p + 1 > {value}, else 1",
        source="Qwen-7B modeling_qwen.py, use_logn_attn",
        applied=(
            "Applied as Qwen-7B does, on the query at each position in every layer; Qwen-7B pairs it with dynamic"
            " NTK RoPE scaling, which is not applied here.")),
    "llama4": ScheduleInfo(
        multiplier=lambda positions, floor: llama4_multiplier(positions, floor_scale=floor),
        knob="floor_scale",
        default=8192.0,
        formula="0.1 ln(floor((p + 1) / {value}) + 1) + 1 on the query at position p, in NoPE layers",
        source="transformers models/llama4/modeling_llama4.py",
        applied=(
            "Llama 4 applies it only in its NoPE layers (the layers without position encoding); here it is "
            "applied in every layer, including layers that do encode positions (all layers of the bundled model).")),
    "ssmax": ScheduleInfo(
        multiplier=lambda positions, length: ssmax_multiplier(positions + 1.0, 1.0 / math.log(length)),
        knob="train_length",
        default=512.0,
        formula="s ln n for n visible keys, s = 1 / ln {value} (m = 1 at n = {value})",
        source="Nakanishi 2025, Scalable-Softmax, arXiv 2501.19399",
        applied=(
            "SSMax learns s per layer and head while the model trains; here one fixed s = 1 / ln L is applied in "
            "every layer and head, at inference only, to a model trained without it.")),
    "logn": ScheduleInfo(
        multiplier=lambda positions, base: logn_multiplier(positions + 1.0, base=base),
        knob="base",
        default=512.0,
        formula="ln n / ln {value} for n visible keys (below 1, softer, for n < {value})",
        source="Chiang & Cholak 2022; Su Jianlin's entropy-invariance note",
        applied=(
            "Applied at inference only, in every layer, to a model trained without it; the entropy-invariance "
            "argument takes the base to be the length the model was trained at.")),
}


@dataclass(frozen=True)
class Schedule:
    """A published schedule as a per-query-position logit multiplier, usable wherever a temperature is.

    `parameter` is the schedule's one knob (YaRN's scale s, the training length L, Llama 4's floor scale, or
    log-n's base); None takes the default in SCHEDULES.
    """

    name: str
    parameter: float | None = None

    def __post_init__(self):
        if self.name not in SCHEDULES:
            raise ValueError(f"unknown schedule {self.name!r}; choose one of {', '.join(SCHEDULES)}")
        value = self.resolved_parameter
        if not math.isfinite(value) or value <= 1.0:
            raise ValueError(f"schedule {self.name}: {SCHEDULES[self.name].knob} must be a finite number > 1")

    @property
    def resolved_parameter(self) -> float:
        return float(SCHEDULES[self.name].default if self.parameter is None else self.parameter)

    @property
    def label(self) -> str:
        return f"{self.name} ({SCHEDULES[self.name].knob}={self.resolved_parameter:g})"

    @property
    def source(self) -> str:
        return SCHEDULES[self.name].source

    @property
    def formula(self) -> str:
        """The formula with this schedule's parameter written in."""
        return SCHEDULES[self.name].formula_for(self.resolved_parameter)

    def multipliers(self, n_tokens: int) -> np.ndarray:
        """Logit multiplier for each 0-based query position 0..n-1."""
        return SCHEDULES[self.name].multiplier(np.arange(n_tokens, dtype=np.float64), self.resolved_parameter)

    def to_dict(self) -> dict:
        """{"name": "qwen-logn", "parameter": 8192.0}, as a record stores it (None: the default)."""
        return {"name": self.name, "parameter": None if self.parameter is None else float(self.parameter)}

    @classmethod
    def from_dict(cls, data: dict) -> Schedule:
        """A schedule as to_dict writes it; ValueError naming what is missing or wrong."""
        try:
            return cls(data["name"], data["parameter"])
        except (KeyError, TypeError):
            raise ValueError(f"a schedule needs 'name' and 'parameter', got {data!r}") from None


@dataclass(frozen=True)
class LengthTemperature:
    """The one-parameter family the fitter tunes on the plain model: T(p) = 1 + a ln(max(1, (p + 1) / L)) on the
    query at 0-based position p, 1 up to the trained length L and growing (a > 0, softer) or shrinking (a < 0,
    sharper) past it, applied per query position like the published schedules. Not a published schedule."""

    slope: float
    trained_length: int

    def __post_init__(self):
        if not math.isfinite(self.slope) or self.trained_length < 2:
            raise ValueError("LengthTemperature needs a finite slope and a trained length of at least 2")

    @property
    def label(self) -> str:
        return f"log-length T (a={self.slope:g}, L={self.trained_length})"

    def temperatures(self, n_tokens: int) -> np.ndarray:
        ratio = np.maximum(1.0, (np.arange(n_tokens, dtype=np.float64) + 1.0) / self.trained_length)
        return 1.0 + self.slope * np.log(ratio)

    def multipliers(self, n_tokens: int) -> np.ndarray:
        temperatures = self.temperatures(n_tokens)
        if temperatures.min() < MIN_TEMPERATURE or temperatures.max() > MAX_TEMPERATURE:
            raise AnalysisError(f"{self.label} reaches T = {temperatures.min():.3g} at {n_tokens:,} tokens, outside "
                                f"[{MIN_TEMPERATURE:g}, {MAX_TEMPERATURE:g}]; use a smaller |a|")
        return 1.0 / temperatures


PositionSchedule = Schedule | LengthTemperature  # a logit multiplier per query position, usable wherever a T is


def spec_label(spec: float | PositionSchedule) -> str:
    """A constant temperature or a schedule as the pages, files and command line name it: "T=0.5", "yarn (scale=2)"."""
    return spec.label if isinstance(spec, PositionSchedule) else f"T={spec:g}"


def logit_multipliers(spec: float | PositionSchedule, n_tokens: int) -> np.ndarray:
    """The logit multiplier of each query position 0..n-1: 1 / T for a constant temperature, else the schedule's."""
    return spec.multipliers(n_tokens) if isinstance(spec, PositionSchedule) else np.full(n_tokens, 1.0 / spec)


@dataclass(frozen=True)
class ScheduleRequest:
    """A schedule as a user asks for it: a name (or 'all' for the five, 'none' for none), and a parameter, or None
    for the default, or 'trained' for the model's trained length (YaRN: the scale factor tokens / trained length).
    The command line's --schedule NAME[:PARAM] and the context-length page's schedule choice both resolve through
    it."""

    name: str
    parameter: float | str | None

    def resolve(self, trained_length: int, n_tokens: int) -> list[Schedule]:
        names = list(SCHEDULES) if self.name == "all" else [] if self.name == "none" else [self.name]
        return [self._one(name, trained_length, n_tokens) for name in names]

    def _one(self, name: str, trained_length: int, n_tokens: int) -> Schedule:
        if self.parameter != "trained":
            return Schedule(name, self.parameter)
        if name != "yarn":
            return Schedule(name, float(trained_length))
        if n_tokens <= trained_length:
            raise AnalysisError(f"yarn:trained scales the context by tokens / trained length = {n_tokens} / "
                                f"{trained_length} <= 1, where YaRN does nothing; run past the trained length, leave "
                                "YaRN out, or give it a scale (yarn:2 on the command line)")
        return Schedule("yarn", n_tokens / trained_length)


def parse_schedule(text: str) -> ScheduleRequest:
    """A schedule as it is typed, NAME[:PARAM] ('qwen-logn:trained', 'yarn:2', 'all', 'none'), as a ScheduleRequest;
    ValueError naming the fix. The command line's --schedule and the lm-eval bridge's schedule= read it."""
    if text == "none":  # fit compares with all five unless told otherwise
        return ScheduleRequest("none", None)
    name, _, parameter = text.partition(":")
    if name != "all" and name not in SCHEDULES:
        raise ValueError(f"unknown schedule {name!r}; choose one of {', '.join(SCHEDULES)}, all or none")
    if parameter in ("", "trained"):
        return ScheduleRequest(name, parameter or None)
    try:
        value = float(parameter)
        if name != "all":
            Schedule(name, value)  # checks the value
    except ValueError as error:
        message = str(error) if "schedule" in str(error) else f"schedule parameter {parameter!r} is not a number"
        raise ValueError(message) from None
    return ScheduleRequest(name, value)
