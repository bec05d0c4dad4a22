"""The recipe families compared on the same resamples (past.family_gap_rows): the leading family's recipe at T = 1
against the next family's, paired, so the verdict says whether the lead is resolved or within the noise."""

from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.verdicts.context import context_verdict
from tests.verdicts.synthetic import document, plain, yarn_rope

FAR = {"untrained_mass": [0] * 4 + [0.5] * 4}
NEAR = FAR | {"effective_untrained_mass": [0.0] * 8}
SELF_EXTEND = View(1.0, Rope("self-extend", group=2, window=512))
SINKS = View(1.0, Rope("sink-window", sinks=4, window=1024))


def sweep(self_extend: list[float], sinks: list[float]):
    written, _ = document([(1.0, plain([3.4, 3.6, 3.8, 4.0]), FAR), (1.25, plain([3.35, 3.55, 3.75, 3.95]), FAR),
                           (yarn_rope(1.0), plain([3.0, 3.2, 3.3, 3.4])),
                           (SELF_EXTEND, plain(self_extend), NEAR), (SINKS, plain(sinks), NEAR)])
    return context_verdict(written)


def gap_row(verdict) -> dict:
    (row,) = [row for row in verdict.decomposition.rows if row["kind"] == "family_gap"]
    return row


def test_the_gap_is_the_difference_of_the_two_leads_with_a_paired_interval():
    verdict = sweep([2.5] * 4, [2.9] * 4)
    row = gap_row(verdict)
    saved = {row["label"]: row["saved"] for row in verdict.decomposition.rows if row["kind"] == "recipe"}
    lead, second = SELF_EXTEND.label, SINKS.label  # sinks 2.9 beat yarn-rope's 3.0-3.4 past the trained length
    assert row["label"] == f"{lead} vs {second}" and row["against"] == second
    assert row["saved"] == saved[lead] - saved[second]
    low, high = row["interval"]
    assert low <= row["saved"] <= high and low > 0  # 0.4 nats per token apart: resolved
    assert f"recovers the most of the recipe families ({lead}, " in verdict.answer()
    assert verdict.families_sentence().endswith(f"The first two on the same resamples: {row['label']} "
                                                f"{row['saved']:+.3f} (95% interval {low:+.3f} to {high:+.3f}).")


def test_two_families_a_hair_apart_recover_about_the_same():
    verdict = sweep([2.9] * 4, [2.9005] * 4)
    low, high = gap_row(verdict)["interval"]
    assert low < 0 < high
    assert "The recipe families recover about the same" in verdict.answer()
    assert "recovers the most" not in verdict.answer()


def test_one_family_has_no_gap():
    written, _ = document([(1.0, plain([3.4, 3.6, 3.8, 4.0]), FAR), (yarn_rope(1.0), plain([3.0, 3.2, 3.3, 3.4]))])
    assert not [row for row in context_verdict(written).decomposition.rows if row["kind"] == "family_gap"]
