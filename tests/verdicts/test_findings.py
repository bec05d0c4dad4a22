"""Verdicts name the direction the temperature really went: over-softened only for m < 1, over-sharpened only for
m > 1, a neutral "the loss rose" where m crosses 1 along the text (the words: tests/golden/findings.txt)."""

import numpy as np
import pytest

from model_utils import Schedule, analyze
from model_utils.core.statistics import MASS_PARTS
from model_utils.verdicts.findings import LOSS_FACTOR, Outcome, Way, direction_of, findings
from model_utils.verdicts.words import finding_sentence, problems
from tests.golden.cases import REFERENCE, finding
from tests.support import SAMPLE_TEXT


def test_a_sharper_temperature_whose_loss_rose_is_over_sharpened_never_over_softened():
    sharp = finding("T=0.5", (2.0, 2.0), (0.0, 1.0), LOSS_FACTOR + 0.3)
    assert sharp.direction.kind is Way.SHARPER and sharp.verdict is Outcome.OVER_SHARPENED
    assert finding_sentence(sharp, REFERENCE)[0] == "warning"


def test_a_softer_temperature_is_over_softened_by_loss_or_by_near_uniform_layers():
    by_loss = finding("T=2", (0.5, 0.5), (1.0, 0.0), 4.0, answer=0.0, dropped=True)
    by_entropy = finding("T=4", (0.25, 0.25), (1.0, 0.0), 1.1, uniform=20)
    assert by_loss.verdict is by_entropy.verdict is Outcome.OVER_SOFTENED
    assert len(problems(by_loss, REFERENCE, " Mar")) == 2 and len(problems(by_entropy, REFERENCE)) == 1


def test_a_schedule_that_crosses_one_gets_a_neutral_verdict():
    crossing = finding("logn (base=512)", (0.6, 1.2), (0.25, 0.75), 2.0, uniform=18)
    assert crossing.direction.kind is Way.MIXED and crossing.verdict is Outcome.LOSS_ROSE


def test_nothing_to_say_is_said_as_nothing():
    mild = finding("T=1.1", (1 / 1.1, 1 / 1.1), (1.0, 0.0), 1.05)
    assert mild.verdict is None and finding_sentence(mild, REFERENCE) is None
    near_uniform_but_sharper = finding("T=0.9", (1.1, 1.1), (0.0, 1.0), 1.0, uniform=3)
    assert finding_sentence(near_uniform_but_sharper, REFERENCE) is None  # sharpening cannot have flattened heads


def test_directions_come_from_the_measured_queries_of_a_real_report(tiny):
    report = analyze(tiny, SAMPLE_TEXT, temperatures=[0.05, 1.0, 2.0, Schedule("logn", 64.0)], window=8)
    kinds = [direction_of(report, view).kind for view in range(4)]
    assert kinds == [Way.SHARPER, Way.UNCHANGED, Way.SOFTER, Way.MIXED]
    logn = direction_of(report, 3)
    positions = np.arange(report.q_start, report.n_tokens)
    assert logn.softer_share == pytest.approx(np.mean(positions + 1 < 64))  # m = ln(p + 1) / ln 64 < 1 below 64


def test_a_real_report_never_calls_a_sharper_temperature_softened(tiny):
    base, found = findings(analyze(tiny, SAMPLE_TEXT, temperatures=[0.01, 1.0, 50.0], window=8))
    assert found[base].label == "T=1"
    sharp, soft = found[0], found[2]
    # a random model's loss sits near ln(vocabulary) at any T, so here the heads decide: one key, or uniform
    assert sharp.near_one_hot_layers == 3 and sharp.verdict is Outcome.OVER_SHARPENED
    assert soft.near_uniform_layers == 3 and soft.verdict is Outcome.OVER_SOFTENED
    # sink, recent and distant add up to 1 at every temperature, so what one gains the others lose
    assert found[base].mass_shift == dict.fromkeys(MASS_PARTS, 0.0)
    assert sum(sharp.mass_shift.values()) == pytest.approx(0.0, abs=1e-6) and set(sharp.mass_shift) == set(MASS_PARTS)
