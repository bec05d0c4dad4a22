"""RoPE length-extension recipes as users name them (`yarn:2`, `self-extend:2,1024`), in two families: frequency
recipes (RECIPES) stand for transformers' `rope_parameters`, from which the engine builds the model's own rotary
embedding, so the frequencies are transformers' code, never ours; distance remappings (REMAPS) keep the frequencies
and give a far query-key pair another relative distance (`Rope.far_positions`; docs/ARCHITECTURE.md has how the
engine computes it). Numpy and the standard library only: the pages and the command line check a recipe before
torch is imported."""

from __future__ import annotations

import json
import math
from dataclasses import KW_ONLY, dataclass

import numpy as np

MAX_FACTOR = 1024.0  # a scale factor past this stretches a 2k model to 2M positions: surely a typing mistake


@dataclass(frozen=True, kw_only=True)
class RecipeInfo:
    """What a recipe is, in words, and how it maps onto transformers' rope_parameters (frequency recipes) or which
    distances it remaps (REMAPS)."""

    name: str  # what the pages call it
    formula: str
    source: str
    rope_type: str | None = None  # transformers' rope_type; None for a distance remapping
    parameters: tuple[str, ...] = ("factor",)  # Rope's fields the recipe takes, in the order --rope writes them
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



# Distance remappings: the model's own frequencies, another relative distance d' for a far pair (d = i - j >= W);
# Rope.far_positions says where the far block puts each query and key.
REMAPS = {
    "self-extend": RecipeInfo(
        name="Self-Extend (grouped attention)", parameters=("group", "window"),
        formula=("a key within W of the query keeps its distance d = i - j; a farther one is seen from the query at "
                 "floor(i / G) + W - floor(W / G) and the key at floor(j / G), so d' is about W + (d - W) / G"),
        source=("Jin et al. 2024, LLM Maybe LongLM: Self-Extend LLM Context Window Without Tuning (ICML 2024, "
                "arXiv 2401.01325); llama.cpp --grp-attn-n G --grp-attn-w W")),
    "rerope": RecipeInfo(
        name="ReRoPE", parameters=("window",),
        formula="d' = d for d < W, else d' = W: every farther key at the window's distance",
        source="Su 2023, Rectified Rotary Position Embeddings (github.com/bojone/rerope)"),
    "leaky-rerope": RecipeInfo(
        name="leaky ReRoPE", parameters=("window", "slope"),
        formula="d' = d for d < W, else d' = W + (d - W) / K: farther keys grow K times slower",
        source="Su 2023, Rectified Rotary Position Embeddings (Leaky ReRoPE; github.com/bojone/rerope)"),
    "sink-window": RecipeInfo(
        name="attention sinks + window (StreamingLLM)", parameters=("sinks", "window"),
        formula=("the query sees the keys with d < W and the first S keys, nothing else; a first-S key outside the "
                 "window gets the distance a rolling cache of S + W slots gives it, d' = S + W - 1 - j"),
        source=("Xiao et al. 2023, Efficient Streaming Language Models with Attention Sinks (ICLR 2024, "
                "arXiv 2309.17453)")),
}
LETTERS = {"factor": "s", "group": "G", "window": "W", "slope": "K", "sinks": "S"}  # as labels and --rope write them
WHOLE = {"group": 1, "window": 1, "sinks": 0}  # whole-number parameters and their least value
EXAMPLES = {"self-extend": "self-extend:2,1024", "rerope": "rerope:1024", "leaky-rerope": "leaky-rerope:1024,16",
            "sink-window": "sink-window:4,1024"}  # what a message suggests


def recipe_info(kind: str) -> RecipeInfo:
    """The RecipeInfo of a frequency recipe or a distance remapping; ValueError naming the choices otherwise."""
    info = RECIPES.get(kind) or REMAPS.get(kind)
    if info is None:
        raise ValueError(f"unknown RoPE recipe {kind!r}; choose one of {', '.join([*RECIPES, *REMAPS])} "
                         "(e.g. yarn:2, self-extend:2,1024)")
    return info


def usage(kind: str) -> str:
    """How --rope writes the recipe: 'self-extend:G,W'."""
    return f"{kind}:{','.join(LETTERS[name] for name in recipe_info(kind).parameters)}"


@dataclass(frozen=True)
class Rope:
    """A RoPE recipe: a frequency recipe with its scale factor s > 1 (positions as the recipe stretches them for s
    times the trained length), or a distance remapping with its group size G, window W, slope K or sinks S
    (keywords). The fields a recipe does not take are None."""

    kind: str
    factor: float | None = None
    _: KW_ONLY
    group: int | None = None
    window: int | None = None
    slope: float | None = None
    sinks: int | None = None

    def __post_init__(self):
        info = recipe_info(self.kind)
        for name in LETTERS:
            value = getattr(self, name)
            if name in info.parameters:
                object.__setattr__(self, name, _checked(self.kind, name, value))
            elif value is not None:
                raise ValueError(f"RoPE recipe {self.kind} takes {usage(self.kind)}, not {LETTERS[name]}")

    @property
    def remaps(self) -> bool:
        """A distance remapping (REMAPS), not a change of the rotary frequencies."""
        return self.kind in REMAPS

    @property
    def label(self) -> str:
        """What pages, tables and pass labels call the recipe; never parsed back (from_dict reads a recipe)."""
        values = ", ".join(f"{LETTERS[name]}={getattr(self, name):g}" for name in recipe_info(self.kind).parameters)
        return f"{self.kind} ({values})"

    def to_dict(self) -> dict:
        return {"recipe": self.kind} | {name: getattr(self, name) for name in recipe_info(self.kind).parameters}

    def canonical(self) -> str:
        """to_dict as JSON with sorted keys and every number in full (repr): what a cache key hashes, where the
        label rounds to 6 digits."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict) -> Rope:
        """A recipe from to_dict's form or from the engine's applied form (`applied`: to_dict's fields and what
        derives from them)."""
        try:
            info = recipe_info(data["recipe"])
            return cls(data["recipe"], **{name: data[name] for name in info.parameters})
        except (KeyError, TypeError):
            raise ValueError(f"a RoPE recipe needs 'recipe' and its parameters ('factor', or those of "
                             f"{', '.join(REMAPS)}), got {data!r}") from None

    def applied(self, attention_factor: float = 1.0) -> dict:
        """The recipe as the engine applied it, as a report's result carries it: a frequency recipe with its
        rope_type and the attention factor transformers gave it; a remapping with its parameters (factor 1)."""
        if self.remaps:
            return self.to_dict() | {"attention_factor": float(attention_factor)}
        return {"recipe": self.kind, "rope_type": self.rope_type, "factor": self.factor,
                "attention_factor": float(attention_factor)}

    @property
    def rope_type(self) -> str | None:
        return recipe_info(self.kind).rope_type

    def parameters(self, own: dict, trained_length: int) -> dict:
        """transformers' rope_parameters for this frequency recipe on a model whose own (default) parameters are
        `own`: its rope_theta and partial_rotary_factor kept, the recipe's fields added."""
        if self.remaps:
            raise ValueError(f"{self.label} keeps the model's rope_parameters; it remaps distances instead")
        kept = {key: own[key] for key in ("rope_theta", "partial_rotary_factor") if key in own}
        extra = {key: trained_length if value == "trained" else value for key, value in RECIPES[self.kind].extra}
        return kept | {"rope_type": self.rope_type, "factor": self.factor} | extra

    def far_positions(self, n_tokens: int) -> tuple[np.ndarray, np.ndarray]:
        """[n] float64 positions of each query and each key in the far block of a remapping: a pair at distance
        d = i - j >= W scores as the query at query[i] against the key at key[j], so its distance becomes
        d' = query[i] - key[j]; a nearer pair keeps its own positions. (sink-window also hides the far keys
        j >= S: `hides`.)"""
        i = np.arange(n_tokens, dtype=np.float64)
        if self.kind == "self-extend":
            return i // self.group + self.window - self.window // self.group, i // self.group
        if self.kind == "rerope":
            return np.full(n_tokens, float(self.window)), np.zeros(n_tokens)
        if self.kind == "leaky-rerope":
            return self.window + (i - self.window) / self.slope, i / self.slope
        if self.kind == "sink-window":
            return np.full(n_tokens, float(self.sinks + self.window - 1)), i
        raise ValueError(f"{self.label} is a frequency recipe: it has no far block")

    @property
    def hides(self) -> int | None:
        """Keys j >= this one at distance >= W get no weight (sink-window's S); None: every key stays visible."""
        return self.sinks if self.kind == "sink-window" else None

    def max_distance(self, n_tokens: int) -> float:
        """The largest distance d' any query of an n-token pass sees a visible key at (d = n - 1 without a
        remapping): the far block's is that of the last query and key 0."""
        near = n_tokens - 1 if not self.remaps else min(n_tokens - 1, self.window - 1)
        if not self.remaps or n_tokens - 1 < self.window or self.hides == 0:
            return float(near)
        query, key = self.far_positions(n_tokens)
        return float(max(near, query[-1] - key[0]))

    def check_window(self, trained_length: int) -> None:
        """A remapping keeps the distances below W as they are: W past the trained length L would keep untrained
        distances, the thing the recipe is for. ValueError naming the fix."""
        if self.remaps and self.window > trained_length:
            raise ValueError(f"RoPE recipe {self.label}: the window W = {self.window:,} is longer than the trained "
                             f"length {trained_length:,}, so distances the model never saw would stay as they are; "
                             f"choose W <= {trained_length:,}")


def _checked(kind: str, name: str, value):
    """A recipe's parameter `name` checked: ValueError naming the fix."""
    if name in WHOLE:
        least = WHOLE[name]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(f"RoPE recipe {kind}: {LETTERS[name]} must be a whole number >= {least} "
                             f"({usage(kind)}), got {value!r}")
        return int(value)
    high = MAX_FACTOR
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 1.0 < value <= high:
        if name == "factor":
            raise ValueError(f"RoPE recipe {kind}: the scale factor must be a number above 1 and at most "
                             f"{high:g} (s = the length you run at / the trained length), got {value!r}")
        raise ValueError(f"RoPE recipe {kind}: {LETTERS[name]} must be a number above 1 and at most {high:g} "
                         f"({usage(kind)}), got {value!r}")
    return float(value)


def parse_rope(text: str) -> Rope:
    """'yarn:2' -> Rope('yarn', 2.0), 'self-extend:2,1024' -> Rope('self-extend', group=2, window=1024);
    ValueError naming the fix for anything else."""
    kind, _, values = str(text).strip().partition(":")
    info = recipe_info(kind)
    parts = [part.strip() for part in values.split(",")] if values else []
    if len(parts) != len(info.parameters) or not all(parts):
        if info.parameters == ("factor",):
            raise ValueError(f"RoPE recipe {kind!r} needs a scale factor: {kind}:S with S > 1, e.g. {kind}:2")
        raise ValueError(f"RoPE recipe {kind!r} needs {len(info.parameters)} number(s): {usage(kind)}, e.g. "
                         f"{EXAMPLES[kind]}")
    return Rope(kind, **{name: _number(kind, name, part) for name, part in zip(info.parameters, parts, strict=True)})


def _number(kind: str, name: str, text: str) -> int | float:
    """One parameter as typed: a whole number for G, W and S, any number for s and K."""
    try:
        return int(text) if name in WHOLE else float(text)
    except ValueError:
        what = "a whole number" if name in WHOLE else "a number"
        label = "scale factor" if name == "factor" else LETTERS[name]
        raise ValueError(f"RoPE recipe {kind}: {label} {text!r} is not {what} ({usage(kind)})") from None
