"""The words say only what was measured (issue 58's audit): a share of the rise from ALL_OF_IT on is "all of it",
never "more than the rise"; a share of untrained-distance mass is above uniform attention's only by ABOVE_UNIFORM,
so a tie is not; a loss with no sure break says the past bucket means above the range and the rise on the same words;
the recipe families name a recipe with its own temperature that saves more; the buckets whose best T is not 1 are
counted before those whose interval includes 1; the best temperature alone is said as a temperature per block of
positions, with one temperature throughout beside it; a fit compared with T = 1 alone says that comparison once; a
sweep or a summary read fills its verdict's past bucket means and schedules from its own results."""

from dataclasses import replace

from model_utils.core.records.verdict import RowKind, with_past_nll
from model_utils.experiments import committed
from model_utils.verdicts import words
from model_utils.verdicts.fit import judge_fit
from model_utils.verdicts.layers import ABOVE_UNIFORM, first_above_uniform
from tests.golden import cases


def test_a_share_of_the_rise_from_all_of_it_on_is_all_of_it_and_never_more():
    assert words.percent_of_rise(1.04) == "104% of the rise: all of it"
    assert words.percent_of_rise(words.ALL_OF_IT) == "100% of the rise: all of it"
    assert words.percent_of_rise(0.99) == "99% of the rise"
    for name, verdict in cases.verdicts().items():
        assert not any("more than the rise" in sentence for sentence in words.sentences(verdict)), name


def test_a_share_within_a_tenth_of_uniform_attentions_is_a_tie_not_above():
    assert first_above_uniform([0.157, 0.307, 0.462], [0.237, 0.304, 0.36]) == 2  # the bundled corpus's buckets
    assert first_above_uniform([0.0, 0.0], [0.0, 0.0]) is None  # a sliding layer that never sees that far
    assert first_above_uniform([0.01], [0.0]) == 0 and first_above_uniform([ABOVE_UNIFORM * 0.3], [0.3]) == 0
    verdict = committed.TUNES.read_first().verdict
    rows = verdict.attention.untrained
    start = next(row.bucket[0] for row in rows if row.share >= ABOVE_UNIFORM * row.uniform_share)
    assert f"from position {start:,} on" in words.attention_sentences(verdict)[0]


def test_a_loss_with_no_sure_break_says_the_means_above_the_range_and_the_rise_on_the_same_words():
    gemma = next(summary for summary in committed.TUNES.read() if summary.verdict.loss_break.bucket is None)
    verdict = gemma.verdict
    found, same = verdict.loss_break, verdict.same_token_rise
    above = [mean for mean in found.past_nll if mean > found.in_context[1]]
    said = words.break_sentence(verdict)
    assert above and f"the means of {len(above)} of the {len(found.past_nll)} past buckets lie above it" in said
    assert f"({min(above):.2f}-{max(above):.2f})" in said
    assert same.interval[0] > 0 and f"by {same.rise:.2f} nats per token, on each of the {same.documents} documents" \
        in said
    quiet = replace(verdict, loss_break=replace(found, past_nll=tuple(found.in_context[1] for _ in found.past_nll)),
                    same_token_rise=None)
    assert "though" not in words.break_sentence(quiet) and "same words the loss does rise" not in \
        words.break_sentence(quiet)


def test_a_document_read_fills_its_verdicts_past_means_and_its_rows_are_its_own_views():
    for document in (*committed.SWEEPS.read(), *committed.TUNES.read()):
        reference = next(result for result in document.results if result.view.label == "T=1")
        past = [i for i, (start, _) in enumerate(document.buckets) if start >= document.trained_length]
        assert document.verdict.loss_break.past_nll == tuple(reference.nll[i] for i in past)
        views = [result.view for result in document.results]
        schedules = document.verdict.decomposition.schedules()
        assert [row.view for row in schedules] == [view for view in views if view.schedule is not None]
        assert all(row.view in views for row in document.verdict.decomposition.table if row.view is not None)
    verdict = committed.SWEEPS.read_first().verdict
    assert with_past_nll(verdict, [(0, 1)], [None]) is verdict  # already held: kept as it is


def test_the_recipe_families_name_a_recipe_with_its_own_temperature_that_saves_more():
    verdict = committed.SWEEPS.read_first().verdict
    own = next(row for row in verdict.decomposition.levers if row.kind is RowKind.RECIPE and row.own_temperature)
    lever = verdict.decomposition.family_lever(own.family)
    said = words.families_sentence(verdict)
    assert "each by its recipe that saves the most at T = 1 without a temperature of its own" in said
    assert own.saved > lever.saved and f"{words.row_label(own)}, with a temperature of its own, saves more: " \
        f"{own.saved:+.3f}" in said


def test_the_buckets_whose_best_t_is_not_1_are_counted_before_those_that_do_not_rule_it_out():
    verdict = committed.SWEEPS.read_first().verdict
    moved = [entry for entry in verdict.gains.best if entry.temperature != 1]
    said = words.best_sentences(verdict)[-1]
    assert said.startswith(f"Of the {len(moved)} past buckets whose best T is not 1, in 1 (")
    assert len(moved) < len(verdict.gains.best)


def test_the_best_temperature_alone_is_a_temperature_per_block_with_one_throughout_beside_it():
    summary = committed.TUNES.read_first()
    verdict, model = summary.verdict, summary.model
    bullet = words.found_bullets([(model, verdict)])[1]
    size = verdict.gains.best[0].bucket[1] - verdict.gains.best[0].bucket[0]
    constant = verdict.gains.constant.held_out.saved / verdict.rise
    assert bullet.startswith(f"The best temperature per block of {size:,} positions, chosen on other documents,")
    assert bullet.endswith(f"(one temperature throughout: {constant:.0%}).")


def test_a_fit_compared_with_t1_alone_says_that_comparison_once():
    alone = [fit for fit in cases.fits().values()
             if fit.compared_temperatures == (1.0,) and {"plain", "best_constant"} <= set(fit.held_out.gains)]
    assert alone  # the committed fit on yarn-rope (s=1.5)
    for fit in alone:
        said = [sentence for sentence in words.fit_sentences(judge_fit(fit)) if sentence.startswith("On the held-out")]
        assert len(said) == len(judge_fit(fit).judgements) - 1
        assert sum("the only constant temperature compared" in sentence for sentence in said) == 1
        assert f"{fit.held_out.gains['plain'].saved:+.3f} nats per token" in said[0]
