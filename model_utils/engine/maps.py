"""Attention maps rebuilt from a report: the kept queries and keys of a layer through the engine's own logits
function, at one view's multipliers (and, under a distance remapping, from its near and far blocks), so a page draws
any kept layer's n x n map without running the model again.
The report is numpy data on the lowest floor; rebuilding takes torch, so it lives here."""

import numpy as np
import torch

from model_utils.core.errors import AnalysisError
from model_utils.core.limits import check_int
from model_utils.core.report import HeadPick, LayerInputs, Report
from model_utils.engine.probe import multipliers_for
from model_utils.engine.remap import LayerRemap, Layout
from model_utils.engine.torch_path import remapped_logits


def attention_map(report: Report, layer: int, view: int, *, head: int | None = None) -> np.ndarray:
    """[n, n] attention weights of `head` (None: mean of heads) in `layer` at result `view`. Zero above the
    diagonal. AnalysisError if the layer was not kept (analyze's keep_maps) or an index is out of range."""
    if layer not in report.kept:
        raise AnalysisError(f"layer {layer} was not kept; pass keep_maps with it to analyze")
    if head is not None:
        check_int("head", head, 0, report.n_heads - 1)
    check_int("temperature index", view, 0, len(report.results) - 1)
    inputs = report.kept[layer]
    row = report.map_rows[view] if report.map_rows else 0
    multipliers = multipliers_for(torch.from_numpy(report.multipliers), report.layers, layer)[view : view + 1]
    query, key = (torch.from_numpy(array[row : row + 1]) for array in (inputs.query, inputs.key))
    logits = remapped_logits(query, key, inputs.scaling, multipliers, 0, report.n_tokens, inputs.sliding,
                             inputs.softcap, _remap(report, inputs, view, row))
    probs = torch.softmax(logits[0], dim=-1)  # [H, n, n]
    chosen = probs.mean(dim=0) if head is None else probs[head]
    return chosen.numpy()


def _remap(report: Report, inputs: LayerInputs, view: int, row: int) -> LayerRemap | None:
    """The far block of view `view`'s map, where its recipe remaps distances (else None)."""
    rope = report.results[view].view.rope
    if rope is None or not rope.remaps:
        return None
    far = [torch.from_numpy(array[row : row + 1]) for array in (inputs.far_query, inputs.far_key)]
    return LayerRemap(layout=Layout.of(rope, report.n_tokens, report.trained_length), query=far[0], key=far[1])


def query_rows(report: Report, layer: int, view: int, queries: tuple[int, int]) -> torch.Tensor:
    """[H, queries, keys] attention weights of query rows queries[0] .. queries[1] - 1 in `layer` at result `view`
    (keys up to the last of them): attention_map's logits, for a block of rows only."""
    if layer not in report.kept:
        raise AnalysisError(f"layer {layer} was not kept; pass keep_maps with it to analyze")
    inputs = report.kept[layer]
    row = report.map_rows[view] if report.map_rows else 0
    multipliers = multipliers_for(torch.from_numpy(report.multipliers), report.layers, layer)[view : view + 1]
    query, key = (torch.from_numpy(array[row : row + 1]) for array in (inputs.query, inputs.key))
    logits = remapped_logits(query, key, inputs.scaling, multipliers, queries[0], queries[1], inputs.sliding,
                             inputs.softcap, _remap(report, inputs, view, row))
    return torch.softmax(logits[0], dim=-1)


def most_moved_head(report: Report, query: int) -> HeadPick | None:
    """The head whose attention for `query` spreads most from the sharpest to the softest constant temperature
    (Report.head_pick), from every layer's row of that query at both (the report must keep every layer's maps)."""
    ends = report.temperature_ends()
    check_int("query", query, 0, report.n_tokens - 1)
    if ends is None or query < 1:
        return None
    sharp, soft = (np.stack([query_rows(report, layer, view, (query, query + 1))[:, 0].double().numpy()
                             for layer in range(report.n_layers)]) for view in ends)  # [layer, head, query + 1]
    return report.head_pick(sharp, soft, query)
