"""The corpus tuner on the tiny model: rows against the engine's own per-position NLL, resuming, refusals, and on Ray
(two actors give the in-process rows exactly; a worker killed mid-document loses and duplicates nothing).

Tests that need the six-document reference run (about 30 s on a busy 2-core machine) are marked slow, like the Ray
tests, which start one local Ray for the module (ray.init takes seconds): `make test` runs them all.
"""

import json
import os
import signal
import socket
import time
from pathlib import Path

import numpy as np
import psutil
import pyarrow.dataset as ds
import pytest

from model_utils.__main__ import main
from model_utils.core.machine import usable_cores
from model_utils.core.schedules import Schedule
from model_utils.core.statistics import STATISTICS
from model_utils.engine.analyze import analyze
from model_utils.experiments.corpus import read_corpus
from model_utils.experiments.runs.cluster import start_ray
from model_utils.experiments.sweep import SweepSettings
from model_utils.experiments.tune.rows import ROWS
from model_utils.experiments.tune.rows import TuneSettings as _TuneSettings
from model_utils.experiments.tune.run import PASSES, tune
from model_utils.experiments.tune.summary import summarize_tune as summarize

# Past the tiny model's trained length (1,024), so the schedules act; 5 passes per document, 5 buckets.
SETTINGS = SweepSettings(max_tokens=1280, bucket_size=256, beyond_trained=True)
SPECS = [0.8, 1.0, 1.25, Schedule("qwen-logn", 1024.0), Schedule("logn", 1024.0)]
STATISTICAL = ("results", "best", "schedules", "corpus", "settings", "buckets", "bootstrap")


def statistical(summary) -> dict:
    """What a summary computes from the rows, whoever ran them and however often."""
    return {key: getattr(summary, key) for key in STATISTICAL}


def rows(out: Path):
    table = ds.dataset(str(out / ROWS), format="parquet").to_table()
    return table.sort_by([("document", "ascending"), ("spec", "ascending"), ("bucket", "ascending")])


def write_corpus(folder: Path, texts: dict[str, str | bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (folder / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return folder


def run_cli(capsys, *argv) -> tuple[int, list[str]]:
    status = main(["tune", "--model", "tiny-random", *argv])
    return status, capsys.readouterr().err.strip().splitlines()


@pytest.fixture(scope="module")
def builtin():
    return read_corpus("builtin")


@pytest.fixture(scope="module")
def reference(tiny, builtin, tmp_path_factory):
    """The built-in documents tuned in this process, with the process's own torch threads: the rows and summary
    every other way of running must reproduce."""
    out = tmp_path_factory.mktemp("reference")
    summary = tune(tiny, builtin, SPECS, SETTINGS, out)
    return out, summary


# --- the rows and the summary -----------------------------------------------------------------------------------


def test_rows_hold_the_engines_nll_and_statistics(tiny, tmp_path):
    texts = {"a.txt": "The quick brown fox jumps over the lazy dog. " * 12, "b.txt": "Pack my box with five dozen "
             "liquor jugs, then sing of it. " * 9}
    corpus = read_corpus(str(write_corpus(tmp_path / "corpus", texts)))
    settings = SweepSettings(max_tokens=600, bucket_size=128)
    specs = [1.0, 1.5]
    summary = tune(tiny, corpus, specs, settings, tmp_path / "out")
    table = rows(tmp_path / "out")
    assert table.num_rows == sum(len(specs) * -(-(len(text.encode()) - 1) // 128) for text in texts.values())
    pooled = {spec: [[0.0, 0] for _ in range(5)] for spec in specs}
    own = {(spec, bucket): [] for spec in specs for bucket in range(5)}  # each document's bucket mean
    for document in corpus.documents:
        for spec in specs:  # an independent pass per spec, summed here with numpy
            result = analyze(tiny, document.text, temperatures=[spec], max_tokens=600, bucket_size=128,
                             q_start=1).results[0]
            mine = [row for row in table.to_pylist() if row["document"] == document.sha256
                    and row["spec"] == f"T={spec:g}"]
            assert [row["bucket"] for row in mine] == list(range(len(result.bucket_nll)))
            for row in mine:
                positions = result.position_nll[row["start"] : min(row["stop"], len(result.position_nll))]
                assert row["nll_count"] == len(positions)
                assert row["nll_sum"] == pytest.approx(positions.sum(), rel=1e-12)
                pooled[spec][row["bucket"]][0] += positions.sum()
                pooled[spec][row["bucket"]][1] += len(positions)
                for name in STATISTICS:
                    values = result.bucket_heads[name][row["bucket"]]
                    expected = np.exp(np.log(values).mean()) if name == "top_ratio" else values.mean()
                    assert row[name] == pytest.approx(expected, abs=1e-5)  # pass records keep 5 decimals
                for name in ("untrained_mass", "sink_mass"):  # per layer, the mean over its heads
                    per_layer = result.bucket_heads[name][row["bucket"]].mean(axis=1)
                    assert row[f"{name}_by_layer"] == pytest.approx(per_layer, abs=2e-5)
                own[(spec, row["bucket"])].append(row["nll_sum"] / row["nll_count"])
    assert summary.bootstrap.spread.value == "range"  # 2 documents: their range, not a 95% interval
    for entry in summary.results:
        spec = entry.temperature
        assert entry.nll == pytest.approx([total / count for total, count in pooled[spec] if count], rel=1e-12)
        for bucket, (nll, (low, high)) in enumerate(zip(entry.nll, entry.nll_interval, strict=True)):
            assert low <= nll <= high
            assert (low, high) == pytest.approx((min(own[(spec, bucket)]), max(own[(spec, bucket)])))
    for best, nll_1, nll_15 in zip(summary.best, summary.results[0].nll, summary.results[1].nll, strict=True):
        assert best.temperature == (1.0 if nll_1 <= nll_15 else 1.5)
        assert best.saved == pytest.approx(nll_1 - min(nll_1, nll_15))
    assert not (tmp_path / "out" / PASSES).exists()  # a finished document's passes are removed
    # buckets as analyze draws them (the first from q_start = 1 to the first multiple of 128), and the model's own
    # trained length, for the page's line
    assert summary.buckets[:2] == ((1, 128), (128, 256)) and summary.trained_length == tiny.max_positions
    assert table.column("rope_recipe").null_count == table.num_rows  # no recipe: the model's own positions


def test_a_remapping_in_a_tune_has_its_effective_untrained_mass_and_the_verdict_judges_it(tiny, tmp_path):
    """Self-extend (G = 4, W = 64) past a trained length of 256 on 600 tokens: the far keys keep their distance in
    the text (raw untrained mass) but are given at most 64 + 536 / 4 = 198 (effective: none). The rows hold both as
    the engine measures them, and the corpus verdict judges the remapping by the effective one."""
    from model_utils.core.records.verdict import MassMove
    from model_utils.core.rope import Rope
    from model_utils.core.views import View

    texts = {"a.txt": "The quick brown fox jumps over the lazy dog. " * 14, "b.txt": "Pack my box with five dozen "
             "liquor jugs, then sing of it. " * 11}
    corpus = read_corpus(str(write_corpus(tmp_path / "corpus", texts)))
    settings = SweepSettings(max_tokens=600, bucket_size=128, trained_length=256, beyond_trained=True)
    remap = View(1.0, Rope("self-extend", group=4, window=64))
    summary = tune(tiny, corpus, [1.0, 1.5, remap], settings, tmp_path / "out")
    table = rows(tmp_path / "out").to_pylist()
    for document in corpus.documents:
        result = analyze(tiny, document.text, temperatures=[remap], max_tokens=600, bucket_size=128, q_start=1,
                         trained_length=256, beyond_trained=True).results[0]
        mine = [row for row in table if row["document"] == document.sha256 and row["spec"] == remap.label]
        for row in mine:
            for name in ("untrained_mass", "effective_untrained_mass"):
                assert row[name] == pytest.approx(result.bucket_heads[name][row["bucket"]].mean(), abs=1e-5), name
        past = [row for row in mine if row["start"] >= 256]
        assert min(row["untrained_mass"] for row in past) > 0.01
        assert max(row["effective_untrained_mass"] for row in past) == 0.0
    row = summary.verdict.decomposition.row_of(remap)
    assert row.effective_untrained_mass_past == 0.0 < row.untrained_mass_past
    assert row.untrained is MassMove.GOES_AWAY


@pytest.mark.slow
def test_the_summary_is_reproducible(tiny, builtin, reference):
    out, summary = reference
    again = summarize(out, builtin, list(summary.corpus.tokens), SPECS,
                      _TuneSettings(model=tiny.name, fingerprint=summary.model_fingerprint,
                                    specs=summary.settings.specs, sweep=SETTINGS), tiny.max_positions)
    assert statistical(again) == statistical(summary)
    count = len(builtin.documents)
    assert count >= 3 and summary.computed_documents == count and len(summary.best) == 5
    assert all(best.documents == count for best in summary.best)


@pytest.mark.slow
def test_an_interrupted_tune_computes_only_what_is_missing(tiny, builtin, reference, tmp_path):
    out = tmp_path / "out"
    first_pass_of = {}

    def stop_after_two(progress):
        if progress.done == 2:
            raise KeyboardInterrupt

    def stop_in_the_third(document, label, index):  # mid-document: two of its passes are done
        first_pass_of.setdefault(document.name, index)
        if document == builtin.documents[2] and index == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tune(tiny, builtin, SPECS, SETTINGS, out, on_document=stop_after_two)
    assert len(list((out / ROWS).glob("*.parquet"))) == 2
    with pytest.raises(KeyboardInterrupt):
        tune(tiny, builtin, SPECS, SETTINGS, out, on_pass=stop_in_the_third)
    assert len(list((out / PASSES).glob("*.json"))) == 2  # the third document's finished passes stay
    first_pass_of.clear()
    summary = tune(tiny, builtin, SPECS, SETTINGS, out,
                   on_pass=lambda document, label, index: first_pass_of.setdefault(document.name, index))
    assert summary.computed_documents == len(builtin.documents) - 2 and summary.skipped_documents == 2
    assert first_pass_of[builtin.documents[2].name] == 2  # it resumed at its third pass
    assert set(first_pass_of.values()) == {0, 2}
    assert rows(out).equals(rows(reference[0]))
    assert statistical(summary) == statistical(reference[1])
    assert not list((out / ROWS).glob(".*"))  # no temporary file left


@pytest.mark.slow
def test_the_bundled_models_numbers_do_not_depend_on_the_thread_count(bundled, builtin):
    """The premise of identical rows from 1 and W workers, on the real model, whose products are large enough for
    MKL to use every thread: the fused kernel computes each attention row in one thread, and sgemm splits by output
    blocks, so no sum is reordered."""
    import torch

    threads = torch.get_num_threads()
    results = {}
    try:
        for count in sorted({1, max(2, threads)}):
            torch.set_num_threads(count)
            results[count] = analyze(bundled, builtin.documents[0].text, temperatures=[1.25], max_tokens=1024,
                                     bucket_size=256, q_start=1).results[0]
    finally:
        torch.set_num_threads(threads)
    one, many = results.values()
    assert np.array_equal(one.position_nll, many.position_nll)
    assert all(np.array_equal(one.bucket_heads[name], many.bucket_heads[name]) for name in STATISTICS)


def test_the_corpus_verdict_chooses_on_the_other_documents_and_the_summary_lists_them(tmp_path):
    """Synthetic rows of three documents (tests/verdicts/synthetic.py records, written as the tuner writes them):
    the summary's held-out gain is leave-one-document-out, as computed by hand from the records, and its documents
    keep name, sha256 and token count."""
    from model_utils.core.records.base import DocumentEntry
    from model_utils.core.records.sweep import SweepPass
    from model_utils.core.records.tune import TuneSummary
    from model_utils.core.records.verdict import Scoring
    from model_utils.core.rope import Rope
    from model_utils.core.views import View, as_view
    from model_utils.experiments.corpus import Corpus, Document
    from model_utils.experiments.tune.rows import document_columns, write_document
    from tests.verdicts.synthetic import BUCKETS, N_TOKENS, leave_one_out_by_hand, plain, record

    specs = [0.8, 1.0, 1.25, View(1.0, Rope("yarn-rope", 2.0))]
    past = {0.8: [2.25, 2.45, 3.45, 4.1], 1.0: [2.2, 2.5, 3.4, 4.0], 1.25: [2.3, 2.6, 3.2, 3.7],
            specs[3].label: [2.2, 2.3, 2.4, 2.5]}
    documents = [Document(f"doc {d}", f"synthetic document {d}") for d in range(3)]
    settings = _TuneSettings(model="synthetic", fingerprint="synthetic", specs=tuple(as_view(s).label for s in specs),
                             sweep=SweepSettings(max_tokens=N_TOKENS, bucket_size=256, beyond_trained=True))
    (tmp_path / ROWS).mkdir()
    sums = np.zeros((3, len(specs), len(BUCKETS)))
    counts = np.array([[min(stop, N_TOKENS - 1) - start for start, stop in BUCKETS]] * 3, dtype=float)
    for d, document in enumerate(documents):
        shift = [0.1 * d - 0.05 * d * (i == 2) for i in range(len(BUCKETS))]  # documents differ
        records = [record(spec, [a + b for a, b in zip(plain(past[spec if isinstance(spec, float) else spec.label]),
                                                      shift, strict=True)], seed=10 * d + i)
                   for i, spec in enumerate(specs)]
        sums[d] = np.array([r["result"]["nll"] for r in records]) * counts[d]
        passes = [SweepPass.from_dict(r) for r in records]
        write_document(tmp_path, settings, document, {"columns": document_columns(document, passes),
                                                      "seconds": 1.0, "peak_rss_gb": 1.0})
    corpus = Corpus(source="synthetic", documents=documents, duplicates=[])
    summary = summarize(tmp_path, corpus, [N_TOKENS] * 3, specs, settings, 1024)
    assert summary.corpus.listed == tuple(DocumentEntry(name=d.name, sha256=d.sha256, n_tokens=N_TOKENS)
                                          for d in documents)
    assert [result.rope for result in summary.results] == [None, None, None, Rope("yarn-rope", 2.0)]
    assert [entry.rope for entry in summary.recipes] == [Rope("yarn-rope", 2.0)] and summary.schedules == ()
    order = np.argsort([d.sha256 for d in documents])  # the summary's documents, by sha256
    held = summary.verdict.gains.held_out
    assert held.saved == pytest.approx(leave_one_out_by_hand(sums[order], counts, 1, [0, 1, 2], [4, 5, 6, 7]),
                                       abs=1e-9)
    assert held.interval[0] <= held.saved <= held.interval[1]
    assert held.scoring is Scoring.HELD_OUT_DOCUMENTS and summary.verdict.documents == 3
    assert TuneSummary.from_dict(json.loads(json.dumps(summary.to_dict(), allow_nan=False))) == summary
    recipe = summary.verdict.decomposition.row_of(View(1.0, Rope("yarn-rope", 2.0)))  # against plain T = 1
    assert recipe.against == View(1.0) and recipe.saved > 0


# --- rows of the format before: the recipe as its label ------------------------------------------------------------

COMMITTED = Path(__file__).resolve().parents[2] / "assets" / "tune" / "bundled-builtin"


LAYER_COLUMNS = ["untrained_mass_by_layer", "sink_mass_by_layer"]  # rows format 5's


def as_format_4(source: Path, target: Path) -> None:
    """A row file as tunes wrote it before rows format 5: no masses per layer, format 4 in the metadata."""
    import pyarrow.parquet as pq

    table = pq.read_table(source)
    metadata = table.schema.metadata
    settings = json.loads(metadata[b"tune_settings"]) | {"format": 4}
    older = table.drop_columns(LAYER_COLUMNS).replace_schema_metadata(
        metadata | {b"tune_settings": json.dumps(settings).encode()})
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(older, target)


def as_format_3(source: Path, target: Path) -> None:
    """A row file as tunes wrote it before rows format 4: no effective untrained mass, format 3 in the metadata."""
    import pyarrow.parquet as pq

    table = pq.read_table(source)
    metadata = table.schema.metadata
    settings = json.loads(metadata[b"tune_settings"]) | {"format": 3}
    older = table.drop_columns(["effective_untrained_mass", *LAYER_COLUMNS]).replace_schema_metadata(
        metadata | {b"tune_settings": json.dumps(settings).encode()})
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(older, target)


def as_format_2(source: Path, target: Path) -> None:
    """A row file as tunes wrote it before rows format 3: the recipe as its label in a `rope` column, no effective
    untrained mass, format 2 in the metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from model_utils.core.rope import Rope

    table = pq.read_table(source).drop_columns(["effective_untrained_mass", *LAYER_COLUMNS])
    columns = table.to_pydict()
    labels = [None if kind is None else Rope(kind, factor).label
              for kind, factor in zip(columns.pop("rope_recipe"), columns.pop("rope_factor"), strict=True)]
    names = list(columns)
    names.insert(names.index("schedule") + 1, "rope")
    fields = [table.schema.field(name) if name != "rope" else pa.field("rope", pa.string()) for name in names]
    metadata = table.schema.metadata
    settings = json.loads(metadata[b"tune_settings"]) | {"format": 2}
    older = pa.Table.from_pydict(columns | {"rope": labels}, schema=pa.schema(fields)).replace_schema_metadata(
        metadata | {b"tune_settings": json.dumps(settings).encode()})
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(older, target)


def committed_settings():
    """The committed tune's settings and views, as its command line asked for them."""
    from model_utils.core.records.tune import TuneSummary
    from model_utils.core.rope import Rope
    from model_utils.core.schedules import ScheduleRequest
    from model_utils.core.views import View, as_view

    summary = TuneSummary.from_dict(json.loads((COMMITTED / "summary.json").read_text()))
    saved = summary.settings
    tokens = max(summary.corpus.tokens)
    specs = [0.9, 1.0, 1.1, 1.25, 1.5,
             *(schedule for name in ("yarn", "qwen-logn", "ssmax")
               for schedule in ScheduleRequest(name, "trained").resolve(summary.trained_length, tokens)),
             View(1.0, Rope("yarn", 2.0)), View(1.0, Rope("yarn-rope", 2.0))]
    views = [as_view(spec) for spec in specs]
    assert tuple(view.label for view in views) == saved.specs
    sweep = SweepSettings(max_tokens=saved.max_tokens, bucket_size=saved.bucket_size, q_start=saved.q_start,
                          window=saved.window, trained_length=saved.trained_length,
                          beyond_trained=saved.beyond_trained)
    return _TuneSettings(model=saved.model, fingerprint=saved.model_fingerprint, specs=saved.specs,
                         sweep=sweep), views


@pytest.mark.parametrize("older", [as_format_2, as_format_3, as_format_4], ids=["format 2", "format 3", "format 4"])
def test_the_committed_rows_written_as_before_are_upgraded_back_bit_for_bit(tmp_path, older):
    """The committed rows written in a format before (2: the recipe's label in a `rope` column; 2 and 3: no
    effective untrained mass, which on the model's own positions and a frequency change is the untrained mass; 2 to
    4: no masses per layer, which a model of one layer type has no use for, and whose passes are not at hand) are
    rewritten in place: the same tables and metadata as the committed files; rows of other settings are left as
    they are, for finished_documents to refuse."""
    import pyarrow.parquet as pq

    from model_utils.experiments.tune.rows import finished_documents, upgrade_rows

    settings, views = committed_settings()
    committed = sorted((COMMITTED / ROWS).glob("*.parquet"))
    for path in committed:
        older(path, tmp_path / "out" / ROWS / path.name)
    before = pq.read_table(tmp_path / "out" / ROWS / committed[0].name)
    assert "untrained_mass_by_layer" not in before.column_names
    assert older is as_format_4 or "effective_untrained_mass" not in before.column_names
    assert older is not as_format_2 or "yarn-rope (s=2)" in before.column("rope").to_pylist()
    other = _TuneSettings(model=settings.model, fingerprint=settings.fingerprint, specs=settings.specs,
                          sweep=SweepSettings(**(vars(settings.sweep) | {"bucket_size": 512})))
    assert upgrade_rows(tmp_path / "out", other, views) == []
    upgraded = upgrade_rows(tmp_path / "out", settings, views)
    assert [path.name for path in upgraded] == [path.name for path in committed]
    for path in committed:
        mine, theirs = pq.read_table(tmp_path / "out" / ROWS / path.name), pq.read_table(path)
        assert mine.equals(theirs) and mine.schema.metadata == theirs.schema.metadata
    assert finished_documents(tmp_path / "out", settings) == {path.stem for path in committed}
    assert upgrade_rows(tmp_path / "out", settings, views) == []  # nothing left to upgrade


def test_the_committed_rows_and_fits_give_the_committed_summary():
    """summarize_tune on the committed rows writes the committed summary's numbers, to the last digit (the
    documents are the built-in corpus's eight), and its verdict is theirs with the committed fit made on those
    documents folded in (verdicts.fit.fold_fits), its rise on the same tokens from the committed cut-context
    references: no number of it was made any other way."""
    from dataclasses import replace

    from model_utils.core.records.tune import TuneSummary
    from model_utils.experiments.committed import FITS
    from model_utils.experiments.corpus import Corpus
    from model_utils.verdicts.fit import fold_fits

    committed = TuneSummary.from_dict(json.loads((COMMITTED / "summary.json").read_text()))
    settings, views = committed_settings()
    documents = read_corpus("builtin", committed.corpus.documents).documents
    assert [d.sha256 for d in documents] == [entry.sha256 for entry in committed.corpus.listed]
    corpus = Corpus(source=committed.corpus.source, documents=documents,
                    duplicates=list(committed.corpus.duplicates_skipped))
    summary = summarize(COMMITTED.relative_to(COMMITTED.parents[2]), corpus, list(committed.corpus.tokens), views,
                        settings, committed.trained_length, cuts=committed.cut_context,
                        layer_windows=committed.layer_windows)
    made_by = ("workers", "threads_per_worker", "ray_address", "computed_documents", "skipped_documents",
               "wall_seconds", "peak_rss_gb", "run", "runs")  # what the run adds to summarize_tune's numbers
    assert fold_fits(replace(summary, **{name: getattr(committed, name) for name in made_by}), FITS.read()) == committed


def test_a_rerun_on_rows_of_the_format_before_rebuilds_the_summary_without_computing(capsys, tmp_path):
    """What a tune left in the format before (its rows, its summary) reads on: the same command upgrades the rows,
    computes nothing and writes the summary it wrote from the new rows, keeping the runs that computed them; the
    rows are the new ones but for the masses per layer, which no pass is at hand to give (a model of one layer
    type has no use for them)."""
    import pyarrow.parquet as pq

    folder = write_corpus(tmp_path / "corpus", {"a.txt": "first document " * 30, "b.txt": "second one " * 30})
    command = ["--corpus", str(folder), "--max-tokens", "200", "--bucket-size", "64", "--temperatures", "1", "1.5",
               "--rope", "yarn-rope:2@1", "--out", str(tmp_path / "out")]
    assert run_cli(capsys, *command)[0] == 0
    rows_path = tmp_path / "out" / ROWS
    new = {path.name: pq.read_table(path).drop_columns(LAYER_COLUMNS) for path in rows_path.glob("*.parquet")}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    for name in new:
        as_format_2(rows_path / name, rows_path / name)
    older = {key: value for key, value in summary.items() if key != "format"}  # as the current code wrote it
    (tmp_path / "out" / "summary.json").write_text(json.dumps(older))
    assert run_cli(capsys, *command)[0] == 0
    again = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert again["computed_documents"] == 0 and again["runs"] == summary["runs"] and len(summary["runs"]) == 1
    assert {key: again[key] for key in STATISTICAL} == {key: summary[key] for key in STATISTICAL}
    upgraded = {path.name: pq.read_table(path) for path in rows_path.glob("*.parquet")}
    assert all(table.column(name).null_count == table.num_rows for table in upgraded.values()
               for name in LAYER_COLUMNS)
    assert {name: table.drop_columns(LAYER_COLUMNS) for name, table in upgraded.items()}.keys() == new.keys()
    assert all(upgraded[name].drop_columns(LAYER_COLUMNS).equals(new[name]) for name in new)


def test_the_long_builtin_corpus_is_tuned_with_each_documents_name_sha256_tokens_and_domain(capsys, tmp_path):
    """`--corpus builtin-long` (Gemma's tune: texts.long_builtin_documents), here its first two documents at 256
    tokens on the tiny model: the summary lists each with its sha256, tokens and domain."""
    from model_utils.experiments.texts import long_builtin_documents, text_digest

    status, _ = run_cli(capsys, "--corpus", "builtin-long", "--documents", "2", "--max-tokens", "256",
                        "--bucket-size", "64", "--temperatures", "1", "--out", str(tmp_path / "out"))
    assert status == 0
    listed = json.loads((tmp_path / "out" / "summary.json").read_text())["corpus"]["listed"]
    documents = long_builtin_documents()[:2]
    assert [entry["name"] for entry in listed] == [f"builtin-long {document.name}" for document in documents]
    assert [entry["sha256"] for entry in listed] == [text_digest(document.text) for document in documents]
    assert [entry["domain"] for entry in listed] == ["reference documentation", "Python source code"]
    assert [entry["n_tokens"] for entry in listed] == [256, 256]


# --- refusals: one line, exit 2, nothing written lost ------------------------------------------------------------


@pytest.mark.parametrize(("files", "message"), [
    ({}, "holds no .txt files"),
    ({"a.txt": "fine text", "b.txt": b"caf\xe9 latin-1"}, "b.txt' is not UTF-8 text"),
    ({"a.txt": b"text\x00with a NUL"}, "a.txt' holds NUL bytes"),
])
def test_a_bad_corpus_folder_is_refused_before_the_model(capsys, tmp_path, files, message):
    folder = write_corpus(tmp_path / "corpus", files)
    status, lines = run_cli(capsys, "--corpus", str(folder), "--out", str(tmp_path / "out"))
    assert status == 2 and len(lines) == 1 and message in lines[0], lines
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("content", "message"), [
    (b"", "holds no documents"),
    (b'{"text": "fine"}\n{"body": "no text"}\n', "line 2 has no string \"text\" field"),
    (b'{"text": "fine"}\n\n{"text": 7}\n', "line 3 has no string \"text\" field"),
    (b'{"text": "fine"}\nnot json\n', "line 2 is not JSON"),
    (b'{"text": "fine"}\n{"text": "caf\xe9"}\n', "line 2 is not UTF-8 text"),
])
def test_a_bad_jsonl_corpus_names_the_line(capsys, tmp_path, content, message):
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(content)
    status, lines = run_cli(capsys, "--corpus", str(path), "--out", str(tmp_path / "out"))
    assert status == 2 and len(lines) == 1 and message in lines[0], lines


def test_missing_corpus_and_too_many_documents(capsys, tmp_path):
    status, lines = run_cli(capsys, "--corpus", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out"))
    assert status == 2 and len(lines) == 1 and "does not exist" in lines[0]
    write_corpus(tmp_path / "corpus", {"a.txt": "some text"})
    status, lines = run_cli(capsys, "--corpus", str(tmp_path / "corpus"), "--documents", "2", "--out",
                            str(tmp_path / "out"))
    assert status == 2 and len(lines) == 1 and "more documents than the corpus holds (1)" in lines[0]


def test_a_document_shorter_than_two_tokens_is_refused_before_any_pass(capsys, tmp_path):
    folder = write_corpus(tmp_path / "corpus", {"a.txt": "long enough " * 20, "b.txt": "x"})
    status, lines = run_cli(capsys, "--corpus", str(folder), "--max-tokens", "200", "--bucket-size", "64",
                            "--temperatures", "1", "--out", str(tmp_path / "out"))
    assert status == 2 and len(lines) == 1, lines
    assert "b.txt" in lines[0] and "single token" in lines[0]
    assert not list((tmp_path / "out").rglob("*.parquet"))


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_other_settings_and_an_unreachable_cluster_lose_nothing(capsys, tmp_path):
    folder = write_corpus(tmp_path / "corpus", {"a.txt": "first document " * 20, "b.txt": "second one " * 20})
    common = ["--corpus", str(folder), "--max-tokens", "200", "--temperatures", "1", "1.5", "--out",
              str(tmp_path / "out")]
    assert run_cli(capsys, *common, "--documents", "1", "--bucket-size", "64")[0] == 0
    files = {path: path.read_bytes() for path in (tmp_path / "out").rglob("*") if path.is_file()}
    status, lines = run_cli(capsys, *common, "--bucket-size", "32")
    assert status == 2 and len(lines) == 1 and "other settings" in lines[0] and "bucket_size 64 there" in lines[0]
    started = time.perf_counter()
    status, lines = run_cli(capsys, *common, "--bucket-size", "64", "--ray-address", f"127.0.0.1:{_closed_port()}")
    assert status == 2 and len(lines) == 1 and "cannot reach a Ray cluster" in lines[0], lines
    assert time.perf_counter() - started < 30
    assert {path: path.read_bytes() for path in (tmp_path / "out").rglob("*") if path.is_file()} == files


# --- Ray ----------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module, started as the tuner starts it (2 CPUs, no dashboard, a small object store)."""
    import ray

    assert start_ray(2, None)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_two_ray_workers_write_the_in_process_rows(tiny, builtin, reference, local_ray, tmp_path):
    summary = tune(tiny, builtin, SPECS, SETTINGS, tmp_path / "out", workers=2)
    assert summary.workers == 2 and summary.threads_per_worker == max(1, usable_cores() // 2)
    assert rows(tmp_path / "out").equals(rows(reference[0]))  # bit for bit, whatever the thread count
    assert statistical(summary) == statistical(reference[1])


def _running_workers() -> list[psutil.Process]:
    """This test's Ray worker processes that are inside DocumentWorker.run (Ray titles a busy actor so)."""
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if " ".join(process.cmdline()).startswith("ray::DocumentWorker.run"):
                found.append(process)
        except psutil.Error:
            pass
    return found


@pytest.mark.slow
def test_a_worker_killed_mid_document_loses_and_duplicates_nothing(tiny, builtin, reference, local_ray, tmp_path):
    killed, finished = [], []

    def kill_a_busy_worker(progress):
        if progress.document is None:
            return
        finished.append(progress.document.sha256)
        deadline = time.monotonic() + 5
        while not killed and time.monotonic() < deadline:
            busy = _running_workers()
            if busy:
                os.kill(busy[0].pid, signal.SIGKILL)  # the other actor, mid-document
                killed.append(busy[0].pid)
            time.sleep(0.02)

    summary = tune(tiny, builtin, SPECS, SETTINGS, tmp_path / "out", workers=2, on_document=kill_a_busy_worker)
    assert killed, "no worker was mid-document when a document finished"
    assert not psutil.pid_exists(killed[0]) or psutil.Process(killed[0]).status() == psutil.STATUS_ZOMBIE
    assert sorted(finished) == sorted(d.sha256 for d in builtin.documents)  # each document written once
    assert summary.computed_documents == len(builtin.documents)
    table = rows(tmp_path / "out")
    keys = list(zip(*(table.column(name).to_pylist() for name in ("document", "spec", "bucket")), strict=True))
    # every document x spec x bucket, exactly once
    assert len(keys) == len(set(keys)) == len(builtin.documents) * len(SPECS) * 5
    assert table.equals(rows(reference[0]))
    assert statistical(summary) == statistical(reference[1])
    assert json.loads(json.dumps(summary.to_dict(), allow_nan=False))  # the summary is plain JSON


def test_saving_a_model_keeps_its_fingerprint(tmp_path):
    """The Ray workers are checked against the driver's fingerprint. `save_pretrained` writes `architectures` and
    `dtype` into the live config, which once made the driver's (saved by an earlier test) differ from a worker's
    freshly built copy of the same model; a changed weight must still change it."""
    import torch

    from model_utils import load_model
    from model_utils.experiments.fingerprint import model_fingerprint

    loaded = load_model("tiny-random")
    before = model_fingerprint(loaded)
    loaded.model.save_pretrained(tmp_path)
    assert loaded.config.architectures  # the save did write it: the test exercises the case
    assert model_fingerprint(loaded) == before == model_fingerprint(load_model("tiny-random"))
    with torch.no_grad():
        next(iter(loaded.model.parameters()))[0, 0] += 1.0
    assert model_fingerprint(loaded) != before


def test_the_workers_check_ignores_the_folder_each_machine_keeps_the_model_in():
    """A Ray worker on another machine loads the bundled model from its own cache folder (another home, another
    ATTN_CACHE_DIR), which transformers records in the config's `_name_or_path`: the portable fingerprint the
    workers are checked with (and the pass cache keyed by) leaves it out, the plain one (rows) keeps it."""
    import copy
    import types

    from model_utils import load_model
    from model_utils.experiments.fingerprint import model_fingerprint

    loaded = load_model("tiny-random")
    elsewhere = types.SimpleNamespace(name=loaded.name, model=loaded.model, config=copy.deepcopy(loaded.config))
    elsewhere.config._name_or_path = str(Path.home().parent / "someone-else" / ".cache" / "explorer" / "model")
    assert model_fingerprint(elsewhere, portable=True) == model_fingerprint(loaded, portable=True)
    assert model_fingerprint(elsewhere) != model_fingerprint(loaded)
    other = types.SimpleNamespace(name=loaded.name, model=loaded.model, config=copy.deepcopy(loaded.config))
    other.config.rms_norm_eps *= 2  # another model: still told apart
    assert model_fingerprint(other, portable=True) != model_fingerprint(loaded, portable=True)
