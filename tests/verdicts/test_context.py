"""The context-length verdict on small synthetic sweeps whose right numbers are known (tests/verdicts/synthetic.py):
where the loss breaks, where attention goes, the held-out gain against an independent computation, the grid's
edge, one sign convention, the RoPE decomposition, and the record it is stored as. The words are pinned by
tests/golden; here the records' numbers are asserted."""

import json
from dataclasses import replace

import numpy as np
import pytest

from model_utils.core.records import RecordError
from model_utils.core.records.sweep import SweepDocument, SweepPass
from model_utils.core.records.verdict import (
    ContextVerdict,
    Dominant,
    Edge,
    GridEdge,
    LeverKind,
    MassMove,
    RowKind,
    Scoring,
)
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.experiments.sweep import best_by_recipe, best_per_bucket
from model_utils.verdicts import words
from model_utils.verdicts.context import entropy_with_length, sweep_verdict
from tests.verdicts.synthetic import BUCKETS, INSIDE, SCHEDULE, TRAINED, document, plain, yarn_rope

PAST = [i for i, (start, _) in enumerate(BUCKETS) if start >= TRAINED]
GRID = {0.8: [2.25, 2.45, 3.45, 4.1], 1.0: [2.2, 2.5, 3.4, 4.0], 1.25: [2.3, 2.6, 3.2, 3.7],
        1.5: [2.4, 2.7, 3.3, 3.6]}  # NLL past the trained length per constant temperature


def grid_views(grid: dict = GRID, inside_offset: float = 0.05) -> list[tuple]:
    """Constant temperatures with these NLL past the trained length; inside it T = 1 is best by `inside_offset`."""
    return [(t, [*(v + (0 if t == 1 else inside_offset) for v in INSIDE), *past]) for t, past in grid.items()]


def past_mean(values) -> float:
    """The mean of per-bucket values past the trained length, per position: the last bucket has 255 with a loss."""
    return float(np.average(values, weights=[256, 256, 256, 255]))


def verdict_of(views: list[tuple]):
    written, passes = document(views)
    return written.verdict, written, passes


# --- 1. where the loss breaks -------------------------------------------------------------------------------------


def test_the_loss_breaks_at_the_first_past_bucket_above_every_bucket_inside_the_trained_context():
    verdict, _, _ = verdict_of(grid_views())
    found = verdict.loss_break
    assert found.in_context == pytest.approx((2.3, 2.6))
    assert found.at == 1536 and found.bucket == (1536, 1792)  # 3.4 > 2.6; 2.2 and 2.5 are not
    assert found.ratio == 1.5 and found.nll == pytest.approx(3.4)
    low, high = found.interval
    assert 2.6 < low < 3.4 < high
    assert found.earlier == pytest.approx((2.2, 2.5))  # the past buckets before it
    (headline,) = [item for item in words.headlines(verdict) if item.unit is words.Unit.POSITION]
    assert (headline.value, headline.ratio, headline.bucket) == (1536, 1.5, (1536, 1792))
    assert words.headline_number(headline) == "1,536-1,791" and "positions 1,536-1,791" in words.break_sentence(verdict)


def test_a_past_bucket_above_the_range_by_less_than_its_noise_is_not_yet_a_break():
    """2.61 against an in-context maximum of 2.6, with losses that vary by a nat from token to token: its interval
    reaches below 2.6, so the loss has not left the range there."""
    verdict, _, _ = verdict_of(grid_views({1.0: [2.2, 2.61, 3.4, 4.0], 1.25: [2.3, 2.6, 3.2, 3.7]}))
    assert verdict.loss_break.at == 1536


def test_a_loss_that_stays_in_the_range_does_not_break():
    verdict, _, _ = verdict_of(grid_views({1.0: [2.2, 2.5, 2.4, 2.3], 1.25: [2.3, 2.6, 2.5, 2.4]}))
    found = verdict.loss_break
    assert found.at is None and found.bucket is None and found.ratio is None and found.earlier is None
    assert verdict.past == (1024, 2048)
    (headline,) = [item for item in words.headlines(verdict) if item.unit is words.Unit.POSITION]
    assert headline.value is None


# --- 2. where attention goes ---------------------------------------------------------------------------------------


def attention_views(entropy_past: list[float]) -> list[tuple]:
    heads = {"normalized_entropy": [0.434, 0.41, 0.39, 0.381, *entropy_past],
             "distant_mass": [0.4] * 4 + [0.6] * 4, "recent_mass": [0.4] * 4 + [0.2] * 4, "sink_mass": 0.2,
             "untrained_mass": [0.0] * 4 + [0.001, 0.3, 0.5, 0.6]}
    return [(1.0, plain(GRID[1.0]), heads), (1.25, plain(GRID[1.25]))]


def test_attention_names_the_untrained_distances_and_an_entropy_change_within_the_trained_range():
    """Normalized entropy +0.02 from the second half of the trained context and distant mass +0.2: the old rule
    (anything over 0.005) called that 'spreads out'. Within the range the trained context itself spans, it is not:
    no past bucket lies above or below it."""
    verdict, _, _ = verdict_of(attention_views([0.39, 0.40, 0.41, 0.42]))
    entropy = verdict.attention.entropy
    assert entropy.in_context == pytest.approx((0.381, 0.434)) and entropy.past == pytest.approx((0.39, 0.42))
    assert (entropy.above, entropy.below, entropy.buckets) == (0, 0, 4)
    assert entropy.before == pytest.approx(np.mean([0.39, 0.381])) and entropy.past_mean == pytest.approx(0.405)
    rows = verdict.attention.untrained
    assert [row.share for row in rows] == pytest.approx([0.001 / 0.8, 0.375, 0.625, 0.75])
    assert [row.mass for row in rows] == pytest.approx([0.001, 0.3, 0.5, 0.6])
    uniform = [np.mean([(q - TRAINED) / q for q in range(start, stop)]) for start, stop in (BUCKETS[i] for i in PAST)]
    assert [row.uniform_share for row in rows] == pytest.approx(uniform)
    assert verdict.attention.beyond_uniform_from == 1280  # 37.5% of the non-sink mass against uniform's 27%


def test_an_entropy_past_the_trained_range_counts_the_buckets_above_it():
    verdict, _, _ = verdict_of(attention_views([0.39, 0.40, 0.45, 0.47]))
    entropy = verdict.attention.entropy
    assert (entropy.above, entropy.below) == (2, 0) and entropy.past[1] == pytest.approx(0.47)


# --- 3. gains: oracle, one constant temperature, held out ----------------------------------------------------------


def held_out_by_hand(passes: list[SweepPass], temperatures: list[float], per_bucket: bool = True) -> float:
    """Choose on the even blocks of 64 positions of each past bucket and score on the odd ones, and the other way
    round, written out with plain loops: the reference for PositionFolds and core.bootstrap.cross_fit."""
    by_t = {p.result.temperature: p.position_nll for p in passes if p.result.temperature in temperatures
            and p.result.rope is None}
    folds = {t: [[], []] for t in by_t}  # per temperature, per fold: the (bucket, positions) pieces
    for index in PAST:
        start, stop = BUCKETS[index]
        positions = np.arange(start, min(stop, len(by_t[1.0])))
        for fold in (0, 1):
            chosen = positions[((positions - start) // 64) % 2 == fold]
            for t in by_t:
                folds[t][fold].append(by_t[t][chosen])
    saved, count = 0.0, 0
    groups = range(len(PAST)) if per_bucket else [None]
    for group in groups:
        def part(t, fold, group=group):
            pieces = folds[t][fold] if group is None else [folds[t][fold][group]]
            return np.concatenate(pieces)
        for choose, score in ((0, 1), (1, 0)):
            best = min(by_t, key=lambda t, choose=choose: part(t, choose).mean())
            saved += (part(1.0, score) - part(best, score)).sum()
            count += len(part(1.0, score))
    return saved / count


def test_the_held_out_gain_is_chosen_on_some_positions_and_scored_on_the_others():
    verdict, _, passes = verdict_of(grid_views())
    gains = verdict.gains
    held = gains.held_out
    assert held.scoring is Scoring.CROSS_FIT_ONE_TEXT and verdict.block == 64
    assert held.saved == pytest.approx(held_out_by_hand(passes, list(GRID)), abs=1e-9)
    assert held.interval[0] < held.saved < held.interval[1]
    past_nll = {t: np.array(past) for t, past in GRID.items()}
    oracle = past_mean(past_nll[1.0] - np.min(list(past_nll.values()), axis=0))
    assert gains.oracle.scoring is Scoring.IN_SAMPLE and gains.oracle.saved == pytest.approx(oracle, abs=1e-9)
    constant = gains.constant
    assert constant.temperature == 1.25  # pooled 2.95 against 3.025 at T = 1
    assert constant.in_sample.saved == pytest.approx(past_mean(past_nll[1.0] - past_nll[1.25]))
    assert constant.worse_buckets == 2 and constant.buckets == 4
    assert constant.held_out.saved == pytest.approx(held_out_by_hand(passes, list(GRID), per_bucket=False), abs=1e-9)
    rise = past_mean(GRID[1.0]) - np.mean([2.6, 2.4])  # against the second half of the trained context
    assert verdict.rise == pytest.approx(rise) and held.share_of_rise == pytest.approx(held.saved / rise)
    assert verdict.decomposition.dominant is Dominant.NEITHER  # 31% of the rise: no lever leads the big numbers
    first = words.headlines(verdict)[0]
    assert (first.value, first.interval) == (held.saved, held.interval)


def test_the_oracle_gains_on_noise_and_the_held_out_choice_does_not():
    """Five temperatures that are T = 1 plus noise of their own: picked on the same positions, the best of them
    always looks better than T = 1; picked on other positions, it does not."""
    same = [2.2, 2.5, 3.4, 4.0]
    written, _ = document([(t, plain(same)) for t in (0.8, 0.9, 1.0, 1.1, 1.25)], exact=False)
    gains = written.verdict.gains
    assert gains.oracle.interval[0] > 0  # in-sample, noise looks like a gain
    assert gains.held_out.saved < gains.oracle.saved - 0.005
    assert gains.held_out.interval[0] < 0 < gains.held_out.interval[1]


# --- 4. the grid's edge --------------------------------------------------------------------------------------------


def test_a_best_temperature_at_the_largest_tried_is_flagged():
    verdict, _, _ = verdict_of(grid_views())
    assert GridEdge(rope=None, bucket=(1792, 2048), temperature=1.5, edge=Edge.LARGEST) in verdict.gains.edges


def test_a_grid_that_reaches_past_every_best_has_no_edge():
    grid = {0.8: [2.25, 2.55, 3.45, 4.1], 1.0: [2.2, 2.5, 3.4, 4.0], 1.25: [2.3, 2.6, 3.2, 3.7],
            1.5: [2.4, 2.7, 3.3, 3.8], 2.0: [2.6, 2.9, 3.5, 4.2]}
    verdict, _, _ = verdict_of(grid_views(grid))
    assert verdict.gains.edges == ()
    assert words.edge_sentence(verdict) is None


# --- 5. one sign convention: a saving is positive when better -----------------------------------------------------


def test_every_saving_is_positive_when_better_than_t1():
    verdict, _, _ = verdict_of([*grid_views(), (SCHEDULE, plain([2.1, 2.4, 3.3, 3.9]))])
    (schedule,) = verdict.decomposition.schedules()
    assert schedule.view.label == "yarn (scale=2)" and schedule.saved == pytest.approx(0.1)  # better than T = 1
    assert schedule.multipliers.past is not None and schedule.lever is LeverKind.SCHEDULE
    assert verdict.gains.oracle.saved > 0 and all(entry.saved >= 0 for entry in verdict.gains.best)


def test_the_entropy_trend_is_measured_at_t1_inside_and_past_the_trained_length():
    views = [(1.0, plain(GRID[1.0]), {"normalized_entropy": [0.434, 0.41, 0.39, 0.381, 0.39, 0.4, 0.41, 0.42],
                                      "entropy": [2.6, 3.0, 3.2, 3.4, 3.6, 3.7, 3.9, 4.0]}),
             (1.25, plain(GRID[1.25]))]
    written, _ = document(views)
    trend = entropy_with_length(written)
    assert trend == written.verdict.entropy_trend  # the stored one is the document's own
    assert trend.documents is None and (trend.inside.first, trend.inside.last) == ((1, 256), (768, 1024))
    assert trend.inside.entropy == pytest.approx((2.6, 3.4)) and trend.inside.normalized == pytest.approx((0.434,
                                                                                                           0.381))
    assert trend.past.last == (1792, 2048) and trend.past.entropy == pytest.approx((3.4, 4.0))
    assert trend.past.normalized == pytest.approx((0.381, 0.42))


# --- 6. the RoPE decomposition -------------------------------------------------------------------------------------


RECIPE_VIEWS = [
    (0.8, plain([2.25, 2.45, 3.45, 4.1]), {"untrained_mass": [0] * 4 + [0.48] * 4}),
    (1.0, plain([2.2, 2.5, 3.4, 4.0]), {"untrained_mass": [0] * 4 + [0.5] * 4}),
    (1.25, plain([2.3, 2.6, 3.2, 3.7]), {"untrained_mass": [0] * 4 + [0.52] * 4}),
    (View(1.0, Rope("yarn", 2.0)), plain([2.15, 2.25, 2.35, 2.45]), {"untrained_mass": [0] * 4 + [0.03] * 4}),
    (yarn_rope(0.8), plain([2.3, 2.4, 2.5, 2.6]), {"untrained_mass": [0] * 4 + [0.02] * 4}),
    (yarn_rope(1.0), plain([2.2, 2.3, 2.4, 2.5]), {"untrained_mass": [0] * 4 + [0.02] * 4}),
    (yarn_rope(1.25), plain([2.25, 2.35, 2.35, 2.45]), {"untrained_mass": [0] * 4 + [0.02] * 4}),
    (View(1.0, Rope("dynamic", 2.0)), plain([2.2, 2.4, 2.8, 3.0]), {"untrained_mass": [0] * 4 + [0.3] * 4}),
    (View(1.0, Rope("linear", 2.0)), plain([2.3, 2.6, 3.0, 3.2]), {"untrained_mass": [0] * 4 + [0.5] * 4}),
]
YARN_ROPE = Rope("yarn-rope", 2.0)


def kinds(verdict: ContextVerdict) -> list[tuple]:
    """Each table row as (kind, its pass or its recipe)."""
    return [(row.kind, row.view.label if row.view else (row.rope.label if row.rope else None))
            for row in verdict.decomposition.table]


def test_the_decomposition_separates_the_interpolation_from_the_temperatures():
    verdict, written, passes = verdict_of(RECIPE_VIEWS)
    assert kinds(verdict) == [
        (RowKind.REFERENCE, "T=1"), (RowKind.ORACLE, None), (RowKind.HELD_OUT, None),
        (RowKind.RECIPE, "yarn (s=2) + T=1"), (RowKind.RECIPE, "yarn-rope (s=2) + T=1"),
        (RowKind.ORACLE, "yarn-rope (s=2)"), (RowKind.HELD_OUT, "yarn-rope (s=2)"), (RowKind.ON_TOP, "yarn-rope (s=2)"),
        (RowKind.RECIPE, "dynamic (s=2) + T=1"), (RowKind.RECIPE, "linear (s=2) + T=1"),
        (RowKind.OWN_TEMPERATURE, "yarn (s=2) + T=1")]
    decomposition = verdict.decomposition
    rows = {(row.kind, row.view.label if row.view else row.rope): row for row in decomposition.table}
    one = np.array([2.2, 2.5, 3.4, 4.0])
    interpolation = decomposition.row_of(yarn_rope(1.0))
    assert interpolation.saved == pytest.approx(past_mean(one - [2.2, 2.3, 2.4, 2.5]))
    assert not interpolation.own_temperature and decomposition.row_of(View(1.0, Rope("yarn", 2.0))).own_temperature
    yarn = decomposition.row_of(View(1.0, Rope("yarn", 2.0)))
    assert yarn.saved == pytest.approx(past_mean(one - [2.15, 2.25, 2.35, 2.45]))
    own = rows[(RowKind.OWN_TEMPERATURE, "yarn (s=2) + T=1")]
    assert own.saved == pytest.approx(0.05) and own.against == yarn_rope(1.0)
    oracle, both = rows[(RowKind.ORACLE, YARN_ROPE)], rows[(RowKind.HELD_OUT, YARN_ROPE)]
    assert oracle.saved == pytest.approx(past_mean(one - [2.2, 2.3, 2.35, 2.45])) and both.interval is not None
    on_top = rows[(RowKind.ON_TOP, YARN_ROPE)]
    assert on_top.against == yarn_rope(1.0) and on_top.interval is not None  # against the recipe at T = 1
    assert on_top.saved == pytest.approx(both.saved - interpolation.saved)  # the same choices
    assert decomposition.row_of(View(1.0)).untrained_mass_past == pytest.approx(0.5)
    moves = {row.view.label: row.untrained for row in decomposition.table if row.kind is RowKind.RECIPE}
    assert moves["yarn-rope (s=2) + T=1"] is MassMove.GOES_AWAY  # 0.02 against 0.5: a tenth or less
    assert moves["dynamic (s=2) + T=1"] is MassMove.FALLS  # below the 0.48-0.52 every constant T leaves
    assert moves["linear (s=2) + T=1"] is MassMove.STAYS
    assert decomposition.untrained_constant_range == pytest.approx((0.48, 0.52))
    # the big numbers lead with the interpolation alone, as the answer names it, not YaRN with its own T
    assert decomposition.dominant is Dominant.RECIPE and decomposition.lever(Dominant.RECIPE) is interpolation
    assert [item.value for item in words.headlines(verdict)][:1] == [interpolation.saved]
    # the JSON keeps the best temperatures per bucket as before, next to the verdict
    assert written.best == best_per_bucket(passes, BUCKETS)
    assert written.best_by_rope == best_by_recipe(passes, BUCKETS)
    assert list(written.best_by_rope) == [YARN_ROPE]  # the one recipe that ran T = 1 and another T


def test_the_decomposition_has_rows_only_for_what_the_sweep_ran():
    views = [view for view in RECIPE_VIEWS if not isinstance(view[0], View) or view[0].rope.kind == "linear"]
    verdict, _, _ = verdict_of(views)
    assert kinds(verdict) == [(RowKind.REFERENCE, "T=1"), (RowKind.ORACLE, None), (RowKind.HELD_OUT, None),
                              (RowKind.RECIPE, "linear (s=2) + T=1")]


# --- 7. the record ---------------------------------------------------------------------------------------------------


def test_the_sweep_json_carries_the_verdict_and_the_page_needs_nothing_else():
    written, _ = document(RECIPE_VIEWS)
    data = json.loads(json.dumps(written.to_dict(), allow_nan=False))
    stored = data["verdict"]
    assert stored["format"] == 6 and stored["documents"] is None and stored["scoring"] == "cross_fit_one_text"
    assert stored["loss_break"]["bucket"] == [1536, 1792] and stored["loss_break"]["ratio"] == 1.5
    assert {row["kind"] for row in stored["decomposition"]["rows"]} >= {"reference", "recipe", "on_top", "held_out"}
    for result in data["results"]:
        assert "position_nll" not in result
    read = SweepDocument.from_dict(data)
    assert read.verdict == written.verdict and read.verdict.to_dict() == stored


def test_a_verdict_of_a_format_this_version_does_not_read_is_refused_with_the_fix():
    written, _ = document(RECIPE_VIEWS)
    data = written.to_dict()
    with pytest.raises(RecordError, match=r"this context verdict has format 1; .* regenerate it"):
        SweepDocument.from_dict(data | {"verdict": data["verdict"] | {"format": 1}})


def test_no_verdict_when_nothing_past_the_trained_length_has_a_loss():
    """A last bucket past the trained length that holds only the last token (no next token): nothing measured."""
    written, passes = document(grid_views())
    results = [replace(result, nll=(*result.nll[:4], None)) for result in written.results]
    assert sweep_verdict(results=results, buckets=(*written.buckets[:4], (1024, 1025)), n_tokens=1025,
                         trained_length=TRAINED, best=(), layer_spans=None,
                         position_nll={p.result.view: p.position_nll for p in passes}) is None


# --- 8. distance remappings: attention on untrained distances is measured on the distance the model is given -----


SELF_EXTEND = Rope("self-extend", group=2, window=512)
REMAP_VIEWS = [
    *RECIPE_VIEWS[:3],
    # the far keys stay far back in the text (raw 0.5, as at T = 1) but sit at trained distances once remapped
    (View(1.0, SELF_EXTEND), plain([2.2, 2.3, 2.45, 2.55]),
     {"untrained_mass": [0] * 4 + [0.5] * 4, "effective_untrained_mass": [0.0] * 8}),
    (View(1.0, Rope("rerope", window=512)), plain([2.2, 2.4, 2.6, 2.8]),
     {"untrained_mass": [0] * 4 + [0.49] * 4, "effective_untrained_mass": [0] * 4 + [0.3] * 4}),
]


def test_a_remapped_row_is_judged_on_the_effective_distance_and_keeps_both_masses():
    verdict, _, _ = verdict_of(REMAP_VIEWS)
    decomposition = verdict.decomposition
    grouped = decomposition.row_of(View(1.0, SELF_EXTEND))
    assert grouped.remaps and grouped.untrained_mass_past == pytest.approx(0.5)
    assert grouped.effective_untrained_mass_past == pytest.approx(0.0)
    assert grouped.untrained is MassMove.GOES_AWAY  # on the raw distance it would stay, as every temperature leaves it
    rerope = decomposition.row_of(View(1.0, Rope("rerope", window=512)))
    assert rerope.untrained is MassMove.FALLS  # 0.3 effective, below the Ts
    reference = decomposition.row_of(View(1.0))
    assert not reference.remaps and reference.effective_untrained_mass_past == pytest.approx(0.5)
    assert verdict.remaps


def test_without_an_effective_mass_the_raw_one_is_the_distance_the_model_is_given():
    """A pass cached before the remappings carries no effective mass: on the model's own positions it is the raw
    one."""
    written, passes = document(RECIPE_VIEWS)
    results = [replace(result, heads={name: values for name, values in result.heads.items()
                                      if name != "effective_untrained_mass"}) for result in written.results]
    verdict = sweep_verdict(results=results, buckets=written.buckets, n_tokens=written.n_tokens,
                            trained_length=TRAINED, best=written.best, layer_spans=None,
                            position_nll={p.result.view: p.position_nll for p in passes})
    assert not verdict.remaps and verdict.decomposition == written.verdict.decomposition
    assert verdict.decomposition.row_of(View(1.0, Rope("dynamic", 2.0))).untrained is MassMove.FALLS


def test_the_best_recipe_headline_names_the_recipe_the_answer_names():
    """Where the loss does not rise (Gemma 3 270M's one text), the recipe headline stands beside the answer: both
    name the interpolation alone, even where YaRN with its own attention factor saves a little more (that factor is
    the temperature on top, scored apart)."""
    views = [(0.8, plain([2.45, 2.5, 2.45, 2.5])), (1.0, plain([2.4, 2.45, 2.4, 2.45])),
             (1.25, plain([2.5, 2.55, 2.5, 2.55])),
             (View(1.0, Rope("yarn", 2.0)), plain([2.1, 2.1, 2.1, 2.1])), (yarn_rope(1.0), plain([2.12] * 4))]
    verdict, _, _ = verdict_of(views)
    decomposition = verdict.decomposition
    assert decomposition.dominant is Dominant.NO_RISE
    lever = decomposition.lever(Dominant.RECIPE)
    assert lever.view == yarn_rope(1.0) and lever.saved == pytest.approx(0.3, abs=0.01)
    yarn = decomposition.row_of(View(1.0, Rope("yarn", 2.0)))
    assert yarn.saved > lever.saved  # the larger saving is not the one named
    recipe = [item for item in words.headlines(verdict) if item.value == lever.saved]
    assert len(recipe) == 1 and recipe[0].label.endswith(words.row_label(lever))
