"""RoPE length-extension recipes as users name them (`yarn:2`, `dynamic:2`), and the transformers
`rope_parameters` each one stands for: the engine builds the model's own rotary embedding from them, so the
frequencies are transformers' code, never ours. Standard library only: the pages and the command line check a
recipe before torch is imported."""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_FACTOR = 1024.0  # a scale factor past this stretches a 2k model to 2M positions: surely a typing mistake


@dataclass(frozen=True, kw_only=True)
class RecipeInfo:
    """What a recipe is, in words, and how it maps onto transformers' rope_parameters."""

    rope_type: str  # transformers' rope_type
    name: str  # what the pages call it
    formula: str
    source: str
    extra: tuple[tuple[str, object], ...] = ()  # fields beyond rope_type and factor; "trained" is the trained length
    temperature: bool = False  # the recipe itself multiplies the logits (YaRN's attention factor)


RECIPES = {
    "yarn": RecipeInfo(
        rope_type="yarn", name="YaRN",
        formula=("NTK-by-parts: rotary dimensions that turn more than beta_fast = 32 times within the trained length L "
                 "keep their frequency, those turning less than beta_slow = 1 time are divided by s, a linear ramp "
                 "in between; and cos, sin times 0.1 ln s + 1, so every logit times (0.1 ln s + 1)^2"),
        source="Peng et al. 2023, YaRN (arXiv 2309.00071), section 3; transformers _compute_yarn_parameters",
        extra=(("original_max_position_embeddings", "trained"),), temperature=True),
    "yarn-rope": RecipeInfo(
        rope_type="yarn", name="YaRN's interpolation alone",
        formula="YaRN's NTK-by-parts interpolation with attention_factor = 1: no temperature of its own",
        source="Peng et al. 2023, YaRN, section 3.2; transformers _compute_yarn_parameters",
        extra=(("original_max_position_embeddings", "trained"), ("attention_factor", 1.0))),
    "dynamic": RecipeInfo(
        rope_type="dynamic", name="dynamic NTK-aware scaling",
        formula=("the rotary base theta becomes theta * (s n / L - (s - 1))^(d / (d - 2)) once the pass holds n > L "
                 "tokens (d the rotary dimensions): high frequencies kept, low ones interpolated"),
        source="bloc97 and emozilla 2023 (credited in transformers _compute_dynamic_ntk_parameters)"),
    "linear": RecipeInfo(
        rope_type="linear", name="linear position interpolation",
        formula="every position divided by s before the rotation",
        source="Chen et al. 2023, Position Interpolation (arXiv 2306.15595); transformers "
               "_compute_linear_scaling_rope_parameters"),
    "llama3": RecipeInfo(
        rope_type="llama3", name="Llama 3.1 frequency scaling",
        formula=("wavelengths longer than L / low_freq_factor (1) divided by s, shorter than L / high_freq_factor (4) "
                 "kept, smoothly in between"),
        source="Meta, Llama 3.1 (2024); transformers _compute_llama3_parameters",
        extra=(("original_max_position_embeddings", "trained"), ("low_freq_factor", 1.0),
               ("high_freq_factor", 4.0))),
}


@dataclass(frozen=True)
class Rope:
    """A RoPE recipe with its scale factor s > 1: positions as the recipe stretches them for s times the trained
    length."""

    kind: str
    factor: float

    def __post_init__(self):
        if self.kind not in RECIPES:
            raise ValueError(f"unknown RoPE recipe {self.kind!r}; choose one of {', '.join(RECIPES)}")
        factor = self.factor
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor) \
                or not 1.0 < factor <= MAX_FACTOR:
            raise ValueError(f"RoPE recipe {self.kind}: the scale factor must be a number above 1 and at most "
                             f"{MAX_FACTOR:g} (s = the length you run at / the trained length), got {factor!r}")
        object.__setattr__(self, "factor", float(factor))

    @property
    def label(self) -> str:
        """What pages, tables and pass labels call the recipe; never parsed back (from_dict reads a recipe)."""
        return f"{self.kind} (s={self.factor:g})"

    def to_dict(self) -> dict:
        return {"recipe": self.kind, "factor": self.factor}

    @classmethod
    def from_dict(cls, data: dict) -> Rope:
        """A recipe from to_dict's form or from the engine's applied form (which adds rope_type and the attention
        factor, both derived from the recipe)."""
        try:
            return cls(data["recipe"], data["factor"])
        except (KeyError, TypeError):
            raise ValueError(f"a RoPE recipe needs 'recipe' and 'factor', got {data!r}") from None

    @property
    def rope_type(self) -> str:
        return RECIPES[self.kind].rope_type

    def parameters(self, own: dict, trained_length: int) -> dict:
        """transformers' rope_parameters for this recipe on a model whose own (default) parameters are `own`: its
        rope_theta and partial_rotary_factor kept, the recipe's fields added."""
        kept = {key: own[key] for key in ("rope_theta", "partial_rotary_factor") if key in own}
        extra = {key: trained_length if value == "trained" else value for key, value in RECIPES[self.kind].extra}
        return kept | {"rope_type": self.rope_type, "factor": self.factor} | extra


def parse_rope(text: str) -> Rope:
    """'yarn:2' -> Rope('yarn', 2.0); ValueError naming the fix for anything else."""
    kind, colon, factor = str(text).strip().partition(":")
    if kind not in RECIPES:
        raise ValueError(f"unknown RoPE recipe {kind!r}; choose one of {', '.join(RECIPES)} (e.g. yarn:2)")
    if not colon or not factor:
        raise ValueError(f"RoPE recipe {kind!r} needs a scale factor: {kind}:S with S > 1, e.g. {kind}:2")
    try:
        value = float(factor)
    except ValueError:
        raise ValueError(f"RoPE recipe {kind}: scale factor {factor!r} is not a number") from None
    return Rope(kind, value)
