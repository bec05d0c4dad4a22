"""Each command's arguments as one typed request, filled once from argparse's Namespace (`parse_request`): the
commands read these records, never the Namespace, and nothing writes into either. No torch, as the parser."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from model_utils.cli.parser import RopeRequest, build_parser
from model_utils.core.paths import portable_command
from model_utils.core.schedules import ScheduleRequest
from model_utils.experiments.corpus import BUILTIN


@dataclass(frozen=True, kw_only=True)
class TextSource:
    """Where a text comes from: --text, --file (- for standard input) or --builtin; the parser sets exactly one."""

    text: str | None = None
    file: str | None = None
    builtin: str | None = None


@dataclass(frozen=True, kw_only=True)
class ViewsAsked:
    """--temperatures, --schedule and --rope as typed, and --trained-length, where 'trained' anchors (None: the
    model's own)."""

    temperatures: tuple[float, ...] = ()
    schedules: tuple[ScheduleRequest, ...] = ()
    ropes: tuple[RopeRequest, ...] = ()
    trained_length: int | None = None


@dataclass(frozen=True, kw_only=True)
class PassSettings:
    """What every pass of a sweep, a tune or a fit shares: the length, the buckets, the first query measured, the
    recent window, and whether a text may run past the trained length."""

    max_tokens: int
    bucket_size: int | None
    q_start: int = 1
    window: int = 32
    beyond_trained: bool = False


@dataclass(frozen=True, kw_only=True)
class Placing:
    """--workers, --ray-address and --threads as typed (checked when the run starts: commands.placement)."""

    workers: int = 1
    ray_address: str | None = None
    threads: int | None = None


@dataclass(frozen=True, kw_only=True)
class Command:
    """What every command takes: the model, where it runs, and its command line as a result file records it."""

    model: str
    device: str | None = None
    argv: str  # portable_command's form: no path of this machine


@dataclass(frozen=True, kw_only=True)
class AnalyzeCommand(Command):
    source: TextSource
    views: ViewsAsked
    passes: PassSettings
    mode: str
    layers: tuple[int, ...] | None
    json: str | None


@dataclass(frozen=True, kw_only=True)
class GenerateCommand(Command):
    source: TextSource
    temperatures: tuple[float, ...]
    max_new_tokens: int
    max_tokens: int
    mode: str
    json: str | None


@dataclass(frozen=True, kw_only=True)
class LongPassesCommand(Command):
    """What a sweep and a tune share: the views, the passes, where they run and are kept, the cut-context read."""

    views: ViewsAsked
    passes: PassSettings
    placing: Placing
    cache_dir: str | None
    cut_context_stride: int | None
    cut_context_dir: str | None


@dataclass(frozen=True, kw_only=True)
class SweepCommand(LongPassesCommand):
    source: TextSource
    json: str


@dataclass(frozen=True, kw_only=True)
class TuneCommand(LongPassesCommand):
    corpus: str
    documents: int | None
    out: str


@dataclass(frozen=True, kw_only=True)
class FitCommand(Command):
    """fit's arguments; its views are the schedules it compares with (all five anchored at the trained length
    unless --schedule says otherwise) and its --rope, and it always scores past the trained length."""

    corpus: str  # --builtin-corpus: builtin
    documents: int | None
    out: str
    views: ViewsAsked
    passes: PassSettings
    placing: Placing
    family: str
    folds: int
    bounds: tuple[float, float] | None
    tolerance: float | None
    max_evaluations: int
    compare_temperatures: tuple[float, ...]
    compare_from: str | None
    cache_dir: str | None


@dataclass(frozen=True, kw_only=True)
class RetrievalCommand(Command):
    distances: tuple[int, ...]
    passages: tuple[str, ...] | None
    passage_files: tuple[str, ...]
    passage_tokens: int
    filler: str
    filler_file: str | None
    lead: int
    views: ViewsAsked
    beyond_trained: bool
    recipes_past_trained: bool
    separate_passes: bool
    refine: bool
    placing: Placing
    cache_dir: str | None
    json: str | None


@dataclass(frozen=True, kw_only=True)
class LmEvalCommand(Command):
    tasks: tuple[str, ...]
    lengths: tuple[int, ...]
    limit: int
    views: ViewsAsked
    beyond_trained: bool
    threads: int | None
    cache_dir: str | None
    json: str | None


def parse_request(argv: list[str] | None = None, *, command: str | None = None) -> Command:
    """The command line `argv` (None: sys.argv's) parsed and filled into its command's request; `command`, the
    command line to record (None: `argv` made portable)."""
    words = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(words)
    return FILL[args.command](args, command or portable_command(words))


def _common(args: argparse.Namespace, argv: str) -> dict:
    return {"model": args.model, "device": args.device, "argv": argv}


def _source(args: argparse.Namespace) -> TextSource:
    return TextSource(text=args.text, file=args.file, builtin=getattr(args, "builtin", None))


def _views(args: argparse.Namespace, schedules=None) -> ViewsAsked:
    return ViewsAsked(temperatures=tuple(getattr(args, "temperatures", ())),
                      schedules=tuple(args.schedule if schedules is None else schedules), ropes=tuple(args.rope),
                      trained_length=args.trained_length)


def _passes(args: argparse.Namespace, beyond_trained: bool | None = None) -> PassSettings:
    return PassSettings(max_tokens=args.max_tokens, bucket_size=args.bucket_size,
                        q_start=getattr(args, "q_start", 1), window=args.window,
                        beyond_trained=args.beyond_trained if beyond_trained is None else beyond_trained)


def _placing(args: argparse.Namespace) -> Placing:
    return Placing(workers=args.workers, ray_address=args.ray_address, threads=args.threads)


def _analyze(args: argparse.Namespace, argv: str) -> AnalyzeCommand:
    return AnalyzeCommand(**_common(args, argv), source=_source(args), views=_views(args), passes=_passes(args),
                          mode=args.mode, layers=None if args.layers is None else tuple(args.layers), json=args.json)


def _generate(args: argparse.Namespace, argv: str) -> GenerateCommand:
    return GenerateCommand(**_common(args, argv), source=_source(args), temperatures=tuple(args.temperatures),
                           max_new_tokens=args.max_new_tokens, max_tokens=args.max_tokens, mode=args.mode,
                           json=args.json)


def _sweep(args: argparse.Namespace, argv: str) -> SweepCommand:
    return SweepCommand(**_common(args, argv), source=_source(args), views=_views(args), passes=_passes(args),
                        placing=_placing(args), cache_dir=args.cache_dir, cut_context_stride=args.cut_context_stride,
                        cut_context_dir=args.cut_context_dir, json=args.json)


def _tune(args: argparse.Namespace, argv: str) -> TuneCommand:
    return TuneCommand(**_common(args, argv), corpus=args.corpus, documents=args.documents, out=args.out,
                       views=_views(args), passes=_passes(args), placing=_placing(args), cache_dir=args.cache_dir,
                       cut_context_stride=args.cut_context_stride, cut_context_dir=args.cut_context_dir)


def _fit(args: argparse.Namespace, argv: str) -> FitCommand:
    schedules = args.schedule or [ScheduleRequest("all", "trained")]
    return FitCommand(**_common(args, argv), corpus=BUILTIN if args.builtin_corpus else args.corpus,
                      documents=args.documents, out=args.out, views=_views(args, schedules),
                      passes=_passes(args, beyond_trained=True),  # the fit scores the positions past it
                      placing=_placing(args), family=args.family, folds=args.folds,
                      bounds=None if args.bounds is None else tuple(args.bounds), tolerance=args.tolerance,
                      max_evaluations=args.max_evaluations, compare_temperatures=tuple(args.compare_temperatures),
                      compare_from=args.compare_from, cache_dir=args.cache_dir)


def _retrieval(args: argparse.Namespace, argv: str) -> RetrievalCommand:
    return RetrievalCommand(**_common(args, argv), distances=tuple(args.distances),
                            passages=None if args.passages is None else tuple(args.passages),
                            passage_files=tuple(args.passage_file), passage_tokens=args.passage_tokens,
                            filler=args.filler, filler_file=args.filler_file, lead=args.lead, views=_views(args),
                            beyond_trained=args.beyond_trained, recipes_past_trained=args.recipes_past_trained,
                            separate_passes=args.separate_passes, refine=args.refine, placing=_placing(args),
                            cache_dir=args.cache_dir, json=args.json)


def _lmeval(args: argparse.Namespace, argv: str) -> LmEvalCommand:
    return LmEvalCommand(**_common(args, argv), tasks=tuple(args.tasks), lengths=tuple(args.lengths),
                         limit=args.limit, views=_views(args), beyond_trained=args.beyond_trained,
                         threads=args.threads, cache_dir=args.cache_dir, json=args.json)


FILL = {"analyze": _analyze, "generate": _generate, "sweep": _sweep, "tune": _tune, "fit": _fit,
        "retrieval": _retrieval, "lmeval": _lmeval}
