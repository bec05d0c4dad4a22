"""Command line: the same reports the pages plot, as JSON or a short table.

    python -m model_utils analyze --model bundled --file essay.txt --temperatures 0.5 1 2 4 --json -
    python -m model_utils sweep --builtin long --max-tokens 16384 --beyond-trained --bucket-size 1024 \
        --temperatures 0.7 0.8 0.9 1 1.1 1.25 1.5 --schedule all:trained --json sweep.json
    python -m model_utils tune --corpus builtin --documents 4 --max-tokens 12288 --beyond-trained \
        --bucket-size 1024 --temperatures 0.8 0.9 1 1.1 1.25 --schedule all:trained --workers 2 --out results/tune

A mistake the user can make (empty text, a bad temperature, a missing file or model) prints one line on stderr
and exits with status 2. A tune that could not finish (its workers kept dying) exits with status 1 and keeps the
documents it finished.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import time
from pathlib import Path

from model_utils import imports_without_collection

with imports_without_collection():  # torch and transformers
    from model_utils.analysis import MODES, AnalysisError, Report, analyze
    from model_utils.loading import BUNDLED, ModelLoadError, load_model
    from model_utils.metrics import TEMPERATURE_RANGE, check_temperature
    from model_utils.schedules import SCHEDULES, Schedule, ScheduleRequest
    from model_utils.texts import BUILTIN_TEXTS, SOURCE, builtin_text
    from model_utils.tune import TuneError

USAGE_ERROR = 2


class UsageError(Exception):
    """A mistake in the command line or its input: reported as one line on stderr, exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse prints usage plus a message; a user gets one line instead (and --help for the rest)."""

    def error(self, message):
        raise UsageError(f"{message} (see --help)")


def temperature_arg(text: str) -> float:
    try:
        return check_temperature(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def schedule_arg(text: str) -> ScheduleRequest:
    name, _, parameter = text.partition(":")
    if name != "all" and name not in SCHEDULES:
        raise argparse.ArgumentTypeError(f"unknown schedule {name!r}; choose one of {', '.join(SCHEDULES)} or all")
    if parameter in ("", "trained"):
        return ScheduleRequest(name, parameter or None)
    try:
        value = float(parameter)
        if name != "all":
            Schedule(name, value)  # checks the value
    except ValueError as error:
        message = str(error) if "schedule" in str(error) else f"schedule parameter {parameter!r} is not a number"
        raise argparse.ArgumentTypeError(message) from None
    return ScheduleRequest(name, value)


def schedules_help() -> str:
    lines = [f"{name} ({info.knob}, default {info.default:g})" for name, info in SCHEDULES.items()]
    applied = [getattr(info, "applied", "") for info in SCHEDULES.values()]
    notes = " ".join(f"{name}: {text}" for name, text in zip(SCHEDULES, applied, strict=True) if text)
    return (f"add a published length schedule: {'; '.join(lines)}; 'all' for the five. PARAM is a number, or "
            f"'trained' for the model's trained length (yarn: tokens / trained length). {notes}")


def add_common(command: argparse.ArgumentParser, max_tokens: int, with_builtin: bool = False,
               with_text: bool = True) -> None:
    """The arguments analyze, sweep and tune share: text source (not for tune, which reads a corpus), model,
    temperatures, schedules, window, length."""
    if with_text:
        source = command.add_mutually_exclusive_group(required=True)
        source.add_argument("--text", help="the text to analyse")
        source.add_argument("--file", help="a UTF-8 text file to analyse (- reads standard input)")
        if with_builtin:
            source.add_argument("--builtin", choices=BUILTIN_TEXTS,
                                help=f"a long text that ships with Python: {SOURCE}")
    command.add_argument("--device", help="where the model runs, e.g. cuda (default: the CPU, with the fused "
                                          "kernel; elsewhere the engine takes its torch path)")
    command.add_argument("--model", default=BUNDLED,
                         help="bundled (default), tiny-random, or a Hugging Face model folder")
    command.add_argument("--schedule", action="append", type=schedule_arg, default=[], metavar="NAME[:PARAM]",
                         help=schedules_help())
    command.add_argument("--window", type=int, default=32, help="recent window in tokens (default 32)")
    command.add_argument("--max-tokens", type=int, default=max_tokens,
                         help=f"cut longer text to this many tokens (default {max_tokens})")
    command.add_argument("--beyond-trained", action="store_true",
                         help="allow a text longer than the model's trained length (refused otherwise)")
    command.add_argument("--trained-length", type=int, metavar="L",
                         help="the model's trained context length, if not its max_position_embeddings")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m model_utils", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    run = commands.add_parser("analyze", help="analyse one text at several temperatures")
    add_common(run, max_tokens=2048)
    run.add_argument("--temperatures", nargs="+", type=temperature_arg, default=[0.5, 1.0, 2.0], metavar="T",
                     help=f"temperatures in {TEMPERATURE_RANGE}; T > 1 softens, T < 1 sharpens (default: 0.5 1 2)")
    run.add_argument("--mode", choices=MODES, default="in-model",
                     help="in-model: T inside the chosen layers during the pass; isolated: each layer re-softmaxed")
    run.add_argument("--layers", nargs="+", type=int, metavar="L", help="layers where T applies (default: all)")
    run.add_argument("--bucket-size", type=int, metavar="K",
                     help="also report statistics and loss per bucket of K query positions")
    run.add_argument("--json", metavar="OUT", help="write the report as JSON to OUT (- for stdout)")
    swept = commands.add_parser("sweep", help="loss and attention by position at several temperatures, and the "
                                              "best temperature per position bucket")
    add_common(swept, max_tokens=16384, with_builtin=True)
    add_sweep_options(swept)
    swept.add_argument("--cache-dir", help="where finished passes are kept (default: the model cache folder)")
    swept.add_argument("--json", metavar="OUT", required=True, help="write the sweep as JSON to OUT (- for stdout)")
    tuned = commands.add_parser("tune", help="the sweep over a corpus of documents, in this process or on Ray "
                                             "workers: the best temperature per position bucket, with intervals")
    add_common(tuned, max_tokens=16384, with_text=False)
    add_sweep_options(tuned)
    tuned.add_argument("--corpus", required=True, metavar="PATH",
                       help="a folder of .txt files, a .jsonl file with a \"text\" field per line, or builtin "
                            f"(documents cut from {SOURCE})")
    tuned.add_argument("--documents", type=int, metavar="N", help="only the first N documents of the corpus")
    tuned.add_argument("--out", required=True, metavar="DIR",
                       help="results folder: rows/ (Parquet, one file per document) and summary.json; a rerun "
                            "skips the documents already there")
    tuned.add_argument("--workers", type=int, default=1, metavar="W",
                       help="1 (default): in this process, no Ray; W > 1: W Ray actors on this machine")
    tuned.add_argument("--ray-address", metavar="HOST:PORT",
                       help="run the W workers on the Ray cluster at this address (`ray start --head` prints it)")
    tuned.add_argument("--threads", type=int, metavar="T",
                       help="torch threads per Ray worker (default: this machine's cores // W); on a cluster each "
                            "worker reserves T CPUs")
    return parser


def add_sweep_options(command: argparse.ArgumentParser) -> None:
    """The arguments sweep and tune share: temperatures (1 included), bucket size, first query position."""
    command.add_argument("--temperatures", nargs="+", type=temperature_arg, metavar="T",
                         default=[0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5],
                         help=f"temperatures in {TEMPERATURE_RANGE}, 1 included (default: 0.7 0.8 0.9 1 1.1 1.25 1.5)")
    command.add_argument("--bucket-size", type=int, default=1024, metavar="K",
                         help="query positions per bucket (default 1024)")
    command.add_argument("--q-start", type=int, default=1, help="first query position measured (default 1)")


def read_text(args) -> tuple[str, str]:
    """(text, where it came from)."""
    if getattr(args, "builtin", None):
        return builtin_text(args.builtin), f"{SOURCE}, built-in text {args.builtin!r}"
    if args.text is not None:
        return args.text, "--text"
    if args.file == "-":
        return sys.stdin.read(), "standard input"
    try:
        with open(args.file, encoding="utf-8", errors="replace") as handle:
            return handle.read(), args.file
    except OSError as error:
        raise UsageError(f"cannot read --file {args.file!r}: {error.strerror or error}") from None


def write_json(document: dict, target: str) -> None:
    payload = json.dumps(document, ensure_ascii=False, allow_nan=False)
    if target == "-":
        print(payload)
        return
    try:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(payload + "\n")
    except OSError as error:
        raise UsageError(f"cannot write --json {target!r}: {error.strerror or error}") from None


def summary_table(report: Report) -> str:
    """A short human-readable table: one line per temperature."""
    lines = [f"{report.model}: {report.n_tokens} tokens{' (cut)' if report.truncated else ''}, mode {report.mode}, "
             f"window {report.window}, {report.seconds:.1f} s",
             f"{'temperature':>26} {'loss':>7} {'entropy':>8} {'norm H':>7} {'sink':>6} {'recent':>7} "
             f"{'distant':>8}  next token"]
    for result in report.results:
        means = {name: result.layer_mean(name).mean() for name in
                 ("entropy", "normalized_entropy", "sink_mass", "recent_mass", "distant_mass")}
        guess = result.next_token[0]
        lines.append(f"{result.label:>26} {result.loss:7.3f} {means['entropy']:8.3f} "
                     f"{means['normalized_entropy']:7.3f} {means['sink_mass']:6.3f} {means['recent_mass']:7.3f} "
                     f"{means['distant_mass']:8.3f}  {guess['token']!r} ({guess['prob']:.2f})")
    return "\n".join(lines)


def progress_line(fraction: float, message: str) -> None:
    if sys.stderr.isatty():
        print(f"\r[{fraction:4.0%}] {message:<70}", end="\n" if fraction >= 1 else "", file=sys.stderr, flush=True)


def resolve_schedules(args, loaded, text: str | None = None) -> list[Schedule]:
    """The --schedule requests as Schedules. 'trained' anchors them at the trained length; YaRN's scale is then the
    text's own token count over it (`text` given), or --max-tokens over it (a corpus: every document cut there)."""
    trained = args.trained_length or loaded.max_positions
    tokens = args.max_tokens
    if text is not None and any(request.parameter == "trained" for request in args.schedule):
        from model_utils.analysis import tokenize

        tokens = len(tokenize(loaded, text, args.max_tokens)[0])
    return [schedule for request in args.schedule for schedule in request.resolve(trained, tokens)]


def run_analyze(args) -> None:
    text, _ = read_text(args)
    started = time.perf_counter()
    loaded = load_model(args.model, progress=progress_line, device=args.device)
    load_seconds = time.perf_counter() - started
    report = analyze(loaded, text, temperatures=list(args.temperatures) + resolve_schedules(args, loaded, text),
                     mode=args.mode, window=args.window, layers=args.layers, max_tokens=args.max_tokens,
                     progress=progress_line, bucket_size=args.bucket_size, trained_length=args.trained_length,
                     beyond_trained=args.beyond_trained)
    if args.json is None:
        print(summary_table(report))
        return
    write_json(report.to_dict() | {"load_seconds": load_seconds, "model_source": loaded.source}, args.json)


def run_sweep(args) -> None:
    from tqdm import tqdm

    from model_utils.sweep import SweepSettings, sweep

    text, source = read_text(args)
    loaded = load_model(args.model, progress=progress_line, device=args.device)
    specs = list(args.temperatures) + resolve_schedules(args, loaded, text)
    settings = SweepSettings(args.max_tokens, args.bucket_size, args.q_start, args.window, args.trained_length,
                             args.beyond_trained)
    bars = []  # made when the first pass starts: a sweep refused by its checks, or all cached, draws none

    def on_start(label: str, index: int) -> None:
        if not bars:
            bars.append(tqdm(total=len(specs) * loaded.n_layers, unit="layer", file=sys.stderr, dynamic_ncols=True))
        bars[0].n = index * loaded.n_layers
        bars[0].set_description(label)

    def on_layer(fraction: float, message: str) -> None:
        bars[0].set_postfix_str(message.split(" (")[0])
        bars[0].update(1)

    started = time.perf_counter()
    try:
        document = sweep(loaded, text, specs, settings, source=source,
                         cache_dir=Path(args.cache_dir) if args.cache_dir else None, on_start=on_start,
                         progress=on_layer)
    finally:
        for bar in bars:
            bar.close()
    document["run"] = run_record(argv_of(args), time.perf_counter() - started)
    write_json(document, args.json)


def run_tune(args) -> None:
    from tqdm import tqdm

    from model_utils.corpus import CorpusError, read_corpus
    from model_utils.sweep import SweepSettings
    from model_utils.tune import SUMMARY, TuneUsageError, summary_table, tune

    for name in ("workers", "threads"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise UsageError(f"--{name} must be at least 1, got {getattr(args, name)}")
    try:
        corpus = read_corpus(args.corpus, args.documents)  # before the model: a bad corpus fails at once
    except CorpusError as error:
        raise UsageError(str(error)) from None
    loaded = load_model(args.model, progress=progress_line, device=args.device)
    specs = list(args.temperatures) + resolve_schedules(args, loaded)
    settings = SweepSettings(args.max_tokens, args.bucket_size, args.q_start, args.window, args.trained_length,
                             args.beyond_trained)
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
        summary = tune(loaded, corpus, specs, settings, Path(args.out), workers=args.workers,
                       ray_address=args.ray_address, threads=args.threads, on_document=on_document, on_pass=on_pass)
    except TuneUsageError as error:
        raise UsageError(str(error)) from None
    finally:
        for bar in bars:
            bar.close()
    summary["run"] = run_record(argv_of(args), time.perf_counter() - started)
    summary["runs"] = computing_runs(Path(args.out) / SUMMARY, summary)
    write_json(summary, str(Path(args.out) / SUMMARY))
    print(summary_table(summary))


def computing_runs(path: Path, summary: dict) -> list[dict]:
    """The runs that computed documents into this folder, oldest first: the previous summary's list, and this run
    when it computed any. A rerun that only re-reads the rows keeps the record of the runs that made them."""
    runs = []
    if path.is_file():
        try:
            previous = json.loads(path.read_text())
        except (OSError, ValueError):
            previous = {}
        runs = previous.get("runs") or ([run_entry(previous)] if previous.get("computed_documents") else [])
    if summary["computed_documents"]:
        runs.append(run_entry(summary))
    return runs


def run_entry(summary: dict) -> dict:
    return summary["run"] | {"computed_documents": summary["computed_documents"], "workers": summary["workers"],
                             "threads_per_worker": summary["threads_per_worker"],
                             "wall_seconds": summary["wall_seconds"], "peak_rss_gb": summary["peak_rss_gb"]["max"]}


def argv_of(args) -> str:
    return "python -m model_utils " + " ".join(sys.argv[1:]) if args.argv is None else args.argv


def run_record(command: str, wall_seconds: float) -> dict:
    """How this result was made: the command, when, how long this run took, and the process's peak memory."""
    import datetime
    import platform

    from model_utils.sweep import peak_rss_gb

    return {"command": command, "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "wall_seconds": round(wall_seconds, 1),
            "peak_rss_gb": peak_rss_gb(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"}


COMMANDS = {"analyze": run_analyze, "sweep": run_sweep, "tune": run_tune}
FAILED = 1  # a run that could not finish (tune: a worker died too often); what it finished is kept


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        args.argv = None if argv is None else "python -m model_utils " + " ".join(argv)
        COMMANDS[args.command](args)
    except (UsageError, AnalysisError, ModelLoadError) as error:
        print(f"error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except TuneError as error:
        print(f"error: {error}", file=sys.stderr)
        return FAILED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into `head`: the reader left, nothing more to say
        sys.stderr.close()
        return 0
    return 0


def leave(code: int) -> None:
    """End the process once its output is out, without the interpreter's teardown: after torch and transformers are
    imported, finalizing their thousands of modules takes about a second, a fifth of a short `analyze`. Every file a
    command writes is closed when it returns, and `tune` shuts Ray down itself (in a `finally`)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that left, or a stream already closed
            stream.flush()
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":
    leave(main())
