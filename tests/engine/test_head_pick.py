"""engine.maps.most_moved_head: the head whose row for one query spreads most from the sharpest to the softest T, the
same pick as one recomputed from each head's whole map (engine.maps.attention_map), sliding-window layers normalized
by the keys they see."""

import math

import numpy as np
import pytest

from model_utils import analyze, attention_map, most_moved_head
from model_utils.core.report import runner_up_ratio
from model_utils.core.softmax import entropy
from tests.support import SAMPLE_TEXT


def reference(report, query: int, windows) -> tuple[tuple[int, int], np.ndarray]:
    """The pick and the [layer, head] rise of the normalized entropy, from every head's map."""
    rise = np.zeros((report.n_layers, report.n_heads))
    for layer, head in np.ndindex(rise.shape):
        visible = min(query + 1, windows[layer] or query + 1)
        sharp, soft = (entropy(attention_map(report, layer, view, head=head)[query, : query + 1]) / math.log(visible)
                       for view in (0, 1))  # results in the order asked: T = 0.5, then T = 3
        rise[layer, head] = soft - sharp
    layer, head = np.unravel_index(int(np.argmax(rise)), rise.shape)
    return (int(layer), int(head)), rise


@pytest.mark.parametrize("mode", ["in-model", "isolated"])
@pytest.mark.parametrize("name", ["llama", "gemma3_text"])  # gemma3_text: layers 0 and 2 slide over 8 keys
def test_the_pick_is_the_head_whose_row_spreads_most(architecture_model, name, mode):
    loaded = architecture_model(name)
    report = analyze(loaded, SAMPLE_TEXT, temperatures=[0.5, 3.0, 1.0], mode=mode, window=16, max_tokens=40,
                     keep_maps="all")
    windows = loaded.sliding_windows()
    for query in (3, 20, report.n_tokens - 1):
        picked = most_moved_head(report, query)
        (layer, head), rise = reference(report, query, windows)
        assert (picked.layer, picked.head) == (layer, head) and rise[layer, head] > np.median(rise)
        assert picked.temperatures == (0.5, 3.0) and picked.query == query
        rows = [attention_map(report, layer, view, head=head)[query, : query + 1] for view in (0, 1)]
        assert picked.ratios == pytest.approx(tuple(runner_up_ratio(row) for row in rows), rel=1e-4)
    assert most_moved_head(report, 0) is None  # the first token sees only itself
