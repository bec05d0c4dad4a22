"""bench/rekey_passes.py on the tiny model: a probe's pass cache keyed as before (each recipe by its label) is
renamed to this version's keys, once (a second run renames nothing), and the probe then replays from it without
computing a pass."""

import json
from pathlib import Path

import pytest

from bench.rekey_passes import old_unit_key, rekey
from model_utils.core.records.retrieval import RetrievalDocument
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.experiments.retrieval.grid import RetrievalRequest, layout, unit_ids, units
from model_utils.experiments.retrieval.passages import builtin_filler, builtin_passages
from model_utils.experiments.retrieval.run import retrieval

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_an_old_keyed_cache_is_renamed_once_and_the_probe_replays_without_a_pass(tiny, tmp_path):
    stretched = View(1.0, Rope("yarn-rope", 2.0))
    request = RetrievalRequest(distances=(40, 96), views=(View(1.0), View(0.8), stretched), trained_length=1024)
    filler = builtin_filler(tiny, "long", request.lead + 96)
    passages = builtin_passages(tiny, ("essay", "source-code"), 24)
    cache = tmp_path / "passes"
    probe = retrieval(tiny, filler, passages, request, cache_dir=cache)
    saved = RetrievalDocument.from_dict(json.loads(json.dumps(probe.to_dict())))  # as committed, read back
    fingerprint = model_fingerprint(tiny, portable=True)
    ids = [p.ids for p in passages]
    on_recipe = [unit for unit in units(filler, passages, request, fingerprint) if unit.view.rope is not None]
    assert len(on_recipe) == 2 * 2 * 2  # passages, distances, planted or not
    for unit in on_recipe:  # the cache as the version before wrote it
        text = unit_ids(filler.ids, ids[unit.passage], unit.distance, unit.planted, request)
        old = old_unit_key(fingerprint, text, unit.view, layout(ids[unit.passage], unit.distance, request), request)
        assert old != unit.key
        (cache / f"{unit.key}.json").rename(cache / f"{old}.json")
    assert rekey(tiny, saved, cache) == (8, 0)
    assert rekey(tiny, saved, cache) == (0, 8)  # idempotent
    heard = []
    again = retrieval(tiny, filler, passages, request, cache_dir=cache, on_unit=heard.append)
    assert heard == [] and again.to_dict()["points"] == probe.to_dict()["points"]


def test_a_probe_whose_texts_differ_is_refused(tiny, tmp_path):
    from dataclasses import replace

    request = RetrievalRequest(distances=(40,), views=(View(1.0),), trained_length=1024)
    filler = builtin_filler(tiny, "long", request.lead + 40)
    passages = builtin_passages(tiny, ("essay",), 24)
    probe = retrieval(tiny, filler, passages, request, cache_dir=tmp_path)
    other = replace(probe, passages=(replace(probe.passages[0], sha256="0" * 64),))
    with pytest.raises(SystemExit, match="essay: not the tokens the probe read"):
        rekey(tiny, other, Path(tmp_path))
