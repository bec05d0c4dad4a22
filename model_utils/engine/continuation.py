"""A text read once, its continuations read many times: `read_prefix` runs one view over a prefix and keeps every
layer's keys and values, and `continue_prefix` runs a short text as the continuation of that prefix cut at any length
`start`: its queries meet the kept keys 0..start-1, then their own, and a caller may read the continuation's
attention weights on the way (`on_rows`; engine.step has the attention side). `remapped_greedy` generates by
extending a prefix one token at a time, which a distance remapping needs: it scores far pairs at positions of its own,
which transformers' key-value cache does not keep. Causality makes the cut exact: a key
or value at a position below the cut depends only on the tokens before it, whatever followed in the prefix pass,
provided the view's multipliers and the positions' rotation depend on the position alone
(core.retrieval.reads_by_position says which views do; dynamic NTK does not)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from model_utils.core.views import View
from model_utils.engine.plugin import mask_free
from model_utils.engine.remap import Remap, build_remap
from model_utils.engine.rope import recipe_positions
from model_utils.engine.step import OnRows, Prefix, Step
from model_utils.models import LoadedModel


def _multipliers(view: View, n_tokens: int) -> torch.Tensor:
    return torch.tensor(np.asarray(view.multipliers(n_tokens))[None], dtype=torch.float32)  # [1, n]


def _forward(loaded: LoadedModel, ids, start: int, view: View, trained_length: int, step: Step) -> torch.Tensor:
    """The last hidden states [1, len(ids), hidden] of `ids` at positions start.., through `step`."""
    input_ids = torch.tensor([list(ids)], device=loaded.device)
    positions = torch.arange(start, start + len(ids), device=loaded.device)[None]
    rope = view.rope if view.rope is None or not view.rope.remaps else None  # a remapping keeps the model's own
    with torch.inference_mode(), mask_free(), recipe_positions(loaded, rope, trained_length):
        return loaded.model.base_model(input_ids=input_ids, position_ids=positions, use_cache=False,
                                       attention_step=step).last_hidden_state


def _remap(loaded: LoadedModel, view: View, n_tokens: int, trained_length: int) -> Remap | None:
    rope = view.rope
    return build_remap(loaded, rope, n_tokens, trained_length) if rope is not None and rope.remaps else None


def read_prefix(loaded: LoadedModel, ids, view: View, trained_length: int) -> Prefix:
    """One pass of `view` over `ids` (checked by the caller: engine.analyze.validate and check_length), keeping
    every layer's keys and values."""
    prefix = Prefix(view=view, trained_length=trained_length, n_tokens=len(ids))
    step = Step(prefix=None, start=0, multipliers=_multipliers(view, len(ids)), keep=prefix,
                remap=_remap(loaded, view, len(ids), trained_length))
    _forward(loaded, ids, 0, view, trained_length, step)
    return prefix


def continue_prefix(loaded: LoadedModel, prefix: Prefix, start: int, ids, on_rows: OnRows | None = None
                    ) -> torch.Tensor:
    """The last hidden states [1, len(ids), hidden] of `ids` read after the prefix's first `start` tokens, as one
    pass over prefix[:start] + ids would give them; `on_rows` hears each layer's weights of the new queries."""
    if not 0 < start <= prefix.n_tokens:
        raise ValueError(f"a continuation starts inside its prefix of {prefix.n_tokens:,} tokens, got {start:,}")
    stop = start + len(ids)
    step = Step(prefix=prefix, start=start, multipliers=_multipliers(prefix.view, stop), on_rows=on_rows,
                remap=_remap(loaded, prefix.view, stop, prefix.trained_length))
    return _forward(loaded, ids, start, prefix.view, prefix.trained_length, step)


def _extend(loaded: LoadedModel, prefix: Prefix, ids) -> torch.Tensor:
    """The last hidden states [1, len(ids), hidden] of `ids` read after the whole prefix, their keys and values
    added to it."""
    start, stop = prefix.n_tokens, prefix.n_tokens + len(ids)
    step = Step(prefix=prefix, start=start, multipliers=_multipliers(prefix.view, stop), keep=prefix,
                remap=_remap(loaded, prefix.view, stop, prefix.trained_length))
    hidden = _forward(loaded, ids, start, prefix.view, prefix.trained_length, step)
    prefix.n_tokens = stop
    return hidden


def remapped_greedy(loaded: LoadedModel, ids, view: View, steps: int, trained_length: int,
                    stop: Callable[[list[int]], bool] | None = None) -> tuple[torch.Tensor, list[int]]:
    """(the first step's next-token logits [vocab], the greedy tokens) after `ids` under `view`: one pass over
    `ids`, then one continuation per new token, each read after every token before it, for at most `steps` tokens
    or until stop(tokens). With a distance remapping every step scores its query against every key at the
    remapped distance, as a whole pass over the text so far would."""
    prefix = Prefix(view=view, trained_length=trained_length, n_tokens=len(ids))
    step = Step(prefix=None, start=0, multipliers=_multipliers(view, len(ids)), keep=prefix,
                remap=_remap(loaded, view, len(ids), trained_length))
    with torch.inference_mode():
        hidden = _forward(loaded, ids, 0, view, trained_length, step)
        first, tokens = None, []
        while True:
            logits = loaded.next_token_logits(hidden[:, -1]).float()[0]  # [vocab]
            first = logits.cpu() if first is None else first
            tokens.append(int(logits.argmax()))
            if len(tokens) == steps or (stop is not None and stop(tokens)):
                return first, tokens
            hidden = _extend(loaded, prefix, tokens[-1:])
