"""The retrieval probe on the tiny model: its texts differ only in the copy, nothing planted gains nothing, T = 1 is
the plain model, the masses are those of transformers' own eager attention maps, cached passes are reused (and a
schedule that is 1 on every position shares T = 1's), and a run's document reads back as its records. A prefix read
once and continued gives what separate passes give (T != 1 in-model, YaRN's interpolation, Self-Extend), a schedule
whose parameter is the text's length reads whole texts, and a shared run resumes. On the bundled model (slow), a
copy a few hundred tokens back is read, and a shared prefix agrees with separate passes."""

import json
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from model_utils.core.errors import AnalysisError
from model_utils.core.records.retrieval import ReachOutcome, RetrievalDocument
from model_utils.core.retrieval import Layout, planted_ids, planted_prefix, reads_by_position, unplanted_ids
from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule, yarn_multiplier
from model_utils.core.views import View
from model_utils.engine.retrieval import read_once, repeat_pass, retrieval_pass
from model_utils.experiments.retrieval.passages import Tokens
from model_utils.experiments.retrieval.run import RetrievalRequest, retrieval, run_units, units
from model_utils.experiments.runs.pool import Placement
from model_utils.verdicts import words
from tests.support.models import reference_copy

pytestmark = pytest.mark.usefixtures("one_torch_thread")
FILLER = Tokens(name="filler", source="random", ids=tuple(int(i) for i in np.random.default_rng(0).integers(
    3, 250, size=400)), labels=())
PASSAGE = Tokens(name="a", source="random", ids=tuple(range(100, 124)), labels=tuple(str(i) for i in range(24)))
OTHER = Tokens(name="b", source="random", ids=tuple(range(160, 184)), labels=tuple(str(i) for i in range(24)))


def plain_nll(loaded, ids: list[int]) -> np.ndarray:
    with torch.inference_mode():
        logits = loaded.model(input_ids=torch.tensor([ids])).logits[0].double()
    return -torch.log_softmax(logits[:-1], dim=-1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0].numpy()


def test_the_two_texts_differ_only_in_the_copy_and_share_the_repeats_positions():
    place = Layout(lead=8, passage=24, distance=100)
    planted, unplanted = planted_ids(FILLER.ids, PASSAGE.ids, place), unplanted_ids(FILLER.ids, PASSAGE.ids, place)
    assert len(planted) == len(unplanted) == place.n_tokens == 132
    differ = [i for i in range(len(planted)) if planted[i] != unplanted[i]]
    assert set(differ) <= set(range(*place.copy)) and differ
    assert planted[slice(*place.copy)] == planted[slice(*place.repeat)] == list(PASSAGE.ids)
    assert place.repeat[0] - place.copy[0] == 100 and place.scored == (108, 131)


def test_a_passage_that_is_already_the_filler_gains_exactly_nothing(tiny):
    place = Layout(lead=8, passage=24, distance=100)
    same = FILLER.ids[8:32]  # planting the filler's own tokens changes no token
    planted = retrieval_pass(tiny, planted_ids(FILLER.ids, same, place), View(1.0), place, 1024, False)
    unplanted = retrieval_pass(tiny, unplanted_ids(FILLER.ids, same, place), View(1.0), place, 1024, False)
    assert planted.loss - unplanted.loss == 0.0
    assert np.array_equal(planted.copy_mass, unplanted.copy_mass)


def test_t1_is_the_plain_models_loss_on_the_repeat(tiny):
    place = Layout(lead=8, passage=24, distance=60)
    ids = planted_ids(FILLER.ids, PASSAGE.ids, place)
    found = retrieval_pass(tiny, ids, View(1.0), place, 1024, False)
    first, stop = place.scored
    np.testing.assert_allclose(found.token_nll, plain_nll(tiny, ids)[first:stop], atol=2e-4)
    assert found.loss == pytest.approx(float(plain_nll(tiny, ids)[first:stop].mean()), abs=1e-4)


def test_the_masses_are_those_of_the_eager_attention_maps(tiny):
    place = Layout(lead=8, passage=24, distance=60)
    ids = planted_ids(FILLER.ids, PASSAGE.ids, place)
    found = retrieval_pass(tiny, ids, View(1.0), place, 1024, False)
    with torch.inference_mode():
        maps = reference_copy(tiny, "eager")(input_ids=torch.tensor([ids]), output_attentions=True).attentions
    first, stop = place.scored
    start, end = place.copy
    rows = np.arange(stop - first)
    for layer, weights in enumerate(maps):
        block = weights[0, :, first:stop].double().numpy()  # [H, scored queries, keys]
        copy = block[..., start:end].sum(axis=-1).mean(axis=-1)
        target = block[:, rows, start + 1 + rows].mean(axis=-1)
        np.testing.assert_allclose(found.copy_mass[layer], copy.mean(), atol=1e-5)
        np.testing.assert_allclose(found.copy_mass_top[layer], copy.max(), atol=1e-5)
        np.testing.assert_allclose(found.target_mass[layer], target.mean(), atol=1e-5)
        np.testing.assert_allclose(found.sink_mass[layer], block[..., 0].mean(), atol=1e-5)


def test_a_temperature_moves_the_repeats_loss(tiny):
    place = Layout(lead=8, passage=24, distance=60)
    ids = planted_ids(FILLER.ids, PASSAGE.ids, place)
    one, soft = (retrieval_pass(tiny, ids, View(t), place, 1024, False).loss for t in (1.0, 2.0))
    assert soft != pytest.approx(one, abs=1e-3)


@pytest.mark.parametrize(("passage", "distance", "beyond", "message"), [
    (Tokens(name="e", source="", ids=(), labels=()), 64, False, "the passage is empty"),
    (PASSAGE, 16, False, "longer than the distance 16"),
    (PASSAGE, 500, False, "the filler has 400"),
    (PASSAGE, 300, False, "past the model's trained length of 256"),
])
def test_a_probe_that_cannot_be_built_is_refused_before_any_pass(tiny, tmp_path, passage, distance, beyond, message):
    request = RetrievalRequest(distances=(distance,), views=(View(1.0),), trained_length=256, beyond_trained=beyond)
    with pytest.raises(AnalysisError, match=message):
        retrieval(tiny, FILLER, [passage], request, cache_dir=tmp_path)


def test_views_are_checked_before_any_pass(tiny, tmp_path):
    without_one = RetrievalRequest(distances=(64,), views=(View(2.0),), trained_length=1024)
    with pytest.raises(AnalysisError, match="include 1"):
        retrieval(tiny, FILLER, [PASSAGE], without_one, cache_dir=tmp_path)
    shuffled = RetrievalRequest(distances=(128, 64), views=(View(1.0),), trained_length=1024)
    with pytest.raises(AnalysisError, match="shortest first"):
        retrieval(tiny, FILLER, [PASSAGE], shuffled, cache_dir=tmp_path)


def test_a_schedule_that_is_one_everywhere_shares_t1s_passes_and_a_rerun_computes_none(tiny, tmp_path):
    inside = Schedule("qwen-logn", 1024.0)  # 1 on every position up to 1,024
    request = RetrievalRequest(distances=(40, 80), views=(View(1.0), View(inside), View(1.5)), trained_length=1024)
    assert len({unit.key for unit in units(FILLER, [PASSAGE], request, "model")}) == 8  # 12 units, 2 views share
    heard = []
    document = retrieval(tiny, FILLER, [PASSAGE, OTHER], request, cache_dir=tmp_path, on_unit=heard.append)
    assert len(list(tmp_path.glob("*.json"))) == 16 and heard[-1].done == 16
    again = []
    run_units(tiny, FILLER, [PASSAGE, OTHER], request, tmp_path, Placement(), again.append)
    assert again == []
    one, flat = (document.point("a", 40, view) for view in (View(1.0), View(inside)))
    assert one.planted.loss == flat.planted.loss and one.unplanted.loss == flat.unplanted.loss


def test_the_document_reads_back_and_its_curves_are_the_points_means(tiny, tmp_path):
    request = RetrievalRequest(distances=(30, 60, 120), views=(View(1.0), View(0.8)), trained_length=1024)
    document = retrieval(tiny, FILLER, [PASSAGE, OTHER], request, cache_dir=tmp_path)
    again = RetrievalDocument.from_dict(json.loads(json.dumps(document.to_dict())))
    assert again.to_dict() == document.to_dict()
    curve = again.curve(View(0.8))
    for index, distance in enumerate(request.distances):
        gains = [again.point(name, distance, View(0.8)).gain for name in ("a", "b")]
        assert curve.gain[index] == pytest.approx(np.mean(gains), abs=1e-5)
        assert (curve.low[index], curve.high[index]) == pytest.approx((min(gains), max(gains)), abs=1e-5)
    assert again.verdict.reference == View(1.0) and [s.view for s in again.verdict.shifts] == [View(0.8)]
    assert again.curve(View(1.0)).reach.outcome in set(ReachOutcome)


@pytest.mark.slow
def test_the_bundled_model_reads_a_copy_a_few_hundred_tokens_back(bundled, tmp_path):
    from model_utils.experiments.retrieval.passages import builtin_filler, builtin_passages

    filler = builtin_filler(bundled, "long", 1024)
    passage = builtin_passages(bundled, ("essay",), 128)[0]
    request = RetrievalRequest(distances=(384,), views=(View(1.0),), trained_length=bundled.max_positions)
    point = retrieval(bundled, filler, [passage], request, cache_dir=tmp_path).point("essay", 384, View(1.0))
    assert point.unplanted.loss > 2.0 and point.planted.loss < 1.0 and point.gain > 1.5
    # some head reads the copy of the next token (0.82 measured); with nothing planted no head looks there (0.007)
    assert point.planted.target_mass_top.max() > 0.5 and point.unplanted.target_mass_top.max() < 0.05


@dataclass(frozen=True)
class LengthYarn(Schedule):
    """A schedule whose parameter is the text's length: YaRN's factor at the scale n / 64 (a test's stand-in for
    yarn:trained resolved per text)."""

    @property
    def label(self) -> str:
        return "yarn (scale=n/64)"

    def multipliers(self, n_tokens: int) -> np.ndarray:
        return np.full(n_tokens, float(yarn_multiplier(n_tokens / 64)))


SHARED_VIEWS = (View(1.0), View(0.7), View(1.0, Rope("yarn-rope", 2.0)),
                View(1.0, Rope("self-extend", group=2, window=32)), View(LengthYarn("yarn")))


def both_ways(loaded, request, tmp_path, passages=(PASSAGE, OTHER)):
    """The same run with shared prefixes and with separate passes, each in a cache of its own."""
    return [retrieval(loaded, FILLER, list(passages), request, cache_dir=tmp_path / str(separate),
                      separate_passes=separate) for separate in (False, True)]


def test_shared_prefixes_give_what_separate_passes_give(tiny, tmp_path):
    request = RetrievalRequest(distances=(40, 96, 200, 300), views=SHARED_VIEWS, trained_length=256,
                               beyond_trained=True)
    shared, separate = both_ways(tiny, request, tmp_path)
    for mine, theirs in zip(shared.points, separate.points, strict=True):
        where = f"{mine.passage} at {mine.distance}, {mine.view.label}"
        assert mine.gain == pytest.approx(theirs.gain, abs=1e-5), where
        for state in ("planted", "unplanted"):
            one, other = getattr(mine, state), getattr(theirs, state)
            np.testing.assert_allclose(one.token_nll, other.token_nll, atol=2e-4, err_msg=where)
            for mass in ("copy_mass", "copy_mass_top", "target_mass", "sink_mass"):
                np.testing.assert_allclose(getattr(one, mass), getattr(other, mass), atol=1e-5, err_msg=where)
            assert other.prefix_tokens is None
    # every view but the length-dependent schedule continued a prefix read once: the filler, or a planted text
    continued = {p.view for p in shared.points if p.planted.prefix_tokens is not None}
    assert continued == set(SHARED_VIEWS[:-1])
    assert {p.unplanted.prefix_tokens for p in shared.points if p.view in continued} == {request.lead + 300}
    assert shared.separate_views == SHARED_VIEWS[-1:] and separate.separate_views == SHARED_VIEWS


@pytest.mark.parametrize("name", ["gemma3_text", "gemma2"])
def test_a_shared_prefix_keeps_sliding_windows_and_soft_caps(architecture_model, tmp_path, name):
    views = (View(1.0), View(0.7)) + ((View(1.0, Rope("yarn-rope", 2.0)),) if name == "gemma3_text" else ())
    request = RetrievalRequest(distances=(40, 120, 200), views=views, trained_length=256)
    shared, separate = both_ways(architecture_model(name), request, tmp_path, passages=(PASSAGE,))
    for mine, theirs in zip(shared.points, separate.points, strict=True):
        assert mine.planted.prefix_tokens is not None
        assert mine.gain == pytest.approx(theirs.gain, abs=1e-5)
        np.testing.assert_allclose(mine.planted.copy_mass, theirs.planted.copy_mass, atol=1e-5)
        np.testing.assert_allclose(mine.unplanted.sink_mass, theirs.unplanted.sink_mass, atol=1e-5)


def test_a_view_that_reads_by_position_shares_and_one_whose_numbers_follow_the_length_does_not():
    lengths = [100, 200, 400]
    assert reads_by_position(View(0.7), lengths) and reads_by_position(View(Schedule("qwen-logn", 128.0)), lengths)
    assert reads_by_position(View(1.0, Rope("self-extend", group=2, window=32)), lengths)
    assert not reads_by_position(View(LengthYarn("yarn")), lengths)
    assert not reads_by_position(View(1.0, Rope("dynamic", 2.0)), lengths)


def test_a_shared_run_resumes_from_the_points_it_has_and_reads_only_as_far_as_it_needs(tiny, tmp_path):
    short = RetrievalRequest(distances=(40, 80), views=(View(1.0), View(1.5)), trained_length=1024)
    retrieval(tiny, FILLER, [PASSAGE, OTHER], short, cache_dir=tmp_path, separate_passes=True)
    longer = RetrievalRequest(distances=(40, 80, 160), views=(View(1.0), View(1.5)), trained_length=1024)
    heard = []
    document = retrieval(tiny, FILLER, [PASSAGE, OTHER], longer, cache_dir=tmp_path, on_unit=heard.append)
    finished = [event for event in heard if event.seconds is not None]
    # one job per view: the filler once and each passage's planted text once, each with its repeat at 160
    assert len(finished) == 2 and finished[-1].done == finished[-1].total == 2 * 2 * 2
    assert len(list(tmp_path.glob("*.json"))) == 3 * 2 * 2 * 2
    assert {p.planted.prefix_tokens for p in document.points if p.distance == 160} == {longer.lead + 160}
    assert {p.planted.prefix_tokens for p in document.points if p.distance < 160} == {None}  # from the cache
    again = []
    run_units(tiny, FILLER, [PASSAGE, OTHER], longer, tmp_path, Placement(), again.append)
    assert again == []


def test_a_prefix_is_continued_only_inside_it(tiny):
    place = Layout(lead=8, passage=24, distance=60)
    prefix = read_once(tiny, planted_prefix(FILLER.ids, PASSAGE.ids, 8, 68), View(1.0), place, 1024, False)
    with pytest.raises(ValueError, match="inside its prefix of 68 tokens"):
        repeat_pass(tiny, prefix, list(PASSAGE.ids), Layout(lead=8, passage=24, distance=100))


@pytest.mark.slow
def test_the_bundled_model_shares_a_prefix_as_separate_passes_read_it(bundled, tmp_path):
    from model_utils.experiments.retrieval.passages import builtin_filler, builtin_passages

    filler = builtin_filler(bundled, "long", 1600)
    passage = builtin_passages(bundled, ("essay",), 128)[0]
    request = RetrievalRequest(distances=(384, 768, 1536), views=(View(1.0),), trained_length=bundled.max_positions)
    shared, separate = (retrieval(bundled, filler, [passage], request, cache_dir=tmp_path / str(flag),
                                  separate_passes=flag) for flag in (False, True))
    for mine, theirs in zip(shared.points, separate.points, strict=True):
        assert mine.planted.prefix_tokens == 32 + 1536 and theirs.planted.prefix_tokens is None
        for state in ("planted", "unplanted"):
            assert getattr(mine, state).loss == pytest.approx(getattr(theirs, state).loss, abs=0.01)
        assert mine.gain == pytest.approx(theirs.gain, abs=0.01)


def test_refining_bisects_the_bracket_with_continuations_of_the_prefixes_read_and_a_rerun_computes_none(
        tiny, tmp_path, monkeypatch):
    import model_utils.core.reach as reach

    monkeypatch.setattr(reach, "REFINE_TOKENS", 8)  # the tiny model's noisy curve falls within 24 tokens
    request = RetrievalRequest(distances=(24, 48, 96, 200, 360), views=(View(1.0), View(0.5)), trained_length=1024)
    heard = []
    document = retrieval(tiny, FILLER, [PASSAGE, OTHER], request, cache_dir=tmp_path, refine=True,
                         on_unit=heard.append)
    curve = document.curve(View(1.0))
    added = sorted(set(curve.distances) - set(request.distances))
    assert added and document.refined and curve.reach.outcome is ReachOutcome.FOUND
    low, high = curve.reach.between
    assert high - low <= 8 and set(range(low + 1, high)).isdisjoint(curve.distances)
    for distance in added:  # continuations of the prefixes read for the grid, to its longest distance
        found = document.point("a", distance, View(1.0))
        assert found.planted.prefix_tokens == found.unplanted.prefix_tokens == request.lead + 360
        place = Layout(lead=request.lead, passage=24, distance=distance)
        whole = retrieval_pass(tiny, planted_ids(FILLER.ids, PASSAGE.ids, place), View(1.0), place, 1024, False)
        assert found.planted.loss == pytest.approx(whole.loss, abs=1e-5)
    # the grid's points (2 views, 2 passages, planted and not, 5 distances), then 4 per distance a view added
    assert heard[-1].done == heard[-1].total == 2 * 2 * 2 * 5 + 2 * 2 * (
        len(added) + len(set(document.curve(View(0.5)).distances) - set(request.distances)))
    again = []
    rerun = retrieval(tiny, FILLER, [PASSAGE, OTHER], request, cache_dir=tmp_path, refine=True, on_unit=again.append)
    assert again == [] and rerun.to_dict()["curves"] == document.to_dict()["curves"]


def test_past_the_trained_length_only_the_recipes_and_t1_are_measured_when_asked(tiny, tmp_path):
    stretched = View(1.0, Rope("yarn-rope", 2.0))
    request = RetrievalRequest(distances=(40, 96, 200, 300), views=(View(1.0), View(0.7), stretched),
                               trained_length=256, beyond_trained=True, recipes_past_trained=True)
    document = retrieval(tiny, FILLER, [PASSAGE, OTHER], request, cache_dir=tmp_path)
    # the lead (32), a distance and the 24-token passage fit 256 tokens up to 200
    assert document.curve(View(0.7)).distances == (40, 96, 200)
    assert document.curve(View(1.0)).distances == document.curve(stretched).distances == (40, 96, 200, 300)
    assert {p.distance for p in document.points if p.view == View(0.7)} == {40, 96, 200}
    full = retrieval(tiny, FILLER, [PASSAGE, OTHER], RetrievalRequest(
        distances=(40, 96, 200), views=(View(1.0), View(0.7)), trained_length=256), cache_dir=tmp_path)
    assert full.curve(View(0.7)).gain == document.curve(View(0.7)).gain


def test_the_words_leave_a_blank_where_a_view_was_not_measured_and_turn_the_table_for_a_long_grid(tiny, tmp_path):
    """With --recipes-past-trained a temperature has fewer distances than the grid: its cell is blank, nothing reads
    as added by --refine, and from TRANSPOSE_FROM grid distances on the tables set a row per distance measured and a
    column per view, the reach last."""
    stretched = View(1.0, Rope("yarn-rope", 2.0))
    views = (View(1.0), View(0.7), stretched)
    short = retrieval(tiny, FILLER, [PASSAGE, OTHER], RetrievalRequest(
        distances=(40, 96, 200, 300), views=views, trained_length=256, beyond_trained=True,
        recipes_past_trained=True), cache_dir=tmp_path)
    lines = words.retrieval_findings(short)
    assert "--refine" not in "\n".join(lines) and "--refine" not in words.retrieval_table(short)
    row = next(line for line in lines if line.startswith("| T=0.7 |")).split(" | ")
    assert len(row) == 1 + 4 + 1 and row[4] == "" and row[3] != ""  # measured to 200, not at 300
    grid = (24, 32, 40, 64, 96, 128, 160, 200, 300)
    assert len(grid) >= words.TRANSPOSE_FROM
    long = retrieval(tiny, FILLER, [PASSAGE, OTHER], RetrievalRequest(
        distances=grid, views=views, trained_length=256, beyond_trained=True, recipes_past_trained=True),
        cache_dir=tmp_path)
    lines = words.retrieval_findings(long)
    table = lines[lines.index("| tokens back | T=1 | T=0.7 | yarn-rope (s=2) + T=1 |"):]
    rows = [line.split(" | ") for line in table[2:]]
    assert [row[0] for row in rows] == [f"| {d:,}" for d in grid] + ["| reach"]
    assert rows[-2][2] == "" and rows[-3][2] != "" and all(row[1] and row[3] for row in rows)  # T=0.7 stops at 200
    assert rows[-1][1] == words.reach_text(long.curve(View(1.0)).reach)
    said = words.retrieval_table(long).splitlines()
    assert said[1].split() == ["tokens", "back", "T=1", "T=0.7", "yarn-rope", "(s=2)", "+", "T=1"]
    assert [line.split()[0] for line in said[2:2 + len(grid)]] == [f"{d:,}" for d in grid]
    assert len(said[2 + len(grid) - 1].split()) == 3  # 300 tokens back: T=1 and the recipe, T=0.7 blank
