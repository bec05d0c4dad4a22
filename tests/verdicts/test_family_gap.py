"""The recipe families compared on the same resamples (past.family_gap_rows): the leading family's recipe at T = 1
against the next family's, paired, so the verdict says whether the lead is resolved or within the noise."""

from model_utils.core.records.verdict import Family, RowKind
from model_utils.core.rope import Rope
from model_utils.core.views import View
from tests.verdicts.synthetic import document, plain, yarn_rope

FAR = {"untrained_mass": [0] * 4 + [0.5] * 4}
NEAR = FAR | {"effective_untrained_mass": [0.0] * 8}
SELF_EXTEND = View(1.0, Rope("self-extend", group=2, window=512))
SINKS = View(1.0, Rope("sink-window", sinks=4, window=1024))


def sweep(self_extend: list[float], sinks: list[float]):
    written, _ = document([(1.0, plain([3.4, 3.6, 3.8, 4.0]), FAR), (1.25, plain([3.35, 3.55, 3.75, 3.95]), FAR),
                           (yarn_rope(1.0), plain([3.0, 3.2, 3.3, 3.4])),
                           (SELF_EXTEND, plain(self_extend), NEAR), (SINKS, plain(sinks), NEAR)])
    return written.verdict


def test_the_gap_is_the_difference_of_the_two_leads_with_a_paired_interval():
    decomposition = sweep([2.5] * 4, [2.9] * 4).decomposition
    gap = decomposition.family_gap()
    lead, second = SELF_EXTEND, SINKS  # sinks 2.9 beat yarn-rope's 3.0-3.4 past the trained length
    assert (gap.view, gap.against, gap.family) == (lead, second, Family.REMAP)
    assert gap.saved == decomposition.row_of(lead).saved - decomposition.row_of(second).saved
    low, high = gap.interval
    assert low <= gap.saved <= high and low > 0  # 0.4 nats per token apart: resolved


def test_two_families_a_hair_apart_are_within_the_noise():
    low, high = sweep([2.9] * 4, [2.9005] * 4).decomposition.family_gap().interval
    assert low < 0 < high


def test_one_family_has_no_gap():
    written, _ = document([(1.0, plain([3.4, 3.6, 3.8, 4.0]), FAR), (yarn_rope(1.0), plain([3.0, 3.2, 3.3, 3.4]))])
    assert not [row for row in written.verdict.decomposition.rows if row.kind is RowKind.FAMILY_GAP]
