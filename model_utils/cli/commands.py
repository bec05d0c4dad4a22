"""What each command does with its typed request (cli/requests.py): read the text, load the model, run, write the
JSON or a table, and record how the result was made (command, date, time, peak memory, machine)."""

from __future__ import annotations

import datetime
import json
import platform
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

from model_utils.cli.parser import UsageError
from model_utils.cli.progress import progress_line, progress_lines
from model_utils.cli.requests import (
    AnalyzeCommand,
    FitCommand,
    GenerateCommand,
    LmEvalCommand,
    LongPassesCommand,
    Placing,
    RetrievalCommand,
    SweepCommand,
    TextSource,
    TuneCommand,
    ViewsAsked,
)
from model_utils.core.files import write_atomic
from model_utils.core.machine import peak_rss_gb, usable_cores
from model_utils.core.paths import cache_root
from model_utils.core.progress import Progress
from model_utils.core.records.run import RunInfo
from model_utils.core.records.tune import ComputingRun, TuneSummary, previous_runs
from model_utils.core.report import Report
from model_utils.core.schedules import Schedule
from model_utils.core.views import View
from model_utils.engine.analyze import analyze, set_threads, tokenize
from model_utils.engine.plugin import load_model
from model_utils.experiments.texts import builtin_name, builtin_source, builtin_text


def read_text(source: TextSource) -> tuple[str, str]:
    """(text, where it came from); text_name says what it is in a few words."""
    if source.builtin:
        return builtin_text(source.builtin), f"{builtin_source(source.builtin)}, built-in text {source.builtin!r}"
    if source.text is not None:
        return source.text, "--text"
    if source.file == "-":
        return sys.stdin.read(), "standard input"
    try:
        with open(source.file, encoding="utf-8", errors="replace") as handle:
            return handle.read(), source.file
    except OSError as error:
        raise UsageError(f"cannot read --file {source.file!r}: {error.strerror or error}") from None


def text_name(source: TextSource, where: str) -> str:
    """What the text of read_text is, in a few words: a built-in text's name, else where it came from."""
    return builtin_name(source.builtin) if source.builtin else where


def write_json(document: dict, target: str) -> None:
    """The document as one line of JSON on standard output ("-") or in a file, written whole or not at all: a
    sweep's, a tune's or a fit's file is read by the pages and by the next run."""
    payload = json.dumps(document, ensure_ascii=False, allow_nan=False) + "\n"
    if target == "-":
        print(payload, end="")
        return
    path = Path(target)
    try:
        if path.exists() and not path.is_file():  # a device or a pipe (/dev/null) is written to, not replaced
            path.write_text(payload, encoding="utf-8")
        else:
            write_atomic(path, payload)
    except OSError as error:
        raise UsageError(f"cannot write --json {target!r}: {error.strerror or error}") from None


def report_table(report: Report) -> str:
    """A short human-readable table: one line per temperature (or schedule, or recipe). Under a distance remapping
    a column `eff untr` adds the untrained mass on the distances the remapping gives (`untrained` is on the text's)."""
    width = max(26, *(len(result.label) for result in report.results))
    remapped = any(result.view.rope is not None and result.view.rope.remaps for result in report.results)
    columns = ["entropy", "normalized_entropy", "sink_mass", "recent_mass", "distant_mass", "untrained_mass"]
    columns += ["effective_untrained_mass"] if remapped else []
    lines = [f"{report.model}: {report.n_tokens} tokens{' (cut)' if report.truncated else ''}, mode {report.mode}, "
             f"window {report.window}, {report.seconds:.1f} s",
             f"{'temperature':>{width}} {'loss':>7} {'entropy':>8} {'norm H':>7} {'sink':>6} {'recent':>7} "
             f"{'distant':>8} {'untrained':>9}{' eff untr' if remapped else ''}  next token"]
    for result in report.results:
        means = [result.layer_mean(name).mean() for name in columns]
        cells = " ".join(f"{value:{size}.3f}" for value, size in zip(means, (8, 7, 6, 7, 8, 9, 9), strict=False))
        guess = result.next_token[0]
        lines.append(f"{result.label:>{width}} {result.loss:7.3f} {cells}  {guess['token']!r} ({guess['prob']:.2f})")
    return "\n".join(lines)


def resolve_schedules(views: ViewsAsked, loaded, max_tokens: int, text: str | None = None) -> list[Schedule]:
    """The --schedule requests as Schedules. 'trained' anchors them at the trained length; YaRN's scale is then the
    text's own token count over it (`text` given, cut to `max_tokens`), or `max_tokens` over it (a corpus: every
    document cut there; a probe or an lm-eval run: its longest text)."""
    trained = views.trained_length or loaded.max_positions
    tokens = max_tokens
    if text is not None and any(request.parameter == "trained" for request in views.schedules):
        tokens = len(tokenize(loaded, text, max_tokens)[0])
    return [schedule for request in views.schedules for schedule in request.resolve(trained, tokens)]


def requested_views(views: ViewsAsked, loaded, max_tokens: int, text: str | None = None) -> list:
    """What a command runs: the temperatures and schedules on the model's own positions, then on each --rope
    recipe (all of them, or the temperatures after its @)."""
    plain = list(views.temperatures) + resolve_schedules(views, loaded, max_tokens, text)
    recipes = [View(spec, request.rope) for request in views.ropes
               for spec in (plain if request.temperatures is None else request.temperatures)]
    return plain + recipes


def run_analyze(request: AnalyzeCommand) -> None:
    text, _ = read_text(request.source)
    started = time.perf_counter()
    loaded = load_model(request.model, progress=progress_line, device=request.device)
    load_seconds = time.perf_counter() - started
    passes = request.passes
    report = analyze(loaded, text, temperatures=requested_views(request.views, loaded, passes.max_tokens, text),
                     mode=request.mode, window=passes.window,
                     layers=None if request.layers is None else list(request.layers), max_tokens=passes.max_tokens,
                     progress=progress_line, bucket_size=passes.bucket_size,
                     trained_length=request.views.trained_length, beyond_trained=passes.beyond_trained)
    if request.json is None:
        print(report_table(report))
        return
    write_json(report.to_dict() | {"load_seconds": load_seconds, "model_source": loaded.source}, request.json)


def cache_folder(request: SweepCommand | TuneCommand | FitCommand | RetrievalCommand | LmEvalCommand
                 ) -> Path | None:
    """--cache-dir as an absolute path: Ray workers, which write passes into it, need not share the driver's folder."""
    return Path(request.cache_dir).resolve() if request.cache_dir else None


def sweep_settings(request: SweepCommand | TuneCommand | FitCommand):
    """The settings every pass of a sweep, a tune or a fit shares, from the command line."""
    from model_utils.experiments.sweep import SweepSettings

    passes = request.passes
    return SweepSettings(max_tokens=passes.max_tokens, bucket_size=passes.bucket_size, q_start=passes.q_start,
                         window=passes.window, trained_length=request.views.trained_length,
                         beyond_trained=passes.beyond_trained)


def placement(placing: Placing):
    """--workers, --ray-address and --threads as a Placement (sweep, tune, fit and retrieval take the same three),
    checked."""
    from model_utils.experiments.runs.errors import RunUsageError
    from model_utils.experiments.runs.pool import Placement

    try:
        return Placement(workers=placing.workers, ray_address=placing.ray_address, threads=placing.threads)
    except RunUsageError as error:
        raise UsageError(str(error)) from None


def run_sweep(request: SweepCommand) -> None:
    from model_utils.experiments.runs.errors import RunUsageError

    text, source = read_text(request.source)
    placed = placement(request.placing)
    loaded = load_model(request.model, progress=progress_line, device=request.device)
    specs = requested_views(request.views, loaded, request.passes.max_tokens, text)
    cache_dir = cache_folder(request)
    started = time.perf_counter()
    try:
        runner = sweep_on_ray if placed.on_ray else sweep_here
        document = runner(loaded, text, specs, sweep_settings(request), placed, source=source, cache_dir=cache_dir,
                          cut=cut_settings(request), name=text_name(request.source, source))
    except RunUsageError as error:
        raise UsageError(str(error)) from None
    run = run_record(request.argv, time.perf_counter() - started)
    write_json(replace(document, run=run).to_dict(), request.json)


def cut_settings(request: LongPassesCommand):
    """--cut-context-stride and --cut-context-dir as the CutSettings of a sweep or a tune (None: --cut-context-stride
    0, no reference)."""
    from model_utils.experiments.cut_context import CutSettings

    if request.cut_context_stride == 0:
        return None
    folder = Path(request.cut_context_dir).resolve() if request.cut_context_dir else cache_root() / "cut-context"
    return CutSettings(folder=folder, stride=request.cut_context_stride)


def sweep_here(loaded, text, specs, settings, placed, *, source, cache_dir, cut, name):
    """The sweep in this process, with a bar of layers over all its passes (drawn once a pass starts: a sweep refused
    by its checks, or all cached, draws none)."""
    from tqdm import tqdm

    from model_utils.experiments.sweep import sweep

    bars = []

    def on_start(label: str, index: int) -> None:
        if not bars:
            bars.append(tqdm(total=len(specs) * loaded.n_layers, unit="layer", file=sys.stderr, dynamic_ncols=True))
        bars[0].n = index * loaded.n_layers
        bars[0].set_description(label)

    def on_layer(event: Progress) -> None:
        bars[0].set_postfix_str(f"Layer {event.step} of {event.steps}")
        bars[0].update(1)

    try:
        return sweep(loaded, text, specs, settings, source=source, cache_dir=cache_dir, on_start=on_start,
                     progress=on_layer, cut=cut, name=name)
    finally:
        for bar in bars:
            bar.close()


def sweep_on_ray(loaded, text, specs, settings, placed, *, source, cache_dir, cut, name):
    """The sweep's missing passes on Ray workers, one pass per worker at a time: a bar of passes, and a line as each
    starts or finishes on its worker (drawn once the workers are ready)."""
    from tqdm import tqdm

    from model_utils.experiments.sweep_workers import PassEvent, sweep_on_workers

    bars = []

    def on_pass(event: PassEvent) -> None:
        if not bars:
            bars.append(tqdm(total=event.total, initial=event.done, unit="pass", desc="passes", file=sys.stderr,
                             dynamic_ncols=True))
        where = f"worker {event.worker + 1} of {placed.workers}"
        if event.seconds is None:
            tqdm.write(f"{event.label}: started on {where}", file=sys.stderr)
            return
        tqdm.write(f"{event.label}: finished on {where} in {event.seconds:.1f} s", file=sys.stderr)
        bars[0].update(event.done - bars[0].n)

    try:
        return sweep_on_workers(loaded, text, specs, settings, placed, source=source, cache_dir=cache_dir,
                                on_pass=on_pass, cut=cut, name=name)
    finally:
        for bar in bars:
            bar.close()


def run_tune(request: TuneCommand) -> None:
    from tqdm import tqdm

    from model_utils.experiments.corpus import CorpusError, read_corpus
    from model_utils.experiments.runs.errors import RunUsageError
    from model_utils.experiments.tune.fits import keep_fits
    from model_utils.experiments.tune.run import SUMMARY, tune
    from model_utils.verdicts.words import tune_table

    placed = placement(request.placing)
    try:
        corpus = read_corpus(request.corpus, request.documents)  # before the model: a bad corpus fails at once
    except CorpusError as error:
        raise UsageError(str(error)) from None
    loaded = load_model(request.model, progress=progress_line, device=request.device)
    specs = requested_views(request.views, loaded, request.passes.max_tokens)
    settings = sweep_settings(request)
    out = Path(request.out)
    bars = []  # made when the tune has checked everything and knows how many documents are already done

    def on_document(progress) -> None:
        if not bars:
            bars.append(tqdm(total=progress.total, initial=progress.done, unit="doc", desc="documents",
                             file=sys.stderr, dynamic_ncols=True))
        else:
            bars[0].update(progress.done - bars[0].n)

    def on_pass(document, label: str, index: int) -> None:
        bars[0].set_postfix_str(f"{document.name[-40:]}: {label} ({index + 1}/{len(specs)})")

    started = time.perf_counter()
    try:
        summary = tune(loaded, corpus, specs, settings, out, workers=placed.workers,
                       ray_address=placed.ray_address, threads=placed.threads, on_document=on_document, on_pass=on_pass,
                       cache_dir=cache_folder(request), cut=cut_settings(request))
    except RunUsageError as error:
        raise UsageError(str(error)) from None
    finally:
        for bar in bars:
            bar.close()
    summary = replace(summary, run=run_record(request.argv, time.perf_counter() - started))
    summary = keep_fits(out / SUMMARY, replace(summary, runs=computing_runs(out / SUMMARY, summary)))
    write_json(summary.to_dict(), str(out / SUMMARY))
    print(tune_table(summary))


def run_fit(request: FitCommand) -> None:
    from model_utils.experiments.corpus import CorpusError, read_corpus
    from model_utils.experiments.fit.families import FAMILIES
    from model_utils.experiments.fit.run import FIT, FitRequest, fit
    from model_utils.experiments.runs.errors import RunUsageError
    from model_utils.experiments.tune.fits import fold_into
    from model_utils.experiments.tune.run import SUMMARY
    from model_utils.verdicts.words import fit_table

    ropes = request.views.ropes
    if len(ropes) > 1 or any(rope.temperatures is not None for rope in ropes):
        raise UsageError("fit takes one --rope TYPE:S (the temperature is what it fits), e.g. --rope yarn-rope:2")
    placed = placement(request.placing)
    try:
        corpus = read_corpus(request.corpus, request.documents)
    except CorpusError as error:
        raise UsageError(str(error)) from None
    loaded = load_model(request.model, progress=progress_line, device=request.device)
    asked = FitRequest(family=FAMILIES[request.family], rope=ropes[0].rope if ropes else None, folds=request.folds,
                       bounds=request.bounds, tolerance=request.tolerance, max_evaluations=request.max_evaluations,
                       schedules=tuple(resolve_schedules(request.views, loaded, request.passes.max_tokens)),
                       grid=request.compare_temperatures)
    started = time.perf_counter()
    out, settings = Path(request.out), sweep_settings(request)
    try:
        reuse = None if request.compare_from is None else tune_rows(request.compare_from,
                                                                    settings.trained_length or loaded.max_positions)
        summary = fit(loaded, corpus, asked, settings, out, workers=placed.workers,
                      ray_address=placed.ray_address, threads=placed.threads,
                      cache_dir=cache_folder(request), progress=progress_lines,
                      reuse=reuse)
    except RunUsageError as error:
        raise UsageError(str(error)) from None
    summary = replace(summary, run=run_record(request.argv, time.perf_counter() - started))
    write_json(summary.to_dict(), str(out / FIT))
    print(fit_table(summary))
    folded = None if request.compare_from is None else fold_into(Path(request.compare_from), summary)
    if folded is not None:  # the tune's verdict, with this fit on top of its recipe
        write_json(folded.to_dict(), str(Path(request.compare_from) / SUMMARY))


def tune_rows(folder: str, trained_length: int):
    """fit --compare-from: the rows of the tune in `folder`, as the fit reuses them (RunUsageError if unusable)."""
    from model_utils.experiments.fit.reuse import TuneRows
    from model_utils.experiments.tune.rows import region_sums

    settings, sums = region_sums(Path(folder), trained_length)
    return TuneRows(source=folder, settings=settings, sums=sums)


def computing_runs(path: Path, summary: TuneSummary) -> tuple[ComputingRun, ...]:
    """The runs that computed documents into this folder, oldest first: the previous summary's list, and this run
    when it computed any. A rerun that only re-reads the rows keeps the record of the runs that made them."""
    runs: tuple[ComputingRun, ...] = ()
    if path.is_file():
        try:
            runs = previous_runs(json.loads(path.read_text()))
        except (OSError, ValueError):  # RecordError is a ValueError: a summary it cannot read records no run
            runs = ()
    if summary.computed_documents:
        runs += (run_entry(summary),)
    return runs


def run_entry(summary: TuneSummary) -> ComputingRun:
    return ComputingRun(**asdict(summary.run) | {
        "computed_documents": summary.computed_documents, "workers": summary.workers,
        "threads_per_worker": summary.threads_per_worker, "wall_seconds": summary.wall_seconds,
        "peak_rss_gb": summary.peak_rss_gb.max})


def run_record(command: str, wall_seconds: float) -> RunInfo:
    """How this result was made: the command, when, how long this run took, and the process's peak memory."""
    return RunInfo(command=command, date=datetime.datetime.now().isoformat(timespec="seconds"),
                   wall_seconds=round(wall_seconds, 1), peak_rss_gb=peak_rss_gb(),
                   machine=f"{platform.machine()}, {usable_cores()} cores, Python {platform.python_version()}")


def run_generate(request: GenerateCommand) -> None:
    from model_utils.engine.generate import GenerationRequest, generate_continuations

    text, _ = read_text(request.source)
    loaded = load_model(request.model, progress=progress_line, device=request.device)
    generation = generate_continuations(
        loaded, text, GenerationRequest(temperatures=list(request.temperatures),
                                        max_new_tokens=request.max_new_tokens, mode=request.mode,
                                        max_tokens=request.max_tokens), progress=progress_line)
    if request.json is not None:
        write_json(generation.to_dict(), request.json)
        return
    lines = [f"{generation.model}: {generation.prompt_tokens} tokens, mode {generation.mode}, "
             f"{generation.seconds:.1f} s" + (f" ({generation.note})" if generation.note else "")]
    for continuation in generation.continuations:
        top = ", ".join(f"{entry['token']!r} {entry['prob']:.2f}" for entry in continuation.top_next)
        lines += [f"T={continuation.temperature:g}  next: {top}", f"    {continuation.text!r}"]
    print("\n".join(lines))


def run_retrieval(request: RetrievalCommand) -> None:
    from model_utils.experiments.retrieval.run import retrieval
    from model_utils.experiments.runs.errors import RunUsageError

    placed = placement(request.placing)
    loaded = load_model(request.model, progress=progress_line, device=request.device)
    filler, passages = retrieval_texts(request, loaded)
    probe = retrieval_request(request, loaded, passages)
    cache_dir = cache_folder(request) or cache_root() / "retrieval"
    started = time.perf_counter()
    say_separate(passages, probe, request.separate_passes)
    try:
        document = retrieval(loaded, filler, passages, probe, cache_dir=cache_dir, placement=placed,
                             on_unit=retrieval_progress(placed), separate_passes=request.separate_passes,
                             refine=request.refine)
    except RunUsageError as error:
        raise UsageError(str(error)) from None
    document = replace(document, run=run_record(request.argv, time.perf_counter() - started))
    if request.json is not None:
        write_json(document.to_dict(), request.json)
        return
    from model_utils.verdicts.words import retrieval_table

    print(retrieval_table(document))


def say_separate(passages, request, separate: bool) -> None:
    """One line on stderr naming the views that read every text whole (all of them with --separate-passes)."""
    from model_utils.experiments.retrieval.run import separate_views
    from model_utils.verdicts.words import separate_passes_line

    views = list(request.views) if separate else separate_views(passages, request)
    line = separate_passes_line([view.label for view in views], separate)
    if line:
        print(line, file=sys.stderr, flush=True)


def retrieval_texts(request: RetrievalCommand, loaded):
    """(filler, passages) as token ids: the built-in or given filler, cut to what the longest distance needs, and
    the built-in passages and the given files' first --passage-tokens tokens."""
    from model_utils.experiments.retrieval.passages import (
        PASSAGE_NAMES,
        builtin_filler,
        builtin_passages,
        filler_tokens,
        passage_tokens,
    )

    size = request.passage_tokens
    if size < 2:
        raise UsageError(f"--passage-tokens must be at least 2, got {size}")
    needed = request.lead + max(request.distances)
    if request.filler_file:
        filler = filler_tokens(loaded, read_file(request.filler_file, "--filler-file"), request.filler_file, needed)
    else:
        filler = builtin_filler(loaded, request.filler, needed)
    names = tuple(request.passages or (() if request.passage_files else PASSAGE_NAMES))
    passages = builtin_passages(loaded, names, size)
    passages += [passage_tokens(loaded, Path(path).name, read_file(path, "--passage-file"), path, size)
                 for path in request.passage_files]
    return filler, passages


def read_file(path: str, option: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError as error:
        raise UsageError(f"cannot read {option} {path!r}: {error.strerror or error}") from None


def retrieval_request(request: RetrievalCommand, loaded, passages):
    """The run's distances, views and limits from the command line."""
    from model_utils.experiments.retrieval.run import RetrievalRequest

    longest = request.lead + max(request.distances) + max(len(passage.ids) for passage in passages)
    return RetrievalRequest(distances=request.distances,
                            trained_length=request.views.trained_length or loaded.max_positions,
                            views=tuple(retrieval_views(request.views, loaded, longest)),
                            beyond_trained=request.beyond_trained or request.recipes_past_trained, lead=request.lead,
                            recipes_past_trained=request.recipes_past_trained)


def retrieval_views(views: ViewsAsked, loaded, longest: int) -> list:
    """The temperatures, the schedules ('trained' anchored at the trained length; yarn's scale is the longest
    probe's tokens over it) and each --rope recipe, as sweep takes them."""
    from model_utils.core.views import as_view

    return [as_view(spec) for spec in requested_views(views, loaded, longest)]


def retrieval_progress(placed):
    """One line per finished pass on stderr, with the passes and the time left (estimated from the tokens done:
    a pass costs about its length)."""
    started = time.perf_counter()

    def on_unit(event) -> None:
        if event.seconds is None:
            return
        spent = time.perf_counter() - started
        left = spent * (event.tokens_total - event.tokens_done) / max(1, event.tokens_done)
        where = f" on worker {event.worker + 1} of {placed.workers}" if placed.on_ray else ""
        print(f"[{event.done}/{event.total}] {event.label}{where}: {event.seconds:.1f} s; about {left / 60:.0f} min "
              "left", file=sys.stderr, flush=True)

    return on_unit


def run_lmeval(request: LmEvalCommand) -> None:
    from model_utils.experiments.lmeval import check_counts, run_ruler

    check_counts(request.tasks, request.lengths, request.limit)  # before the model loads
    if request.threads is not None:
        if request.threads < 1:
            raise UsageError(f"--threads must be at least 1, got {request.threads}")
        set_threads(request.threads)
    loaded = load_model(request.model, progress=progress_line, device=request.device)
    ruler = lmeval_request(request, loaded)
    started = time.perf_counter()
    document = run_ruler(loaded, ruler, on_score=lmeval_progress())
    document = replace(document, run=run_record(request.argv, time.perf_counter() - started))
    if request.json is not None:
        write_json(document.to_dict(), request.json)
        return
    print(lmeval_table(document))


def lmeval_request(request: LmEvalCommand, loaded):
    """The run's tasks, lengths, limit and views from the command line (the views as sweep takes them; yarn:trained
    scales by the longest length)."""
    from model_utils.core.limits import resolve_views
    from model_utils.experiments.lmeval import RulerRequest

    views = requested_views(request.views, loaded, max(request.lengths))
    return RulerRequest(tasks=request.tasks, lengths=request.lengths, limit=request.limit,
                        views=tuple(resolve_views(views)),
                        trained_length=request.views.trained_length or loaded.max_positions,
                        beyond_trained=request.beyond_trained,
                        cache_dir=cache_folder(request) or cache_root() / "lmeval")


def lmeval_progress():
    """One line per finished task, length and view on stderr, with the time left (from the time so far)."""
    started = time.perf_counter()

    def on_score(score, done: int, total: int) -> None:
        left = (time.perf_counter() - started) * (total - done) / done
        print(f"[{done}/{total}] {score.task} at {score.length:,} tokens, {score.view.label}: {score.score:.2f} over "
              f"{len(score.samples)} samples, {score.seconds_per_sample:.1f} s per sample; about {left / 60:.0f} min "
              "left", file=sys.stderr, flush=True)

    return on_score


def lmeval_table(document) -> str:
    """The scores as a table: one line per task, length and view."""
    width = max(12, *(len(score.view.label) for score in document.scores))
    lines = [f"{document.model}: the first {document.limit} samples of each task at each length (lm-eval "
             f"{document.lm_eval_version})",
             f"{'task':<14} {'tokens':>7} {'view':<{width}} {'score':>6} {'s/sample':>9}"]
    lines += [f"{score.task:<14} {score.length:>7} {score.view.label:<{width}} {score.score:>6.2f} "
              f"{score.seconds_per_sample:>9.1f}" for score in document.scores]
    return "\n".join(lines)


COMMANDS = {AnalyzeCommand: run_analyze, SweepCommand: run_sweep, TuneCommand: run_tune, FitCommand: run_fit,
            GenerateCommand: run_generate, RetrievalCommand: run_retrieval, LmEvalCommand: run_lmeval}
