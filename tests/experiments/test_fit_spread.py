"""The fitted value over documents and its bootstrap interval (experiments/fit/spread.py), on quadratic loss curves
whose minima are known."""

import numpy as np
import pytest

from model_utils.core.records.fit import Evaluation, Fold
from model_utils.core.views import View
from model_utils.experiments.fit.spread import Curves, document_curve, document_curves, spread


def parabola(minimum: float, curvature: float = 4.0, floor: float = 2.0):
    return lambda x: curvature * (x - minimum) ** 2 + floor


def curves(minima, weights=None, curvature=4.0) -> Curves:
    rows = [np.array([curvature, -2 * curvature * m, curvature * m * m + 2.0]) for m in minima]
    return Curves(coefficients=np.array(rows), weights=np.array(weights or [1000.0] * len(minima)))


def test_a_documents_curve_is_its_quadratic_through_the_evaluations_near_the_best():
    loss = parabola(0.93, curvature=3.0)
    points = [(x, loss(x)) for x in (0.7, 0.85, 0.92, 0.95, 1.3)]
    a, b, _ = document_curve(points, best=0.92)
    assert -b / (2 * a) == pytest.approx(0.93) and a == pytest.approx(3.0)


def test_far_evaluations_do_not_bend_the_curve_when_three_lie_near():
    near = parabola(0.9)
    points = [(x, near(x)) for x in (0.85, 0.9, 0.95)] + [(1.5, 100.0)]  # a far point off the parabola
    a, b, _ = document_curve(points, best=0.9)
    assert -b / (2 * a) == pytest.approx(0.9)
    fewer = [(x, near(x)) for x in (0.5, 0.9, 1.3)]  # only one within the window: the three nearest
    a, b, _ = document_curve(fewer, best=0.9)
    assert -b / (2 * a) == pytest.approx(0.9)


def test_the_minimum_weighs_documents_by_their_positions_and_counts():
    two = curves([0.9, 1.0])
    assert two.minimum(np.ones((1, 2)))[0] == pytest.approx(0.95)
    assert two.minimum(np.array([[3.0, 1.0]]))[0] == pytest.approx(0.925)
    assert curves([0.9, 1.0], weights=[3000.0, 1000.0]).minimum(np.ones((1, 2)))[0] == pytest.approx(0.925)
    assert np.isnan(curves([0.9], curvature=-1.0).minimum(np.ones((1, 1)))[0])  # no minimum to report


def test_the_interval_is_over_documents_and_narrows_with_more_of_them():
    rng = np.random.default_rng(1)
    few = spread(curves(rng.normal(0.92, 0.02, 4)), (0.7, 1.3), np.random.default_rng(0))
    many = spread(curves(rng.normal(0.92, 0.02, 64)), (0.7, 1.3), np.random.default_rng(0))
    for found in (few, many):
        assert found.interval[0] <= found.parameter <= found.interval[1]
    assert many.interval[1] - many.interval[0] < few.interval[1] - few.interval[0]
    assert 0.9 < many.parameter < 0.94


def test_documents_that_agree_give_a_point_and_a_minimum_beyond_the_bounds_is_clipped():
    same = spread(curves([0.91] * 5), (0.7, 1.3), np.random.default_rng(0))
    assert same.parameter == pytest.approx(0.91) and same.interval == pytest.approx((0.91, 0.91))
    beyond = spread(curves([1.5, 1.6]), (0.7, 1.3), np.random.default_rng(0))
    assert beyond.parameter == 1.3 and beyond.interval == (1.3, 1.3)


def test_the_folds_training_documents_each_give_one_curve():
    losses = {"a": parabola(0.9), "b": parabola(0.95), "c": parabola(1.0)}
    folds = [Fold(fold=k, training=training, parameter=best, nll_past=2.0, converged=True, at_bound=False,
                  evaluations=tuple(Evaluation(evaluation=i + 1, parameter=x, nll_past=0.0)
                                    for i, x in enumerate(values)), held_out=(), view=View(best))
             for k, (training, best, values) in enumerate([(("a", "b"), 0.92, (0.8, 0.9, 0.95, 1.0)),
                                                          (("c",), 1.0, (0.9, 1.0, 1.05))])]
    found = document_curves(folds, lambda document, x: (losses[document](x), 500))
    minima = -found.coefficients[:, 1] / (2 * found.coefficients[:, 0])
    assert minima == pytest.approx([0.9, 0.95, 1.0]) and list(found.weights) == [500.0] * 3
