"""The untrained-distance mass per layer type (verdicts/layers.py): on a tiny Gemma 3 (layers 0 and 2 slide over 8
keys, layer 1 is global) swept with a trained length of 64 and a text of 256 tokens, a sliding layer never sees a
distance past the trained length and the global layer does; the split is stored in the sweep's verdict (the
upgrade of older formats: tests/core/records/test_verdict_record.py)."""

import json

import numpy as np
import pytest

from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.verdict import FORMAT, ContextVerdict, RowKind
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.experiments.sweep import SweepSettings, sweep
from model_utils.experiments.texts import builtin_text
from model_utils.verdicts.layers import layer_groups
from model_utils.verdicts.words import BY_LAYER_TYPE, decomposition_table, layer_type_sentence

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TRAINED = 64  # the window of 8 keys is far shorter: a sliding layer cannot reach a distance of 64
SETTINGS = SweepSettings(max_tokens=256, bucket_size=32, trained_length=TRAINED, beyond_trained=True)
SPECS = [1.0, 1.25, View(1.0, Rope("yarn-rope", 2.0))]


@pytest.fixture(scope="module")
def gemma_document(architecture_model, tmp_path_factory) -> SweepDocument:
    """The tiny Gemma 3's sweep, written to JSON and read back as the page and the README read it."""
    written = sweep(architecture_model("gemma3_text"), builtin_text("long"), SPECS, SETTINGS,
                    cache_dir=tmp_path_factory.mktemp("passes"))
    return SweepDocument.from_dict(json.loads(json.dumps(written.to_dict(), allow_nan=False)))


def test_the_sweep_records_each_layers_window(gemma_document):
    assert gemma_document.layer_windows == (8, None, 8)
    assert gemma_document.to_dict()["layer_windows"] == [8, None, 8]


def test_a_sliding_layer_meets_no_untrained_distance_and_the_global_layer_does(gemma_document):
    verdict = gemma_document.verdict
    sliding, full = verdict.layer_types
    assert (sliding.sliding_span, sliding.layers) == (8, (0, 2)) and (full.sliding_span, full.layers) == (None, (1,))
    assert sliding.untrained_mass == (0.0,) * 6 and sliding.untrained_mass_past == 0.0
    assert min(full.untrained_mass) > 0.05 and full.untrained_mass_past > 0.05
    # the mean over every layer, which the verdict gave before, is the types' means weighted by their layers
    overall = [row.mass for row in verdict.attention.untrained]
    np.testing.assert_allclose(overall, (2 * np.array(sliding.untrained_mass) + full.untrained_mass) / 3, atol=1e-12)


def test_uniform_attention_is_judged_on_the_keys_each_layer_type_sees(gemma_document):
    """A sliding layer of 8 keys can put no mass past a trained length of 64, and neither could uniform attention
    over its keys: its uniform share is 0. The global layer's is (q - L) / q averaged over each bucket's queries, and
    the share averaged over every layer is judged against the mean of the layers' own, not against a global layer's
    (the bug: 2 of 3 layers here never see that far)."""
    verdict = gemma_document.verdict
    sliding, full = verdict.layer_types
    past = [row.bucket for row in verdict.attention.untrained]
    assert sliding.uniform_share == (0.0,) * len(past) and sliding.beyond_uniform_from is None
    expected = [np.mean([(q - TRAINED) / q for q in range(start, stop)]) for start, stop in past]
    assert full.uniform_share == pytest.approx(expected)
    assert all(0 < share <= 1 for share in full.share)
    overall = [row.uniform_share for row in verdict.attention.untrained]
    assert overall == pytest.approx([value / 3 for value in expected])  # 1 global layer of 3


def test_the_decomposition_gives_each_rows_mass_per_layer_type(gemma_document):
    decomposition = gemma_document.verdict.decomposition
    reference, recipe = decomposition.row_of(View(1.0)), decomposition.row_of(View(1.0, Rope("yarn-rope", 2.0)))
    full = gemma_document.verdict.layer_types[1]
    assert reference.untrained_mass_by_layer_type == pytest.approx((0.0, full.untrained_mass_past))
    assert recipe.untrained_mass_by_layer_type[0] == 0.0 and recipe.untrained_mass_by_layer_type != \
        reference.untrained_mass_by_layer_type
    held_out = next(row for row in decomposition.table if row.kind is RowKind.HELD_OUT and row.rope is None)
    assert held_out.untrained_mass_by_layer_type is None  # no pass of its own
    table = {row["view"]: row[BY_LAYER_TYPE] for row in decomposition_table(gemma_document.verdict)}
    assert table["T=1"] == f"sliding 8: 0.000; global: {full.untrained_mass_past:.3f}"  # the row's numbers


def test_the_split_is_stored_in_the_json_verdict(gemma_document):
    stored = gemma_document.to_dict()["verdict"]
    assert stored["format"] == FORMAT == 6
    assert [entry["sliding_span"] for entry in stored["layer_types"]] == [8, None]
    assert set(stored["layer_types"][0]) == {"sliding_span", "layers", "untrained_mass", "untrained_mass_past",
                                             "share", "uniform_share", "beyond_uniform_from"}
    assert ContextVerdict.from_dict(stored) == gemma_document.verdict


def test_a_model_of_one_layer_type_has_no_split(tiny, tmp_path):
    document = sweep(tiny, builtin_text("long"), SPECS, SETTINGS, cache_dir=tmp_path)
    verdict = document.verdict
    assert document.layer_windows == (None, None, None) and verdict.layer_types is None
    assert all(row.untrained_mass_by_layer_type is None for row in verdict.decomposition.rows)
    assert all(BY_LAYER_TYPE not in row for row in decomposition_table(verdict))


def test_layer_groups_keep_the_order_of_first_appearance():
    untrained = [np.arange(24, dtype=float).reshape(2, 4, 3)]  # one view, [bucket, layer, head]
    groups = layer_groups([None, 512, 512, None], untrained)
    assert [(group.sliding_span, group.layers) for group in groups] == [(None, (0, 3)), (512, (1, 2))]
    np.testing.assert_array_equal(groups[1].untrained_mass, [[np.mean(untrained[0][0, 1:3]),
                                                              np.mean(untrained[0][1, 1:3])]])
    assert layer_groups([512] * 4, untrained) == () and layer_groups(None, untrained) == ()


def test_uniform_share_counts_only_the_keys_a_layer_sees():
    from model_utils.verdicts.past import uniform_share

    every = np.mean([(q - 64) / q for q in range(100, 200)])
    assert uniform_share(100, 200, 64) == pytest.approx(every)
    assert uniform_share(100, 200, 64, 8) == 0.0  # 8 keys: none at distance 64
    assert uniform_share(100, 200, 64, 80) == pytest.approx(16 / 80)  # q >= 80 sees 80 keys, 16 of them that far
    assert uniform_share(100, 200, 64, 4096) == pytest.approx(every)  # a span longer than the text: all keys


def test_a_corpus_records_its_layer_windows_and_judges_each_layer_type(architecture_model, tmp_path):
    """The tiny Gemma 3 tuned on two documents: the summary keeps each layer's window, the rows the masses per
    layer, and the corpus verdict speaks per layer type as a sweep's does; rows of the format before (no masses per
    layer) are upgraded from the passes kept in the cache, to the same numbers."""
    import pyarrow.parquet as pq

    from model_utils.experiments.corpus import read_corpus
    from model_utils.experiments.tune.rows import ROWS
    from model_utils.experiments.tune.run import tune

    model = architecture_model("gemma3_text")
    folder = tmp_path / "corpus"
    folder.mkdir()
    text = builtin_text("long")
    (folder / "a.txt").write_text(text[:3000])
    (folder / "b.txt").write_text(text[3000:6000])
    corpus = read_corpus(str(folder))
    out, cache = tmp_path / "out", tmp_path / "passes"
    summary = tune(model, corpus, SPECS, SETTINGS, out, cache_dir=cache)
    assert summary.layer_windows == (8, None, 8)
    sliding, full = summary.verdict.layer_types
    assert sliding.uniform_share == (0.0,) * len(sliding.untrained_mass) and sliding.untrained_mass_past == 0.0
    assert full.untrained_mass_past > 0.05 and full.share is not None
    said = layer_type_sentence(summary.verdict)
    assert "global (full-attention) layers" in said and "uniform attention over the keys they see" in said
    first = sorted((out / ROWS).glob("*.parquet"))[0]
    table = pq.read_table(first)
    metadata = table.schema.metadata
    older = json.loads(metadata[b"tune_settings"]) | {"format": 4}
    pq.write_table(table.drop_columns(["untrained_mass_by_layer", "sink_mass_by_layer"]).replace_schema_metadata(
        metadata | {b"tune_settings": json.dumps(older).encode()}), first)
    again = tune(model, corpus, SPECS, SETTINGS, out, cache_dir=cache)
    assert again.computed_documents == 0 and pq.read_table(first).equals(table)
    assert again.verdict.layer_types == summary.verdict.layer_types
