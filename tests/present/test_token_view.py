"""The token view's HTML: user text escaped (a hostile text stays inert), one shade per weight on a shared scale,
the query outlined and nothing after it, and the top-key ratio equal to exp(gap / T)."""

import math

import numpy as np
import pytest

from components.present.text import ratio_text
from components.present.token_view import LOG_FLOOR, ratio_line, shade, token_html, top_keys

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
    assert shade(LOG_FLOOR, 1.0, log=True) == 0.0 and shade(1.0, 1.0, log=True) == 1.0
    assert shade(0.01, 1.0, log=True) == pytest.approx(0.5)  # two of four decades
    assert shade(0.01, 1.0, log=True) > shade(0.01, 1.0, log=False)


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
