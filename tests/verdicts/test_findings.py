"""Verdicts name the direction the temperature really went: "over-softened" only for m < 1, "over-sharpened" only
for m > 1, a neutral "the loss rose" where m crosses 1 along the text."""

import numpy as np
import pytest

from model_utils import Schedule, analyze
from model_utils.verdicts.findings import (
    LOSS_FACTOR,
    Direction,
    Finding,
    direction_of,
    findings,
    mass_shift_lines,
    sentence,
)
from tests.support import SAMPLE_TEXT


def finding(label: str, multiplier_range: tuple[float, float], shares: tuple[float, float], loss_ratio: float | None,
            near_uniform: int = 0, near_one_hot: int = 0, answer: float | None = None, dropped: bool = False):
    low, high = multiplier_range
    return Finding(label=label, direction=Direction(softer_share=shares[0], sharper_share=shares[1], smallest=low,
                                                   largest=high),
                   n_layers=30, near_uniform_layers=near_uniform, near_one_hot_layers=near_one_hot,
                   loss=1.0 * (loss_ratio or 1.0), loss_ratio=loss_ratio,
                   mass_shift={"sink_mass": 0.0, "recent_mass": 0.0, "distant_mass": 0.0},
                   answer_probability=answer, answer_dropped=dropped)


REFERENCE = finding("T=1", (1.0, 1.0), (0.0, 0.0), None, answer=0.85)


def test_a_sharper_temperature_whose_loss_rose_is_over_sharpened_never_over_softened():
    sharp = finding("T=0.5", (2.0, 2.0), (0.0, 1.0), loss_ratio=LOSS_FACTOR + 0.3)
    assert sharp.verdict == "over-sharpened"
    level, text = sentence(sharp, REFERENCE)
    assert level == "warning" and "over-sharpened" in text and "soft" not in text
    assert "sharpens attention (m = 2 > 1)" in text


def test_a_softer_temperature_is_over_softened_by_loss_or_by_near_uniform_layers():
    by_loss = finding("T=2", (0.5, 0.5), (1.0, 0.0), loss_ratio=4.0, answer=0.0, dropped=True)
    by_entropy = finding("T=4", (0.25, 0.25), (1.0, 0.0), loss_ratio=1.1, near_uniform=20)
    assert by_loss.verdict == by_entropy.verdict == "over-softened"
    text = sentence(by_loss, REFERENCE, " Mar")[1]
    assert "softens attention (m = 0.5 < 1)" in text and "falls from 0.85 to 0.00" in text
    assert "20 of 30 layers" in sentence(by_entropy, REFERENCE)[1]


def test_a_schedule_that_crosses_one_gets_a_neutral_verdict():
    crossing = finding("logn (base=512)", (0.6, 1.2), (0.25, 0.75), loss_ratio=2.0, near_uniform=18)
    assert crossing.direction.kind == "mixed" and crossing.verdict == "the loss rose"
    text = sentence(crossing, REFERENCE)[1]
    assert "softer than T = 1 on 25% of the measured queries and sharper on 75%" in text
    assert "over-" not in text


def test_nothing_to_say_is_said_as_nothing():
    mild = finding("T=1.1", (1 / 1.1, 1 / 1.1), (1.0, 0.0), loss_ratio=1.05)
    assert mild.verdict is None and sentence(mild, REFERENCE) is None
    near_uniform_but_sharper = finding("T=0.9", (1.1, 1.1), (0.0, 1.0), loss_ratio=1.0, near_uniform=3)
    assert sentence(near_uniform_but_sharper, REFERENCE) is None  # sharpening cannot have flattened the heads


def test_directions_come_from_the_measured_queries_of_a_real_report(tiny):
    report = analyze(tiny, SAMPLE_TEXT, temperatures=[0.05, 1.0, 2.0, Schedule("logn", 64.0)], window=8)
    kinds = [direction_of(report, view).kind for view in range(4)]
    assert kinds == ["sharper", "unchanged", "softer", "mixed"]
    logn = direction_of(report, 3)
    positions = np.arange(report.q_start, report.n_tokens)
    assert logn.softer_share == pytest.approx(np.mean(positions + 1 < 64))  # m = ln(p + 1) / ln 64 < 1 below 64


def test_a_real_report_never_calls_a_sharper_temperature_softened(tiny):
    base, found = findings(analyze(tiny, SAMPLE_TEXT, temperatures=[0.01, 1.0, 50.0], window=8))
    assert found[base].label == "T=1"
    sharp, soft = found[0], found[2]
    # a random model's loss sits near ln(vocabulary) at any T, so here the heads decide: one key, or uniform
    assert sharp.near_one_hot_layers == 3 and sharp.verdict == "over-sharpened"
    assert soft.near_uniform_layers == 3 and soft.verdict == "over-softened"
    assert mass_shift_lines(found, base)[0].startswith("T=0.01 vs T=1: sink ")
