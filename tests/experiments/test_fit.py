"""The fitter on a planted optimum: documents sampled from a tiny model whose attention runs at T* = 1.3 inside every
layer, so that the same model's next-token loss is lowest at T = T* by construction (cross-entropy is lowest at the
distribution the data came from). The fit must land on the exhaustive fine grid's minimum within its tolerance, and
near T*; a rerun replays the search without computing; an interrupted fit resumes; Ray gives the same evaluations;
what a user can get wrong is one line and exit 2."""

import json

import numpy as np
import pytest
import torch

from model_utils import AnalysisError, load_model
from model_utils.core.progress import EVALUATION, Progress
from model_utils.core.records.fit import FitSummary
from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule
from model_utils.core.views import as_view
from model_utils.engine.probe import Probe
from model_utils.experiments.corpus import Corpus, Document
from model_utils.experiments.fit.families import FAMILIES
from model_utils.experiments.fit.run import FitRequest, fit, folds_of
from model_utils.experiments.runs.worker import DocumentWorker, WorkerSettings
from model_utils.experiments.sweep import SweepSettings
from model_utils.verdicts.words import fit_methods

PLANTED = 1.3
TRAINED = 64  # the planted model's trained length: 236 of each document's 300 positions lie past it
TOKENS = 300
VOCAB = 96
SYMBOLS = [chr(0x400 + i) for i in range(VOCAB)]  # one character per token, so sampled ids survive as text
SETTINGS = SweepSettings(max_tokens=TOKENS, bucket_size=64, beyond_trained=True)
SCHEDULES = (Schedule("logn", float(TRAINED)), Schedule("qwen-logn", float(TRAINED)))


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """(the planted model loaded from its folder, a corpus of 4 documents sampled from it at T* in attention)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    backend = Tokenizer(models.WordLevel({symbol: i for i, symbol in enumerate(SYMBOLS)}, unk_token=SYMBOLS[0]))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token=SYMBOLS[0])
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=TRAINED,
                         initializer_range=0.3, tie_word_embeddings=False, bos_token_id=None, eos_token_id=None,
                         pad_token_id=None)
    folder = tmp_path_factory.mktemp("planted")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    loaded = load_model(str(folder))
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(VOCAB, (4, 1), generator=generator)
    with torch.inference_mode():  # the four documents at once: one batch row each, all at T*
        for _ in range(TOKENS - 1):
            probe = Probe(view_multipliers=torch.full((4, ids.shape[1]), 1 / PLANTED), window=1,
                          q_start=max(1, ids.shape[1] - 1))
            logits = loaded.model(ids, attention_probe=probe, use_cache=False).logits[:, -1].double()
            ids = torch.cat([ids, torch.multinomial(torch.softmax(logits, -1), 1, generator=generator)], dim=1)
    documents = [Document(f"sample {i}", "".join(SYMBOLS[t] for t in row.tolist())) for i, row in enumerate(ids)]
    assert all(tokenizer(d.text)["input_ids"] == row.tolist() for d, row in zip(documents, ids, strict=True))
    return loaded, Corpus("sampled from the planted model", documents, [])


def request(**fields) -> FitRequest:
    return FitRequest(**({"family": FAMILIES["constant"], "rope": None, "bounds": (0.8, 2.0), "schedules": SCHEDULES,
                          "grid": (0.9, 1.0, 1.1, 1.2)} | fields))


def grid_minimum(loaded, documents, cache, values) -> float:
    """The exhaustive grid's best T on `documents`: the pooled past-region NLL at every value."""
    worker = DocumentWorker(WorkerSettings(model=loaded, sweep=SETTINGS, pass_dir=cache, keep_passes=True))
    pooled = []
    for value in values:
        rows = [worker.evaluate(document, [float(value)])[0] for document in documents]
        pooled.append(sum(row["past_sum"] for row in rows) / sum(row["past_count"] for row in rows))
    return float(values[int(np.argmin(pooled))])


@pytest.fixture(scope="module")
def fitted(planted, tmp_path_factory):
    loaded, corpus = planted
    folder = tmp_path_factory.mktemp("fit")
    return folder, fit(loaded, corpus, request(), SETTINGS, folder / "out", cache_dir=folder / "passes")


def test_the_fit_lands_on_the_grids_minimum_and_on_the_planted_temperature(planted, fitted, tmp_path):
    loaded, corpus = planted
    _, summary = fitted
    tolerance = FAMILIES["constant"].tolerance
    grid = np.round(np.arange(1.1, 1.5001, 0.005), 3)  # step 0.005, finer than the tolerance
    for fold, (training, _) in zip(summary.folds, folds_of(corpus.documents, 2), strict=True):
        best = grid_minimum(loaded, training, tmp_path, grid)
        assert abs(fold.parameter - best) <= tolerance + 0.005, (fold.parameter, best)
        assert abs(fold.parameter - PLANTED) <= 0.05
        assert fold.converged and not fold.at_bound and len(fold.evaluations) <= 20
    # the value over every document: the minimum of the documents' quadratics, near the grid's on all of them
    best = grid_minimum(loaded, corpus.documents, tmp_path, grid)
    assert abs(summary.parameter - best) <= tolerance + 0.005, (summary.parameter, best)
    low, high = summary.interval
    assert low <= summary.parameter <= high and high - low > 0  # a bootstrap over documents, not one value
    assert fit_methods(summary)["interval"].startswith("95% percentile bootstrap over the 4 documents")
    gains = summary.held_out.gains
    assert gains["plain"].saved > 0.05  # T = 1 is far from the planted 1.3
    assert gains["plain"].interval[0] > 0
    assert gains["best_constant"].saved > 0  # the grid's best (<= 1.2) is farther than the fit
    assert [d.n_tokens for d in summary.documents] == [TOKENS] * 4
    assert summary.multiplier.fitted == pytest.approx(1 / summary.parameter)


def test_a_rerun_replays_the_search_without_computing(planted, fitted, monkeypatch):
    loaded, corpus = planted
    folder, summary = fitted

    def refuse(self, document, specs):
        raise AssertionError(f"{document.name}: {[getattr(s, 'label', s) for s in specs]} was computed again")

    monkeypatch.setattr(DocumentWorker, "evaluate", refuse)
    again = fit(loaded, corpus, request(), SETTINGS, folder / "out", cache_dir=folder / "passes")
    assert again.folds == summary.folds and again.held_out == summary.held_out


def test_an_interrupted_fit_resumes_where_it_stopped(planted, tmp_path, monkeypatch):
    loaded, corpus = planted
    computed = []
    original = DocumentWorker.evaluate

    def counting(self, document, specs):
        computed.append((document.sha256, len(specs)))
        return original(self, document, specs)

    monkeypatch.setattr(DocumentWorker, "evaluate", counting)

    def stop_at_the_fourth(event: Progress) -> None:
        if (event.stage, event.part, event.parts, event.step) == (EVALUATION, 1, 2, 4):
            raise KeyboardInterrupt

    out, passes = tmp_path / "out", tmp_path / "passes"  # a pass cache of its own: every evaluation is new
    with pytest.raises(KeyboardInterrupt):
        fit(loaded, corpus, request(), SETTINGS, out, cache_dir=passes, progress=stop_at_the_fourth)
    before = len(computed)
    assert before == 4 * 2  # four evaluations of the two training documents
    summary = fit(loaded, corpus, request(), SETTINGS, out, cache_dir=passes)
    done = sum(len(fold.evaluations) for fold in summary.folds) * 2
    documents = len(corpus.documents)  # each is held out once, and compared once (all comparisons in one call)
    assert len(computed) - before == done - before + documents + documents


def test_the_log_length_family_and_a_recipe(planted, tmp_path):
    loaded, corpus = planted
    logn = fit(loaded, corpus, request(family=FAMILIES["logn"], bounds=(-0.3, 1.0)), SETTINGS, tmp_path / "a",
               cache_dir=tmp_path / "passes")
    assert logn.knob == "a" and all(fold.parameter > 0 for fold in logn.folds)  # softer past L, as T*
    assert logn.held_out.gains["plain"].saved > 0
    assert logn.held_out.in_context_change == 0.0  # T(p) = 1 up to the trained length
    assert logn.multiplier is None  # a logit multiplier only for a constant T
    recipe = fit(loaded, corpus, request(rope=Rope("yarn-rope", 2)), SETTINGS, tmp_path / "b",
                 cache_dir=tmp_path / "passes")
    assert recipe.rope == Rope("yarn-rope", 2.0)
    assert recipe.multiplier.yarn_law == pytest.approx((0.1 * np.log(2) + 1) ** 2)
    assert {"recipe", "recipe_at_1", "best_schedule"} <= set(recipe.held_out.gains)


def test_a_fit_refuses_what_it_cannot_do(planted, architecture_model):
    loaded, corpus = planted
    with pytest.raises(AnalysisError, match="--folds must be between 2 and the number of documents"):
        fit(loaded, corpus, request(folds=5), SETTINGS, "unused")
    short = Corpus("short", [Document("short one", corpus.documents[0].text[:TRAINED - 10]),
                             *corpus.documents[1:]], [])
    with pytest.raises(AnalysisError, match="short one has 54 tokens, not more than the trained length of 64"):
        fit(loaded, short, request(), SETTINGS, "unused")
    with pytest.raises(AnalysisError, match="learns its positions as a table"):
        fit(architecture_model("gpt2"), Corpus("x", [Document(str(i), "abc " * 100) for i in range(2)], []),
            request(rope=Rope("yarn-rope", 2)), SweepSettings(max_tokens=400, bucket_size=64, beyond_trained=True),
            "unused")
    with pytest.raises(AnalysisError, match="--bounds"):
        fit(loaded, corpus, request(family=FAMILIES["logn"], bounds=(-5.0, 1.0)), SETTINGS, "unused")


@pytest.mark.parametrize(("arguments", "message"), [
    (["--corpus", "EMPTY"], "holds no .txt files"),
    (["--corpus", "SHORT"], "not more than the trained length of 1,024"),
    (["--corpus", "builtin", "--family", "cubic"], "invalid choice: 'cubic'"),
    (["--corpus", "builtin", "--rope", "yarn-rope:2@1"], "fit takes one --rope TYPE:S"),
    (["--corpus", "builtin", "--folds", "1"], "--folds must be between 2"),
    (["--corpus", "builtin", "--workers", "0"], "--workers must be at least 1"),
    (["--corpus", "builtin", "--compare-from", "EMPTY"], "holds no tune rows"),
])
def test_bad_input_on_the_command_line_is_one_line_and_exit_2(tmp_path, capsys, arguments, message):
    from model_utils.__main__ import main

    (tmp_path / "empty").mkdir()
    (tmp_path / "short").mkdir()
    for i in range(2):
        (tmp_path / "short" / f"{i}.txt").write_text(f"short text number {i} " * 10)
    arguments = [{"EMPTY": str(tmp_path / "empty"), "SHORT": str(tmp_path / "short")}.get(a, a) for a in arguments]
    status = main(["fit", "--model", "tiny-random", "--max-tokens", "2048", "--documents", "2", "--out",
                   str(tmp_path / "out"), *arguments])
    error = capsys.readouterr().err
    assert status == 2 and message in error and error.count("\n") == 1, error


def test_the_command_line_writes_fit_json(planted, tmp_path, capsys):
    from model_utils.__main__ import main

    status = main(["fit", "--model", "tiny-random", "--builtin-corpus", "--documents", "2", "--max-tokens", "1100",
                   "--bucket-size", "256", "--bounds", "0.8", "1.6", "--compare-temperatures", "1", "1.2",
                   "--schedule", "logn:trained", "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "p")])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    written = json.loads((tmp_path / "out" / "fit.json").read_text())
    summary = FitSummary.from_dict(written)
    assert summary.to_dict() == written and summary.run.command.startswith("python -m model_utils fit")
    assert {"plain", "best_schedule"} <= set(summary.held_out.gains)
    assert summary.documents[0].sha256 and summary.documents[0].n_tokens == 1100
    assert "evaluation 1 of at most 20" in captured.err and "best so far" in captured.err
    assert len(list((tmp_path / "out" / "rows").glob("*.parquet"))) == summary.evaluations + 2 + 1


def test_schedule_none_compares_with_no_published_schedule(tmp_path, capsys):
    from model_utils.__main__ import main

    status = main(["fit", "--model", "tiny-random", "--builtin-corpus", "--documents", "2", "--max-tokens", "1100",
                   "--bucket-size", "256", "--bounds", "0.8", "1.6", "--compare-temperatures", "1",
                   "--schedule", "none", "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "p")])
    assert status == 0, capsys.readouterr().err
    summary = FitSummary.from_dict(json.loads((tmp_path / "out" / "fit.json").read_text()))
    assert set(summary.held_out.gains) == {"plain", "best_constant"}
    assert all(choice.best_schedule is None for choice in summary.held_out.choices)


@pytest.mark.slow
def test_ray_and_in_process_give_the_same_evaluations(planted, fitted, tmp_path):
    loaded, corpus = planted
    _, summary = fitted
    on_ray = fit(loaded, corpus, request(), SETTINGS, tmp_path / "out", workers=2, threads=1,
                 cache_dir=tmp_path / "passes")
    assert on_ray.folds == summary.folds
    assert on_ray.held_out == summary.held_out


def tuned_rows(loaded, corpus, folder):
    """The planted corpus tuned with the fit's comparison views, as `fit --compare-from` reads it."""
    from model_utils.experiments.fit.reuse import TuneRows
    from model_utils.experiments.fit.run import comparison_views
    from model_utils.experiments.tune.rows import region_sums
    from model_utils.experiments.tune.run import tune

    tune(loaded, corpus, comparison_views(request(), TRAINED), SETTINGS, folder)
    settings, sums = region_sums(folder, TRAINED)
    return TuneRows(source="the tune", settings=settings, sums=sums)


@pytest.fixture(scope="module")
def tuned(planted, tmp_path_factory):
    loaded, corpus = planted
    return tuned_rows(loaded, corpus, tmp_path_factory.mktemp("tune") / "out")


def test_a_fit_from_a_tunes_rows_computes_only_t_1_and_gives_the_computed_fits_scores(planted, fitted, tuned,
                                                                                      monkeypatch):
    loaded, corpus = planted
    folder, computed_fit = fitted
    asked = []
    original = DocumentWorker.evaluate

    def recording(self, document, specs):
        asked.extend(as_view(spec).label for spec in specs)
        return original(self, document, specs)

    monkeypatch.setattr(DocumentWorker, "evaluate", recording)
    reused = fit(loaded, corpus, request(), SETTINGS, folder / "reused", cache_dir=folder / "passes", reuse=tuned)
    fitted_labels = {request().view(evaluation.parameter, TRAINED).label
                     for fold in reused.folds for evaluation in fold.evaluations}
    assert set(asked) - fitted_labels == {"T=1"}  # the grid's other temperatures and the schedules were read
    assert reused.folds == computed_fit.folds
    for name, gain in computed_fit.held_out.gains.items():
        assert reused.held_out.gains[name].saved == pytest.approx(gain.saved, abs=1e-6), name
        assert reused.held_out.gains[name].interval == pytest.approx(gain.interval, abs=1e-6), name
    assert reused.held_out.choices == computed_fit.held_out.choices
    assert reused.held_out.in_context_change == pytest.approx(computed_fit.held_out.in_context_change, abs=1e-6)
    assert (reused.compared_from.source, reused.compared_from.reused, reused.compared_from.comparisons) == (
        "the tune", 20, 24) and reused.compared_from.largest < 1e-5
    assert computed_fit.compared_from is None


def test_a_fit_refuses_the_rows_of_another_tune(planted, fitted, tuned):
    from dataclasses import replace

    from model_utils.experiments.runs.errors import RunUsageError

    loaded, corpus = planted
    folder, _ = fitted
    other = replace(tuned, settings=replace(tuned.settings, bucket_size=32))
    with pytest.raises(RunUsageError, match="made with other settings \\(bucket_size 32 there, 64 here\\)"):
        fit(loaded, corpus, request(), SETTINGS, folder / "other", cache_dir=folder / "passes", reuse=other)
    sha = corpus.documents[1].sha256
    changed = {key: dict(sums) for key, sums in tuned.sums.items()}
    changed[(sha, "T=1")]["past_sum"] += 0.01 * changed[(sha, "T=1")]["past_count"]
    with pytest.raises(RunUsageError, match=r"sample 1 at T = 1 gives .* not the same text, model or code"):
        fit(loaded, corpus, request(), SETTINGS, folder / "changed", cache_dir=folder / "passes",
            reuse=replace(tuned, sums=changed))
