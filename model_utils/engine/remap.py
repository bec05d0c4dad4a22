"""Distance remappings (core.rope.REMAPS: Self-Extend, ReRoPE, a sink + window) on the torch path. A RoPE score
depends on the distance alone, so a far pair's remapped score is that of q and k rotated by the model's own rotary
embedding to their far positions (Rope.far_positions): a `Remap`, built once per pass, holds the cos and sin that
turn each query and key from its own position to its far one (a rotation by the difference, which composes with
the model's rotation), and the attention function scores a layer twice, near and far, and takes each pair's score
from the block its distance picks (engine.torch_path.remapped_logits). docs/ARCHITECTURE.md has the design."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from model_utils.core.errors import AnalysisError
from model_utils.core.rope import Rope
from model_utils.engine.rope import check_recipe, own_parameters, rotary_modules
from model_utils.models import LoadedModel

ROTATION_NAME = "apply_rotary_pos_emb"  # the function every transformers decoder's modeling file rotates q, k with


@dataclass(frozen=True, kw_only=True)
class RemappedBlock:
    """Which keys each query of a block [rows, keys] sees under a remapping, and where its score comes from."""

    far: torch.Tensor  # [rows, keys] bool: the pair's distance is remapped (d >= W)
    hidden: torch.Tensor  # [rows, keys] bool: no weight (a later key, outside a sliding window, or the recipe's)
    untrained: torch.Tensor  # [rows, keys] bool: a visible key other than key 0 at remapped distance >= L
    visible: torch.Tensor  # [rows] how many keys each query sees

    def rows(self, first: int) -> RemappedBlock:
        """The block from its row `first` on."""
        return RemappedBlock(far=self.far[first:], hidden=self.hidden[first:], untrained=self.untrained[first:],
                             visible=self.visible[first:])


@dataclass(frozen=True, kw_only=True)
class Layout:
    """Where a remapping puts the pairs of an n-token pass: the recipe, the trained length L the effective untrained
    mass is measured against, and each query's and key's far position [n] (float64, Rope.far_positions)."""

    rope: Rope
    trained_length: int
    query_far: torch.Tensor
    key_far: torch.Tensor

    @classmethod
    def of(cls, rope: Rope, n_tokens: int, trained_length: int, device=None) -> Layout:
        query_far, key_far = (torch.from_numpy(far).to(device) for far in rope.far_positions(n_tokens))
        return cls(rope=rope, trained_length=trained_length, query_far=query_far, key_far=key_far)

    def pairs(self, start: int, stop: int, sliding: int | None = None) -> tuple[torch.Tensor, ...]:
        """Queries start..stop-1 against keys 0..stop-1 (on the far positions' device): each pair's effective
        distance [rows, keys] float64 (its own, or at d >= W its far positions' difference), whether it is far, and
        whether it gets no weight."""
        device = self.query_far.device
        queries = torch.arange(start, stop, device=device)[:, None]
        keys = torch.arange(stop, device=device)[None, :]
        distance = queries - keys
        far = distance >= self.rope.window
        hidden = distance < 0
        if sliding:
            hidden |= distance >= sliding
        if self.rope.hides is not None:
            hidden |= far & (keys >= self.rope.hides)
        remapped = self.query_far[start:stop, None] - self.key_far[None, :stop]
        return torch.where(far, remapped, distance.to(torch.float64)), far, hidden

    def block(self, start: int, stop: int, sliding: int | None = None) -> RemappedBlock:
        """Queries start..stop-1 against keys 0..stop-1 (on the far positions' device)."""
        effective, far, hidden = self.pairs(start, stop, sliding)
        keys = torch.arange(stop, device=self.query_far.device)[None, :]
        untrained = (effective >= self.trained_length) & (keys >= 1) & ~hidden
        return RemappedBlock(far=far, hidden=hidden, untrained=untrained, visible=(~hidden).sum(dim=-1))


@dataclass(frozen=True, kw_only=True)
class LayerRemap:
    """One layer's far block: its queries [B, H, n, d] and keys [B, KV, n, d] rotated to their far positions."""

    layout: Layout
    query: torch.Tensor
    key: torch.Tensor


@dataclass(frozen=True, kw_only=True)
class Remap:
    """One pass's distance remapping: its layout, the model's rotation function, and the cos and sin [1, n, r] that
    carry each query and each key from its own position to its far one."""

    layout: Layout
    rotate: Callable
    query_turn: tuple[torch.Tensor, torch.Tensor]
    key_turn: tuple[torch.Tensor, torch.Tensor]

    def layer(self, query: torch.Tensor, key: torch.Tensor, start: int = 0) -> LayerRemap:
        """The far block of a layer whose q and k the model rotated at their own positions (float32): the queries
        hold positions start.. (a continuation's; 0: all), the keys every position from 0."""
        query, key = query.float(), key.float()
        query_turn = tuple(part[:, start : start + query.shape[2]] for part in self.query_turn)
        return LayerRemap(layout=self.layout, query=self.rotate(query, query, *query_turn)[0],
                          key=self.rotate(key, key, *self.key_turn)[1])


def effective_distances(rope: Rope, n_tokens: int) -> np.ndarray:
    """[n] float64: the distance at which the last query of an n-token pass meets the key d tokens back (index d),
    under a distance remapping, by the rule the torch path scores with (Layout.pairs); NaN where the key gets no
    weight. What the Length schedules page draws against the distance in the text."""
    effective, _, hidden = Layout.of(rope, n_tokens, n_tokens).pairs(n_tokens - 1, n_tokens)
    row = torch.where(hidden, torch.nan, effective)[0]  # [keys], key 0 first
    return row.flip(0).numpy()


def model_rotation(loaded: LoadedModel) -> Callable:
    """The model's own apply_rotary_pos_emb(q, k, cos, sin), from its modeling module; AnalysisError without one."""
    rotate = getattr(sys.modules.get(type(loaded.model).__module__), ROTATION_NAME, None)
    if rotate is None:
        raise AnalysisError(f"model {loaded.name!r} ({loaded.text_config.model_type}) has no {ROTATION_NAME} in its "
                            "modeling code, so the explorer cannot rotate q and k to remapped positions; leave the "
                            "distance remapping out")
    return rotate


def _turn(module: torch.nn.Module, by: torch.Tensor, device) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin [1, n, r] of the model's rotary module at positions `by` [n]: a rotation by that many positions."""
    like = torch.ones(1, dtype=torch.float32, device=device)  # the dtype and device cos and sin come in
    with torch.inference_mode():
        return module(like, by.to(device, torch.float32)[None])


def check_remap(loaded: LoadedModel, rope: Rope, trained_length: int) -> None:
    """Refuse a remapping the model cannot take, naming why: no RoPE or a scaled one (check_recipe), a RoPE per layer
    type, a window past the trained length (Rope.check_window), or a rotation that does not compose."""
    check_recipe(loaded, rope)
    if own_parameters(loaded)[1] is not None:
        raise AnalysisError(f"model {loaded.name!r} ({loaded.text_config.model_type}) has a RoPE per layer type; the "
                            f"distance remapping {rope.label} is not applied to such models yet; leave it out")
    try:
        rope.check_window(trained_length)
    except ValueError as error:
        raise AnalysisError(str(error)) from None
    check_composition(loaded, rope)


def check_composition(loaded: LoadedModel, rope: Rope) -> None:
    """The far block turns q and k already rotated at their own positions: q rotated at p and then turned by t must
    be q rotated at p + t. Checked on one vector at three positions; AnalysisError where it is not so."""
    rotate, module = model_rotation(loaded), rotary_modules(loaded.model)[0]
    config = loaded.text_config
    dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    vector = torch.linspace(-1.0, 1.0, dim, device=loaded.device).expand(1, 1, 3, dim)  # [1, 1, 3, d]
    at, by = torch.tensor([0.0, 5.0, 40.0]), torch.tensor([7.0, -3.0, -33.5])
    rotated = rotate(vector, vector, *_turn(module, at, loaded.device))[0]
    turned = rotate(rotated, rotated, *_turn(module, by, loaded.device))[0]
    direct = rotate(vector, vector, *_turn(module, at + by, loaded.device))[0]
    if not torch.allclose(turned, direct, atol=1e-4):
        raise AnalysisError(f"model {loaded.name!r}'s rotary embedding does not compose as rotations do, so the "
                            f"distance remapping {rope.label} cannot be computed from it; leave it out")


def build_remap(loaded: LoadedModel, rope: Rope, n_tokens: int, trained_length: int) -> Remap:
    """The Remap of one pass of `n_tokens` on `loaded` (checked by check_remap)."""
    check_remap(loaded, rope, trained_length)
    module = rotary_modules(loaded.model)[0]
    layout = Layout.of(rope, n_tokens, trained_length, loaded.device)
    own = torch.arange(n_tokens, dtype=torch.float64, device=loaded.device)
    return Remap(layout=layout, rotate=model_rotation(loaded),
                 query_turn=_turn(module, layout.query_far - own, loaded.device),
                 key_turn=_turn(module, layout.key_far - own, loaded.device))
