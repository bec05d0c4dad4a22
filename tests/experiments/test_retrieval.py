"""The retrieval probe on the tiny model: its texts differ only in the copy, nothing planted gains nothing, T = 1 is
the plain model, the masses are those of transformers' own eager attention maps, cached passes are reused (and a
schedule that is 1 on every position shares T = 1's), and a run's document reads back as its records. On the
bundled model (slow), a copy a few hundred tokens back is read."""

import json

import numpy as np
import pytest
import torch

from model_utils.core.errors import AnalysisError
from model_utils.core.records.retrieval import ReachOutcome, RetrievalDocument
from model_utils.core.retrieval import Layout, planted_ids, unplanted_ids
from model_utils.core.schedules import Schedule
from model_utils.core.views import View
from model_utils.engine.retrieval import retrieval_pass
from model_utils.experiments.retrieval.passages import Tokens
from model_utils.experiments.retrieval.run import RetrievalRequest, retrieval, run_units, units
from model_utils.experiments.runs.pool import Placement
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
    one, flat = (document.point("a", 40, label) for label in ("T=1", View(inside).label))
    assert one.planted.loss == flat.planted.loss and one.unplanted.loss == flat.unplanted.loss


def test_the_document_reads_back_and_its_curves_are_the_points_means(tiny, tmp_path):
    request = RetrievalRequest(distances=(30, 60, 120), views=(View(1.0), View(0.8)), trained_length=1024)
    document = retrieval(tiny, FILLER, [PASSAGE, OTHER], request, cache_dir=tmp_path)
    again = RetrievalDocument.from_dict(json.loads(json.dumps(document.to_dict())))
    assert again.to_dict() == document.to_dict()
    curve = again.curve("T=0.8")
    for index, distance in enumerate(request.distances):
        gains = [again.point(name, distance, "T=0.8").gain for name in ("a", "b")]
        assert curve.gain[index] == pytest.approx(np.mean(gains), abs=1e-5)
        assert (curve.low[index], curve.high[index]) == pytest.approx((min(gains), max(gains)), abs=1e-5)
    assert again.verdict.reference == "T=1" and [s.view for s in again.verdict.shifts] == ["T=0.8"]
    assert again.curve("T=1").reach.outcome in set(ReachOutcome)


@pytest.mark.slow
def test_the_bundled_model_reads_a_copy_a_few_hundred_tokens_back(bundled, tmp_path):
    from model_utils.experiments.retrieval.passages import builtin_filler, builtin_passages

    filler = builtin_filler(bundled, "long", 1024)
    passage = builtin_passages(bundled, ("essay",), 128)[0]
    request = RetrievalRequest(distances=(384,), views=(View(1.0),), trained_length=bundled.max_positions)
    point = retrieval(bundled, filler, [passage], request, cache_dir=tmp_path).point("essay", 384, "T=1")
    assert point.unplanted.loss > 2.0 and point.planted.loss < 1.0 and point.gain > 1.5
    # some head reads the copy of the next token (0.82 measured); with nothing planted no head looks there (0.007)
    assert point.planted.target_mass_top.max() > 0.5 and point.unplanted.target_mass_top.max() < 0.05
