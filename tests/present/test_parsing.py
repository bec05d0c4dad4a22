"""What users type and links carry, parsed: the Softmax lab's slider options, and a decimal comma refused with a hint
rather than read as two numbers or shown as "'0' is out of range"."""

import itertools
import math
import re

import pytest

from components.present.parsing import (
    LAB_GRID,
    decimal_comma_hint,
    nearest_on_log_scale,
    parse_scores,
    parse_temperatures,
    slider_temperatures,
)
from model_utils.core.errors import AnalysisError

HALF_STEP = 1 / 40  # the grid has 20 steps a decade, in log10 units


def test_the_grid_runs_from_0_1_to_10_and_lands_on_round_numbers():
    assert LAB_GRID[0] == 0.1 and LAB_GRID[-1] == 10 and len(LAB_GRID) == 41
    assert {0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0} <= set(LAB_GRID)
    assert all(later > earlier for earlier, later in itertools.pairwise(LAB_GRID))


@pytest.mark.parametrize("listed", [(0.5, 1.0, 1.5, 2.0), (0.52, 0.7), (0.05, 20.0), (0.501,), (1.0, 1.01)])
def test_the_slider_offers_the_listed_temperatures_exactly_and_no_near_duplicate(listed):
    options = slider_temperatures(listed)
    assert set(listed) <= set(options) and options == sorted(set(options))
    for earlier, later in itertools.pairwise(options):
        close = math.log10(later / earlier) < HALF_STEP
        assert not close or {earlier, later} <= set(listed), (earlier, later)  # only two listed ones may be close
    assert options[0] == min(0.1, *listed) and options[-1] == max(10.0, *listed)


def test_the_default_sidebar_list_gives_0_5_and_not_0_501():
    options = slider_temperatures((0.5, 1.0, 1.5, 2.0))
    assert 0.5 in options and 1.5 in options and not any(0.49 < t < 0.51 and t != 0.5 for t in options)
    assert options.count(1.0) == 1


@pytest.mark.parametrize(("raw", "option"), [("0.5", 0.5), ("2.05", 2.0), ("0.7", 0.71), ("1000", 10.0),
                                             (0.36, 0.35)])
def test_a_links_temperature_lands_on_the_nearest_option(raw, option):
    assert nearest_on_log_scale(raw, LAB_GRID) == option


@pytest.mark.parametrize("raw", ["0", "-1", "abc", "nan"])
def test_a_links_temperature_that_is_not_positive_is_refused(raw):
    with pytest.raises(ValueError):
        nearest_on_log_scale(raw, LAB_GRID)


@pytest.mark.parametrize("text", ["0,5; 2", "0,5 2", "1; 0,5"])
@pytest.mark.parametrize("parse", [parse_scores, parse_temperatures])
def test_a_list_that_reads_only_as_decimal_commas_is_refused_with_the_hint(parse, text):
    with pytest.raises(ValueError, match=re.escape("use a point for decimals: 0.5, not 0,5")):
        parse(text)


def test_a_temperature_out_of_range_from_a_decimal_comma_says_so():
    with pytest.raises(AnalysisError) as caught:
        parse_temperatures("0,5, 1, 2")  # read as 0, 5, 1, 2
    said = str(caught.value)
    assert said.startswith("use a point for decimals: 0.5, not 0,5") and "'0' is out of range" in said
    with pytest.raises(AnalysisError, match=re.escape("use a point for decimals: 1.5, not 1,5")):
        parse_temperatures("1,5, 2,5, 3,5, 4,5")  # eight numbers: too many


@pytest.mark.parametrize(("text", "values"), [("0.5,1,2", (0.5, 1.0, 2.0)), ("0.3,3", (0.3, 3.0)),
                                              ("0.5,1 2", (0.5, 1.0, 2.0)), ("1,5", (1.0, 5.0)),
                                              ("0.5; 1; 2", (0.5, 1.0, 2.0))])
def test_lists_without_a_decimal_comma_still_parse(text, values):
    """A comma between digits is the list's separator as well ('0.3,3' is the link's form): only a list that
    reads no other way is refused."""
    assert parse_temperatures(text) == values
    assert parse_scores(text) == list(values)
    assert parse_scores("5,0,0,0") == [5.0, 0.0, 0.0, 0.0] and parse_scores("5, 0 0; 1") == [5.0, 0.0, 0.0, 1.0]


def test_other_errors_carry_no_decimal_hint():
    assert decimal_comma_hint("0.5, 1") is None and decimal_comma_hint("0.5,1") is None
    with pytest.raises(AnalysisError) as caught:
        parse_temperatures("0, 1")
    assert "decimals" not in str(caught.value)
