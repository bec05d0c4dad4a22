"""The command line's arguments: argparse with one-line errors, and the argument types that check a temperature
or a schedule as it is typed. No torch: `--help` and a mistyped argument answer at once."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from model_utils.core.limits import MODES
from model_utils.core.lmeval import OFFLINE_TASKS
from model_utils.core.names import BUNDLED, MODEL_HELP
from model_utils.core.rope import RECIPES, REMAPS, Rope, parse_rope, usage
from model_utils.core.schedules import SCHEDULES, ScheduleRequest, parse_schedule
from model_utils.core.softmax import TEMPERATURE_RANGE, check_temperature
from model_utils.experiments.texts import BUILTIN_TEXTS, SOURCE, builtin_source

DESCRIPTION = "The Attention Temperature Explorer's command line: the same reports the pages plot, as JSON or a table."
EXAMPLES = """examples:
  python -m model_utils analyze --model bundled --file essay.txt --temperatures 0.5 1 2 4 --json -
  python -m model_utils sweep --builtin long --max-tokens 16384 --beyond-trained --bucket-size 1024 \\
      --temperatures 0.7 0.8 0.9 1 1.1 1.25 1.5 --schedule all:trained --json sweep.json
  python -m model_utils tune --corpus builtin --documents 4 --max-tokens 12288 --beyond-trained \\
      --bucket-size 1024 --temperatures 0.8 0.9 1 1.1 1.25 --schedule all:trained --workers 2 --out results/tune

A mistake the user can make (empty text, a bad temperature, a missing file or model) prints one line on stderr and
exits with status 2; a tune that could not finish exits with status 1 and keeps the documents it finished."""


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
    try:
        return parse_schedule(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


@dataclass(frozen=True)
class RopeRequest:
    """A --rope argument: the recipe, and the temperatures it runs with (None: every one asked for, and the
    schedules)."""

    rope: Rope
    temperatures: tuple[float, ...] | None


def rope_arg(text: str) -> RopeRequest:
    recipe, at, temperatures = text.partition("@")
    try:
        rope = parse_rope(recipe)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if not at:
        return RopeRequest(rope, None)
    return RopeRequest(rope, tuple(temperature_arg(part) for part in temperatures.split(",") if part.strip()) or None)


ROPE_HELP = (f"a RoPE length-extension recipe. TYPE:S changes the rotary frequencies, S > 1 the scale factor "
             f"({', '.join(RECIPES)}: yarn is YaRN with its own attention factor, yarn-rope the same interpolation "
             "without it, dynamic NTK-aware scaling, linear position interpolation), as transformers implements it. "
             f"{', '.join(usage(kind) for kind in REMAPS)} remap the distance of a query and a key W or more apart "
             "(Self-Extend with groups of G, ReRoPE clipping at W or growing 1 / K as fast past it, attention sinks "
             "plus a window of W keys), W at most the trained length. Each recipe runs with every temperature and "
             "schedule asked for, or only with those after @ (yarn-rope:2@0.9,1,1.1); the model's own positions run "
             "them all as well. Repeat for several recipes. A recipe allows a text past the trained length (as "
             "--beyond-trained).")


def schedules_help() -> str:
    lines = [f"{name} ({info.knob}, default {info.default:g})" for name, info in SCHEDULES.items()]
    applied = [getattr(info, "applied", "") for info in SCHEDULES.values()]
    notes = " ".join(f"{name}: {text}" for name, text in zip(SCHEDULES, applied, strict=True) if text)
    return (f"add a published length schedule: {'; '.join(lines)}; 'all' for the five, 'none' for none (fit "
            f"compares with all five by default). PARAM is a number, or "
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
            source.add_argument("--builtin", choices=BUILTIN_TEXTS, help=f"a long text that ships with Python. "
                                f"long: {SOURCE}, about 17,000 tokens of the bundled model. decimal-source: "
                                f"{builtin_source('decimal-source')}, the code of its decimal module, about 52,000 "
                                "tokens of the bundled model and 55,000 of Gemma 3 270M")
    command.add_argument("--device", help="where the model runs, e.g. cuda (default: the CPU, with the fused "
                                          "kernel; elsewhere the engine takes its torch path)")
    command.add_argument("--model", default=BUNDLED, help=MODEL_HELP)
    command.add_argument("--schedule", action="append", type=schedule_arg, default=[], metavar="NAME[:PARAM]",
                         help=schedules_help())
    command.add_argument("--rope", action="append", type=rope_arg, default=[], metavar="TYPE:S|TYPE:G,W...[@T,...]",
                         help=ROPE_HELP)
    command.add_argument("--window", type=int, default=32, help="recent window in tokens (default 32)")
    command.add_argument("--max-tokens", type=int, default=max_tokens,
                         help=f"cut longer text to this many tokens (default {max_tokens})")
    command.add_argument("--beyond-trained", action="store_true",
                         help="allow a text longer than the model's trained length (refused otherwise)")
    command.add_argument("--trained-length", type=int, metavar="L",
                         help="the model's trained context length, if not its max_position_embeddings")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m model_utils", description=DESCRIPTION, epilog=EXAMPLES,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
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
    add_placement(swept, unit="pass")
    swept.add_argument("--json", metavar="OUT", required=True, help="write the sweep as JSON to OUT (- for stdout)")
    tuned = commands.add_parser("tune", help="the sweep over a corpus of documents, in this process or on Ray "
                                             "workers: the best temperature per position bucket, with intervals")
    add_common(tuned, max_tokens=16384, with_text=False)
    add_sweep_options(tuned)
    tuned.add_argument("--corpus", required=True, metavar="PATH",
                       help="a folder of .txt files, a .jsonl file with a \"text\" field per line, builtin "
                            f"(documents cut from {SOURCE} and other files that ship with Python and numpy), or "
                            "builtin-long (4 documents of 59,000+ tokens of Gemma 3 270M, for a tune past 32,768)")
    tuned.add_argument("--documents", type=int, metavar="N", help="only the first N documents of the corpus")
    tuned.add_argument("--out", required=True, metavar="DIR",
                       help="results folder: rows/ (Parquet, one file per document) and summary.json; a rerun "
                            "skips the documents already there")
    add_placement(tuned, unit="document")
    add_fit(commands)
    add_generate(commands)
    add_retrieval(commands)
    add_lmeval(commands)
    return parser


def add_lmeval(commands) -> None:
    """`lmeval`: RULER's synthetic tasks through lm-evaluation-harness, with the views inside attention."""
    evaluated = commands.add_parser("lmeval", help="RULER's needle-in-a-haystack task through lm-evaluation-harness "
                                                   "at several lengths, each temperature, schedule and recipe "
                                                   "inside attention (offline)")
    evaluated.add_argument("--tasks", nargs="+", choices=OFFLINE_TASKS, default=list(OFFLINE_TASKS), metavar="TASK",
                           help=f"RULER tasks whose haystack needs no download: {', '.join(OFFLINE_TASKS)} "
                                "(default)")
    evaluated.add_argument("--lengths", nargs="+", type=int, required=True, metavar="N",
                           help="tokens of each sample (the prompt plus room for 128 new tokens), e.g. 2048 4096 8192")
    evaluated.add_argument("--limit", type=int, required=True, metavar="N",
                           help="the first N samples of each task at each length (each a full prompt of that length)")
    evaluated.add_argument("--device", help="where the model runs, e.g. cuda (default: the CPU)")
    evaluated.add_argument("--model", default=BUNDLED, help=MODEL_HELP)
    evaluated.add_argument("--temperatures", nargs="+", type=temperature_arg, default=[1.0], metavar="T",
                           help=f"temperatures in {TEMPERATURE_RANGE} (default: 1)")
    evaluated.add_argument("--schedule", action="append", type=schedule_arg, default=[], metavar="NAME[:PARAM]",
                           help=schedules_help() + " 'trained' with yarn scales by the longest length.")
    evaluated.add_argument("--rope", action="append", type=rope_arg, default=[], metavar="TYPE:S|TYPE:G,W...[@T,...]",
                           help="a RoPE recipe: a frequency change (yarn, yarn-rope, dynamic, linear, llama3 with "
                                "S > 1) or a distance remapping (self-extend:G,W, rerope:W, ...; each generated token "
                                "is then read after the whole text, without transformers' cache), with every "
                                "temperature and schedule asked for or those after @ (yarn-rope:2@1). Repeat for "
                                "several.")
    evaluated.add_argument("--beyond-trained", action="store_true",
                           help="allow a length past the model's trained length on its own positions (a recipe "
                                "allows it for its own views)")
    evaluated.add_argument("--trained-length", type=int, metavar="L",
                           help="the model's trained context length, if not its max_position_embeddings")
    evaluated.add_argument("--threads", type=int, metavar="T",
                           help="torch threads (default: this machine's cores). 1 is faster where other work keeps "
                                "the cores busy: a step of one new token gives a second thread little to share, and "
                                "waiting for it costs more (docs/LMEVAL.md)")
    evaluated.add_argument("--cache-dir", help="where finished generations are kept, so that a stopped run resumes "
                                               "and computes none twice (default: the model cache folder's lmeval/)")
    evaluated.add_argument("--json", metavar="OUT", help="write the run as JSON to OUT (- for stdout); without it, "
                                                         "a table of the scores")


def add_retrieval(commands) -> None:
    """`retrieval`: how far back the model still uses a passage it read, by planting it and repeating it."""
    from model_utils.core.retrieval import LEAD_TOKENS, PASSAGE_TOKENS
    from model_utils.experiments.retrieval.passages import PASSAGE_NAMES

    probe = commands.add_parser("retrieval", help="how far back a model still uses what it read: a passage planted "
                                                  "D tokens before its repeat, the loss on the repeat planted and not")
    probe.add_argument("--distances", nargs="+", type=int, required=True, metavar="D",
                       help="tokens from the planted copy's start to its repeat's, shortest first (e.g. 512 1024 "
                            "2048 4096); the repeat sits at that distance plus the lead, so short ones are cheap")
    probe.add_argument("--passages", nargs="+", choices=PASSAGE_NAMES, metavar="NAME",
                       help=f"built-in passages to plant, each from another kind of text ({', '.join(PASSAGE_NAMES)}; "
                            "default: all, unless --passage-file is given)")
    probe.add_argument("--passage-file", action="append", default=[], metavar="F",
                       help="a UTF-8 text file whose first --passage-tokens tokens are planted (repeat for several)")
    probe.add_argument("--passage-tokens", type=int, default=PASSAGE_TOKENS, metavar="N",
                       help=f"tokens of each passage (default {PASSAGE_TOKENS})")
    filler = probe.add_mutually_exclusive_group()
    filler.add_argument("--filler", choices=BUILTIN_TEXTS, default="long",
                        help="the built-in text the passage is planted in (default long)")
    filler.add_argument("--filler-file", metavar="F", help="a UTF-8 text file to plant the passages in instead")
    probe.add_argument("--lead", type=int, default=LEAD_TOKENS, metavar="N",
                       help=f"filler tokens before the planted copy (default {LEAD_TOKENS})")
    probe.add_argument("--device", help="where the model runs, e.g. cuda (default: the CPU)")
    probe.add_argument("--model", default=BUNDLED, help=MODEL_HELP)
    probe.add_argument("--temperatures", nargs="+", type=temperature_arg, default=[0.7, 1.0, 1.5], metavar="T",
                       help=f"temperatures in {TEMPERATURE_RANGE}, 1 included (default: 0.7 1 1.5)")
    probe.add_argument("--schedule", action="append", type=schedule_arg, default=[], metavar="NAME[:PARAM]",
                       help=schedules_help() + " 'trained' with yarn scales by the longest probe's tokens.")
    probe.add_argument("--rope", action="append", type=rope_arg, default=[], metavar="TYPE:S|TYPE:G,W...[@T,...]",
                       help=ROPE_HELP)
    probe.add_argument("--beyond-trained", action="store_true",
                       help="allow a distance whose text runs past the model's trained length (refused otherwise)")
    probe.add_argument("--trained-length", type=int, metavar="L",
                       help="the model's trained context length, if not its max_position_embeddings")
    probe.add_argument("--recipes-past-trained", action="store_true",
                       help="past the trained length, measure only the --rope recipes and T = 1 (as "
                            "--beyond-trained); the other views stop at the longest distance whose text fits")
    probe.add_argument("--separate-passes", action="store_true",
                       help="read every text whole, one pass per passage, distance and view (the reference the "
                            "default is checked against); by default each view reads the filler and each planted "
                            "text once, up to the longest distance, and every repeat as its continuation (a view "
                            "whose numbers depend on the whole text's length, such as dynamic NTK, always reads "
                            "whole texts)")
    probe.add_argument("--refine", action="store_true",
                       help="after the grid, add distances inside each view's reach bracket (bisection) until the "
                            "two measured distances it lies between are at most 256 tokens or 3%% of the distance "
                            "apart; each is only continuations of the prefixes already read (a worker keeps each "
                            "view's prefixes while it refines)")
    probe.add_argument("--cache-dir", help="where finished passes are kept (default: the model cache folder's "
                                           "retrieval/)")
    probe.add_argument("--json", metavar="OUT", help="write the run as JSON to OUT (- for stdout); without it, a "
                                                     "table of the gain by distance and the reach per view")
    add_placement(probe, unit="pass")


def add_generate(commands) -> None:
    """`generate`: the top next tokens and a greedy continuation with T inside every layer, per temperature."""
    said = commands.add_parser("generate", help="what the model says after a text at each temperature: the top 5 "
                                                "next tokens and a greedy continuation with T in every layer")
    source = said.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="the text to continue")
    source.add_argument("--file", help="a UTF-8 text file to continue (- reads standard input)")
    said.add_argument("--device", help="where the model runs, e.g. cuda (default: the CPU)")
    said.add_argument("--model", default=BUNDLED, help=MODEL_HELP)
    said.add_argument("--temperatures", nargs="+", type=temperature_arg, default=[0.5, 1.0, 2.0], metavar="T",
                      help=f"temperatures in {TEMPERATURE_RANGE} (default: 0.5 1 2)")
    said.add_argument("--max-new-tokens", type=int, default=32, metavar="N",
                      help="greedy tokens to generate (default 32, at most 64)")
    said.add_argument("--max-tokens", type=int, default=2048, help="cut a longer text to this many tokens")
    said.add_argument("--mode", choices=MODES, default="in-model",
                      help="in-model: T inside every layer; isolated: the output is T = 1's")
    said.add_argument("--json", metavar="OUT", help="write the continuations as JSON to OUT (- for stdout)")


def add_fit(commands) -> None:
    """`fit`: the temperature that minimizes the loss past the trained length, held out over documents."""
    from model_utils.experiments.fit.families import FAMILIES
    from model_utils.verdicts.words import FIT_FAMILIES

    fitted = commands.add_parser("fit", help="fit a temperature on a corpus (a constant T on a RoPE recipe, or a "
                                             "length-dependent family), held out over documents")
    add_common(fitted, max_tokens=16384, with_text=False)
    corpus = fitted.add_mutually_exclusive_group(required=True)
    corpus.add_argument("--corpus", metavar="PATH", help="a folder of .txt files, a .jsonl file, builtin or "
                                                         "builtin-long")
    corpus.add_argument("--builtin-corpus", action="store_true", help=f"the built-in documents (from {SOURCE})")
    fitted.add_argument("--documents", type=int, metavar="N", help="only the first N documents of the corpus")
    fitted.add_argument("--family", choices=list(FAMILIES), default="constant",
                        help="; ".join(f"{name}: {FIT_FAMILIES[name]} (bounds {family.bounds[0]:g} to "
                                       f"{family.bounds[1]:g}, tolerance {family.tolerance:g})"
                                       for name, family in FAMILIES.items()))
    fitted.add_argument("--folds", type=int, default=2, metavar="K",
                        help="document i is held out in fold i %% K and scored with the value fitted on the others "
                             "(default 2)")
    fitted.add_argument("--bounds", type=float, nargs=2, metavar=("LOW", "HIGH"), help="the search interval")
    fitted.add_argument("--tolerance", type=float, metavar="X", help="stop once the minimum is located within X")
    fitted.add_argument("--max-evaluations", type=int, default=20, metavar="N",
                        help="at most N evaluations per fold (default 20)")
    fitted.add_argument("--compare-temperatures", nargs="+", type=temperature_arg, metavar="T",
                        default=[0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0],
                        help="constant temperatures on the model's own positions the fit is compared with (the best "
                             "is chosen on the training documents)")
    fitted.add_argument("--bucket-size", type=int, default=1024, metavar="K", help="as sweep and tune (default 1024)")
    fitted.add_argument("--q-start", type=int, default=1, help="first query position measured (default 1)")
    fitted.add_argument("--cache-dir", help="where finished passes are kept (default: the model cache folder's "
                                            "sweeps/, shared with sweep and tune --cache-dir)")
    fitted.add_argument("--out", required=True, metavar="DIR",
                        help="results folder: rows/ (Parquet, one file per evaluation) and fit.json; a rerun "
                             "replays the search from the rows")
    fitted.add_argument("--compare-from", metavar="DIR",
                        help="a finished tune's --out folder on the same model, documents and settings: the "
                             "comparisons its rows hold are read from them, not computed (T = 1 is computed and "
                             "checked against them)")
    add_placement(fitted, unit="document's passes")


def add_placement(command: argparse.ArgumentParser, unit: str) -> None:
    """Where a long run's work goes (sweep, tune and fit alike): this process, W Ray actors on this machine, or a
    Ray cluster; each worker takes one `unit` at a time."""
    command.add_argument("--workers", type=int, default=1, metavar="W",
                         help=f"1 (default): in this process, no Ray; W > 1: W Ray actors on this machine, each "
                              f"running one {unit} at a time")
    command.add_argument("--ray-address", metavar="HOST:PORT",
                         help="run the W workers on the Ray cluster at this address (`ray start --head` prints it)")
    command.add_argument("--threads", type=int, metavar="T",
                         help="torch threads per Ray worker (default: this machine's cores // W); on a cluster each "
                              "worker reserves T CPUs")


def add_sweep_options(command: argparse.ArgumentParser) -> None:
    """The arguments sweep and tune share: temperatures (1 included), bucket size, first query position."""
    command.add_argument("--temperatures", nargs="+", type=temperature_arg, metavar="T",
                         default=[0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5],
                         help=f"temperatures in {TEMPERATURE_RANGE}, 1 included (default: 0.7 0.8 0.9 1 1.1 1.25 1.5)")
    command.add_argument("--bucket-size", type=int, default=1024, metavar="K",
                         help="query positions per bucket (default 1024)")
    command.add_argument("--q-start", type=int, default=1, help="first query position measured (default 1)")
    command.add_argument("--cache-dir", help="where finished passes are kept (sweep: default the model cache "
                                             "folder; tune: default OUT/.passes until their document is written)")
    command.add_argument("--cut-context-stride", type=int, metavar="S",
                         help="the reference the rise past the trained length is measured against: the same "
                              "positions read with at most the trained length L before them, in windows of L tokens "
                              "S apart ((n - L) / S passes of L tokens; default L / 8; 0: none, the rise is then "
                              "against the text's earlier positions)")
    command.add_argument("--cut-context-dir", metavar="DIR",
                         help="where the reference's windows are kept (default: the model cache folder's "
                              "cut-context/)")


