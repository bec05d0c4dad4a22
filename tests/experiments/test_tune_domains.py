"""Per-domain savings past the trained length (experiments/tune/domains.py) on NLL sums whose answer is known."""

import numpy as np
import pytest

from model_utils.core.records.tune import DomainSavings
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.experiments.tune.domains import domain_savings

VIEWS = [View(1.0), View(0.9), View(1.0, Rope("yarn-rope", 2.0))]


def sums_of(per_document: list[list[float]], positions: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """[document, view, bucket] sums for one bucket inside and one past the trained length, the past NLL per token
    of each view as given (inside: 2.0 for all), and [document, bucket] counts."""
    past = np.array(per_document)[:, :, None] * positions
    inside = np.full_like(past, 2.0 * positions)
    return np.concatenate([inside, past], axis=2), np.full((len(per_document), 2), positions)


def test_each_domain_pools_its_own_documents_and_lists_each_documents_saving():
    sums, counts = sums_of([[4.0, 3.9, 2.0], [5.0, 4.8, 2.5], [3.0, 3.2, 2.9]])
    found = domain_savings(sums=sums, counts=counts, views=VIEWS, domains=["docs", "docs", "code"],
                           hashes=["a", "b", "c"], reference=0, past=[1])
    docs, code = found
    assert docs.domain == "docs" and docs.documents == ("a", "b") and docs.nll_past_at_1 == pytest.approx(4.5)
    assert [lever.view for lever in docs.levers] == VIEWS[1:]
    assert docs.levers[0].saved == pytest.approx(0.15) and docs.levers[0].per_document == pytest.approx((0.1, 0.2))
    assert docs.levers[1].saved == pytest.approx(2.25) and docs.levers[1].per_document == pytest.approx((2.0, 2.5))
    assert code.levers[0].saved == pytest.approx(-0.2)  # worse on that domain: the sign is kept
    assert DomainSavings.from_dict(docs.to_dict()) == docs


def test_the_positions_inside_the_trained_length_do_not_count():
    sums, counts = sums_of([[4.0, 3.0, 2.0]])
    sums[:, 1, 0] = 0.0  # a view far better inside the trained length changes nothing past it
    found = domain_savings(sums=sums, counts=counts, views=VIEWS, domains=["docs"], hashes=["a"], reference=0,
                           past=[1])
    assert found[0].levers[0].saved == pytest.approx(1.0)


def test_no_domain_or_nothing_past_the_trained_length_gives_none():
    sums, counts = sums_of([[4.0, 3.0, 2.0]])
    assert domain_savings(sums=sums, counts=counts, views=VIEWS, domains=[None], hashes=["a"], reference=0,
                          past=[1]) == ()
    assert domain_savings(sums=sums, counts=counts, views=VIEWS, domains=["docs"], hashes=["a"], reference=0,
                          past=[]) == ()
