"""`python -m bench.tune_summary FOLDER ...`: rebuild a committed corpus tune's summary.json from its rows and the
cut-context references it stores, with this tree's verdict code, computing no pass and no window: the command line of
its last run (its `run` record) says its corpus and settings; rows of an older format are upgraded from the passes in
its --cache-dir (experiments.tune.run.cached_passes), and the committed fits on its documents are folded in, as the
tune command and `bench.readme tune` do. For a verdict whose words or rules changed while its references stay as they
were measured (each document's `lead` says what its windows read first); `make tune-gemma` and the like remeasure."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path

from model_utils.cli.commands import cache_folder, requested_views, sweep_settings
from model_utils.cli.requests import parse_request
from model_utils.core.files import write_atomic
from model_utils.core.records.tune import TuneSummary
from model_utils.core.views import as_view
from model_utils.engine.plugin import load_model
from model_utils.experiments.committed import FITS
from model_utils.experiments.corpus import read_corpus
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.experiments.tune.rows import TuneSettings, upgrade_rows
from model_utils.experiments.tune.run import SUMMARY, cached_passes
from model_utils.experiments.tune.summary import summarize_tune
from model_utils.verdicts.fit import fold_fits

MADE_BY = ("workers", "threads_per_worker", "ray_address", "computed_documents", "skipped_documents",
           "wall_seconds", "peak_rss_gb", "run", "runs")  # how the runs went: kept as the summary says


def rebuild(folder: Path) -> TuneSummary:
    """The summary of the tune in `folder`, rebuilt (and written there)."""
    path = folder / SUMMARY
    committed = TuneSummary.from_dict(json.loads(path.read_text()))
    words = shlex.split(committed.run.command)
    request = parse_request(words[words.index("model_utils") + 1 :], command=committed.run.command)
    loaded = load_model(request.model)
    corpus = read_corpus(request.corpus, request.documents)
    specs, settings = requested_views(request.views, loaded, request.passes.max_tokens), sweep_settings(request)
    tune_settings = TuneSettings(model=loaded.name, fingerprint=model_fingerprint(loaded),
                                 specs=tuple(as_view(spec).label for spec in specs), sweep=settings)
    cache = cache_folder(request)
    upgrade_rows(folder, tune_settings, [as_view(spec) for spec in specs],
                 cached_passes(loaded, corpus, specs, settings, cache))
    summary = summarize_tune(Path(request.out), corpus,  # as the tune ran: from the repository's root
                             list(committed.corpus.tokens), specs, tune_settings, committed.trained_length,
                             cuts=committed.cut_context, layer_windows=tuple(loaded.sliding_windows()))
    summary = fold_fits(replace(summary, **{name: getattr(committed, name) for name in MADE_BY}), FITS.read())
    write_atomic(path, json.dumps(summary.to_dict(), ensure_ascii=False, allow_nan=False) + "\n")
    return summary


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python -m bench.tune_summary FOLDER ... (a committed tune's --out folder)")
    for folder in map(Path, argv):
        summary = rebuild(folder.resolve())
        kinds = "none" if not summary.verdict or not summary.verdict.layer_types else len(summary.verdict.layer_types)
        print(f"{folder}: rebuilt from its rows ({summary.corpus.documents} documents, layer types: {kinds})")


if __name__ == "__main__":
    main(sys.argv[1:])
