"""Command line: the same report the pages plot, as JSON or a short table.

    python -m model_utils analyze --model bundled --file essay.txt --temperatures 0.5 1 2 4 --json -

A mistake the user can make (empty text, a bad temperature, a missing file or model) prints one line on stderr
and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from model_utils.analysis import MODES, AnalysisError, Report, analyze
from model_utils.loading import BUNDLED, ModelLoadError, load_model
from model_utils.metrics import check_temperature
from model_utils.schedules import SCHEDULES, Schedule

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


def schedule_arg(text: str) -> Schedule:
    name, _, parameter = text.partition(":")
    try:
        return Schedule(name, float(parameter) if parameter else None)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m model_utils", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    run = commands.add_parser("analyze", help="analyse one text at several temperatures")
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="the text to analyse")
    source.add_argument("--file", help="a UTF-8 text file to analyse (- reads standard input)")
    run.add_argument("--model", default=BUNDLED, help="bundled (default), tiny-random, or a Hugging Face model folder")
    run.add_argument("--temperatures", nargs="+", type=temperature_arg, default=[0.5, 1.0, 2.0], metavar="T",
                     help="temperatures in (0, 100]; T > 1 softens, T < 1 sharpens (default: 0.5 1 2)")
    run.add_argument("--schedule", action="append", type=schedule_arg, default=[], metavar="NAME[:PARAM]",
                     help=f"add a published length schedule: {', '.join(SCHEDULES)} (e.g. qwen-logn:512)")
    run.add_argument("--mode", choices=MODES, default="in-model",
                     help="in-model: T inside the chosen layers during the pass; isolated: each layer re-softmaxed")
    run.add_argument("--layers", nargs="+", type=int, metavar="L", help="layers where T applies (default: all)")
    run.add_argument("--window", type=int, default=32, help="recent window in tokens (default 32)")
    run.add_argument("--max-tokens", type=int, default=2048, help="cut longer text to this many tokens")
    run.add_argument("--json", metavar="OUT", help="write the report as JSON to OUT (- for stdout)")
    return parser


def read_text(args) -> str:
    if args.text is not None:
        return args.text
    if args.file == "-":
        return sys.stdin.read()
    try:
        with open(args.file, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError as error:
        raise UsageError(f"cannot read --file {args.file!r}: {error.strerror or error}") from None


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


def run_analyze(args) -> None:
    text = read_text(args)
    started = time.perf_counter()
    loaded = load_model(args.model, progress=progress_line)
    load_seconds = time.perf_counter() - started
    report = analyze(loaded, text, temperatures=list(args.temperatures) + args.schedule, mode=args.mode,
                     window=args.window, layers=args.layers, max_tokens=args.max_tokens, progress=progress_line)
    if args.json is None:
        print(summary_table(report))
        return
    document = report.to_dict() | {"load_seconds": load_seconds, "model_source": loaded.source}
    payload = json.dumps(document, ensure_ascii=False, allow_nan=False)
    if args.json == "-":
        print(payload)
        return
    try:
        with open(args.json, "w", encoding="utf-8") as handle:
            handle.write(payload + "\n")
    except OSError as error:
        raise UsageError(f"cannot write --json {args.json!r}: {error.strerror or error}") from None


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        run_analyze(args)
    except (UsageError, AnalysisError, ModelLoadError) as error:
        print(f"error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into `head`: the reader left, nothing more to say
        sys.stderr.close()
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
