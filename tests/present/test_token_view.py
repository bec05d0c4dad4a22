"""The token view's HTML: user text escaped (a hostile text stays inert), one shade per weight on a shared scale,
the query outlined and nothing after it, and the top-key ratio equal to exp(gap / T)."""

import math
import re

import numpy as np
import pytest

from components.present.text import ratio_text
from components.present.token_view import SHADE_DECADES, ratio_line, shade, token_html, top_keys

HOSTILE = ['<script>alert("x")</script>', '<img src=x onerror=alert(1)>', " & ", '"quoted"', "tail"]


def test_hostile_tokens_are_escaped_and_no_tag_survives():
    drawn = token_html(HOSTILE, [0.2, 0.2, 0.2, 0.2, 0.2], query=4, scale_max=0.2)
    assert "<script" not in drawn and "<img" not in drawn
    assert "&lt;script&gt;" in drawn and "&amp;" in drawn and "&quot;quoted&quot;" in drawn


def test_tokens_after_the_query_are_left_out_and_the_query_is_outlined():
    drawn = token_html(["a", "b", "c", "d"], [0.5, 0.3, 0.2], query=2, scale_max=0.5)
    assert drawn.count("<span") == 3 and ">d<" not in drawn
    assert drawn.count("outline") == 1 and drawn.count("underline") == 1


def test_shades_share_one_scale_and_the_log_scale_spreads_small_weights():
    assert shade(0.5, 1.0, log=False) == 0.5 and shade(2.0, 1.0, log=False) == 1.0 and shade(0.0, 1.0, False) == 0
    assert SHADE_DECADES == 2
    assert shade(0.01, 1.0, log=True) == 0.0 and shade(1.0, 1.0, log=True) == 1.0  # two decades to the floor
    assert shade(0.1, 1.0, log=True) == pytest.approx(0.5)  # one of two decades
    assert shade(0.004, 0.04, log=True) == pytest.approx(0.5)  # the scale follows its top
    assert shade(0.1, 1.0, log=True) > shade(0.1, 1.0, log=False)


def opacities(html: str) -> list[float]:
    return [float(alpha) for alpha in re.findall(r"rgba\([0-9, ]+, ([0-9.]+)\)", html)]


def test_on_the_log_scale_a_near_uniform_row_is_coloured_and_a_tiny_weight_stays_pale():
    """The log scale once floored at 1e-4 whatever its top: a row whose weights all sit within two decades of each
    other came out red from end to end. Tiny weights now stay white, a near-uniform row is coloured alike."""
    rng = np.random.default_rng(0)
    uniformish = np.full(12, 1 / 12) * rng.uniform(0.8, 1.2, 12)
    weights = np.append(uniformish / uniformish.sum() * (1 - 1e-6), 1e-6)
    tokens = [f"t{i}" for i in range(13)]
    alphas = opacities(token_html(tokens, weights, query=12, scale_max=float(weights.max()), log=True))
    assert len(alphas) == 13
    assert min(alphas[:12]) > 0.9  # within 1.5x of the top: nearly full colour
    assert alphas[12] == 0.0  # 1e-6: white
    spread = np.array([0.6, 0.3, 0.05, 0.02, 0.005, 0.001, 1e-4, 1e-5])
    alphas = opacities(token_html([f"t{i}" for i in range(8)], spread, query=7, scale_max=0.6, log=True))
    assert alphas == sorted(alphas, reverse=True)  # larger weights, darker
    assert sum(alpha < 0.15 for alpha in alphas) >= 3  # 1e-3 and below, under 1% of the top: pale
    assert alphas[2] == pytest.approx(1 - np.log10(0.6 / 0.05) / 2, abs=1e-3)


def test_top_keys_largest_first():
    keys = top_keys(["a", "b", "c"], [0.2, 0.5, 0.3], k=2)
    assert [(k["position"], k["token"]) for k in keys] == [(1, "b"), (2, "c")]


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_the_measured_ratio_is_exp_gap_over_t(temperature):
    scores = np.array([-3.0, 5.0, 0.0])  # gap 5: 148x at T = 1, 12.2x at T = 2
    weights = np.exp(scores / temperature) / np.exp(scores / temperature).sum()
    line = ratio_line(scores, weights, temperature)
    expected = ratio_text(math.exp(5.0 / temperature))
    assert line.count(expected) == 2  # measured and predicted agree
    assert ratio_line(scores[:1], weights[:1], temperature) is None and ratio_line(scores, weights, None) is None


@pytest.mark.parametrize(("value", "said"), [(12.18, "12.2x"), (148.41, "148x"), (999.7, "1,000x"),
                                             (22026.47, "22,026x"), (4.85165e8, "485,165,000x"),
                                             (2.35e17, "2.35 × 10¹⁷x"), (9.9999e9, "1.00 × 10¹⁰x"),
                                             (math.inf, "unbounded")])
def test_a_ratio_is_written_as_a_reader_says_it(value, said):
    assert ratio_text(value) == said


def test_a_gap_too_large_for_a_float_is_unbounded_not_an_error():
    scores = np.array([0.0, 400.0])
    weights = np.array([0.0, 1.0])  # exp(-4000): the runner-up's weight underflows to 0
    assert ratio_line(scores, weights, 0.1) == ("top key / runner-up: unbounded; score gap 400.00, exp(gap / T) = "
                                                "exp(400.00 / 0.1) = unbounded")
