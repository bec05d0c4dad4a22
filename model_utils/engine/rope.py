"""A RoPE recipe for one forward pass, without touching the shared model: the model's own rotary embedding class is
built again from a copy of its config carrying the recipe's rope_parameters (transformers' code computes the
frequencies and YaRN's attention factor), and a forward hook on the model's rotary module hands the layers that
copy's cos and sin instead of its own. The hook is installed once, when the model is attached, and does nothing
unless the calling thread's context names a replacement (`recipe_positions`), so passes in other threads, with
other recipes or none, never see it. docs/ARCHITECTURE.md has the design."""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

import torch

from model_utils.core.errors import AnalysisError
from model_utils.core.rope import Rope
from model_utils.models import LoadedModel

ROTARY_NAME = "rotary_emb"  # what transformers' decoder models call their rotary embedding module
FULL_ATTENTION = "full_attention"  # the layer type a recipe applies to where each layer type has its own RoPE
_HOOKED = "_attention_explorer_rope_hook"
_INSTALLING = threading.Lock()
# id(the model's rotary module) -> its replacement for the pass the current thread is running
_REPLACEMENTS: ContextVar[dict[int, Replacement] | None] = ContextVar("rope_replacements", default=None)


@dataclass(kw_only=True)
class Replacement:
    """The rotary module one pass uses instead of the model's, and how often the model asked for it."""

    module: torch.nn.Module
    calls: int = 0


@dataclass(kw_only=True)
class Applied:
    """What a recipe applied in a pass, as the report and the JSON carry it."""

    rope: Rope
    replacements: list[Replacement] = field(default_factory=list)
    layer_types: str | None = None  # where each layer type has its own RoPE: the one the recipe applies to

    @property
    def calls(self) -> int:
        return sum(replacement.calls for replacement in self.replacements)

    def as_dict(self) -> dict:
        module = self.replacements[0].module
        factor = getattr(module, "attention_scaling", None)
        if factor is None:
            factor = getattr(module, f"{FULL_ATTENTION}_attention_scaling", 1.0)
        applied = self.rope.applied(float(factor))
        return applied | ({"layer_types": self.layer_types} if self.layer_types else {})


def rotary_modules(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The model's rotary embedding modules (one for the decoder models of transformers 5)."""
    return [module for name, module in model.named_modules() if name.rsplit(".", 1)[-1] == ROTARY_NAME]


def install(loaded: LoadedModel) -> None:
    """Hook every rotary module of `loaded` once (idempotent): inert until a pass names a replacement."""
    with _INSTALLING:
        for module in rotary_modules(loaded.model):
            if not getattr(module, _HOOKED, False):
                module.register_forward_hook(_replace_output, with_kwargs=True)
                setattr(module, _HOOKED, True)


def _replace_output(module, args, kwargs, output):
    replacements = _REPLACEMENTS.get()
    replacement = None if replacements is None else replacements.get(id(module))
    if replacement is None:
        return None  # keep the model's own cos and sin
    replacement.calls += 1
    return replacement.module(*args, **kwargs)


def own_parameters(loaded: LoadedModel) -> tuple[dict, str | None]:
    """The model's rope_parameters the recipe replaces, and the layer type they belong to where each layer type
    has its own (Gemma 3: the recipe goes to the global layers, as Gemma 3's own long-context release scales
    them; the local sliding-window layers keep theirs)."""
    config = loaded.text_config
    parameters = getattr(config, "rope_parameters", None) or {}
    nested = config.nested_rope_parameter_keys(parameters) if hasattr(config, "nested_rope_parameter_keys") else []
    if not nested:
        return parameters, None
    if parameters.get(FULL_ATTENTION) is None:
        raise AnalysisError(f"model {loaded.name!r} has a RoPE per layer type ({', '.join(nested)}) and none for "
                            f"{FULL_ATTENTION} layers, where the explorer would apply a recipe")
    return parameters[FULL_ATTENTION], FULL_ATTENTION


def check_recipe(loaded: LoadedModel, rope: Rope) -> None:
    """Refuse a recipe the model cannot take, naming why: learned positions, no rotary module, or a RoPE that is
    already scaled (a recipe replaces plain RoPE; it would silently drop the model's own scaling)."""
    kind = f"model {loaded.name!r} ({loaded.text_config.model_type})"
    if loaded.learned_positions:
        raise AnalysisError(f"{kind} learns its positions as a table, not with rotary embeddings (RoPE): the RoPE "
                            f"recipe {rope.label} does not apply to it; leave --rope out")
    if not rotary_modules(loaded.model):
        raise AnalysisError(f"{kind} has no rotary position embedding module ({ROTARY_NAME}): the RoPE recipe "
                            f"{rope.label} does not apply to it; leave --rope out")
    own, _ = own_parameters(loaded)
    own_type = own.get("rope_type", own.get("type", "default"))
    if own_type != "default":
        raise AnalysisError(f"{kind} already scales its rotary positions (rope_type {own_type!r}); the explorer "
                            f"applies a recipe such as {rope.label} only on top of plain RoPE")


def recipe_config(loaded: LoadedModel, rope: Rope, trained_length: int):
    """A copy of the model's config whose rope_parameters are the recipe's (the model's own config is untouched)."""
    config = copy.deepcopy(loaded.text_config)
    own, layer_type = own_parameters(loaded)
    recipe = rope.parameters(own, trained_length)
    if layer_type is None:
        config.rope_parameters = recipe
    else:
        config.rope_parameters = {**config.rope_parameters, layer_type: recipe}
    if rope.rope_type == "dynamic":  # dynamic NTK reads the trained length from max_position_embeddings
        config.max_position_embeddings = trained_length
    return config


@contextlib.contextmanager
def recipe_positions(loaded: LoadedModel, rope: Rope | None, trained_length: int) -> Iterator[Applied | None]:
    """Within the block, forward passes the calling thread runs on `loaded` use `rope`'s rotary positions
    (None: the model's own). Yields what was applied; raises AnalysisError when the model never asked its rotary
    module for positions, so the recipe could not have applied."""
    if rope is None:
        yield None
        return
    check_recipe(loaded, rope)
    install(loaded)
    config = recipe_config(loaded, rope, trained_length)
    _, layer_type = own_parameters(loaded)
    applied = Applied(rope=rope, layer_types=layer_type)
    replacements = {}
    for module in rotary_modules(loaded.model):
        replacement = Replacement(module=type(module)(config).to(loaded.device))
        replacements[id(module)] = replacement
        applied.replacements.append(replacement)
    token = _REPLACEMENTS.set(replacements)
    try:
        yield applied
    finally:
        _REPLACEMENTS.reset(token)
    if applied.calls == 0:
        raise AnalysisError(f"model {loaded.name!r} never asked its {ROTARY_NAME} module for positions, so the RoPE "
                            f"recipe {rope.label} could not be applied; leave --rope out")
