"""The long runs the Makefile commits (`make sweep`, `make sweep-gemma`, `make retrieval`, `make lmeval`): each
command, as `make -n` prints it, is one the command line accepts and whose every pass the run's own checks accept on
its model, so that hours of passes never end at once on a refused recipe (a distance remapping on Gemma 3's RoPE per
layer type did)."""

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from model_utils.cli.commands import (
    lmeval_request,
    read_text,
    requested_views,
    retrieval_request,
    retrieval_texts,
    sweep_settings,
)
from model_utils.cli.parser import build_parser
from model_utils.cli.requests import parse_request
from model_utils.core.records.retrieval import RetrievalDocument
from model_utils.experiments.retrieval.run import check_retrieval, units
from model_utils.experiments.sweep import check_sweep

ROOT = Path(__file__).resolve().parents[1]


def make_command(target: str) -> list[str]:
    """The arguments after `python -m model_utils` of the target's model_utils command, as make would run it."""
    printed = subprocess.run(["make", "-n", target, "BIN=.venv/bin"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.replace("\\\n", " ")
    commands = [line for line in printed.splitlines() if "-m model_utils " in line]
    assert len(commands) == 1, printed
    words = shlex.split(commands[0])
    words = words[words.index("model_utils") + 1 :]
    return words[: words.index(">")] if ">" in words else words  # a run in the background writes its log


def checked_passes(argv: list[str], loaded) -> int:
    """The number of passes of a sweep command line, after the sweep's checks (they raise on a refused pass)."""
    request = parse_request(argv)
    assert request.model == loaded.name
    text, _ = read_text(request.source)
    specs = requested_views(request.views, loaded, request.passes.max_tokens, text)
    check_sweep(loaded, text, specs, sweep_settings(request))
    return len(specs)


def test_make_sweep_runs_passes_the_bundled_model_takes(bundled):
    argv = make_command("sweep")
    assert argv[0] == "sweep" and "self-extend:2,1024@1" in argv and "yarn-rope:2@0.7,0.8,0.9,1,1.1,1.25" in argv
    assert checked_passes(argv, bundled) == 30  # 10 T, 5 schedules, 9 frequency-change and 6 remapped passes


@pytest.mark.models
def test_make_sweep_gemma_runs_passes_gemma_takes():
    from model_utils.engine.plugin import load_model

    argv = make_command("sweep-gemma")
    assert "--workers" in argv and not any(word.startswith(("self-extend", "rerope", "sink-window")) for word in argv)
    assert checked_passes(argv, load_model("gemma3-270m")) == 24


def checked_retrieval(argv: list[str], loaded) -> tuple[int, int]:
    """(views, distinct passes) of a retrieval command line, after the probe's own checks."""
    command = parse_request(argv)
    assert command.model == loaded.name
    filler, passages = retrieval_texts(command, loaded)
    request = retrieval_request(command, loaded, passages)
    check_retrieval(loaded, filler, passages, request)
    return len(request.views), len({unit.key for unit in units(filler, passages, request, "model")})


def test_make_retrieval_runs_passes_the_bundled_model_takes(bundled):
    argv = make_command("retrieval")
    assert argv[0] == "retrieval" and "--recipes-past-trained" in argv and "yarn-rope:2@1" in argv
    assert "--refine" in argv and "--beyond-trained" not in argv  # only the recipes and T = 1 go past 8,192
    views, passes = checked_retrieval(argv, bundled)
    # 7 T and one recipe, each planted and not, for 4 passages: the 6 T other than 1 at the 13 distances inside the
    # trained length, T = 1 and the recipe at all 18
    assert views == 8 and passes == 4 * 2 * (6 * 13 + 2 * 18)
    committed = RetrievalDocument.from_dict(json.loads((ROOT / "assets" / "retrieval" / "bundled.json").read_text()))
    assert committed.run.command == "python -m model_utils " + " ".join(argv)  # the file is what make writes


@pytest.mark.models
def test_make_retrieval_gemma_runs_passes_gemma_takes():
    from model_utils.engine.plugin import load_model

    argv = make_command("retrieval-gemma")
    assert "--workers" in argv and "yarn-rope:2@1" in argv and "--refine" in argv
    assert checked_retrieval(argv, load_model("gemma3-270m")) == (3, 4 * 11 * 2 * 3)


def test_make_lmeval_runs_offline_past_the_trained_length_and_resumes():
    printed = subprocess.run(["make", "-n", "lmeval", "BIN=.venv/bin"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout
    assert "HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 nohup" in printed
    args = build_parser().parse_args(make_command("lmeval"))
    assert (args.command, args.tasks, args.lengths) == ("lmeval", ["niah_single_1"], [12288])
    assert args.limit >= 20 and args.cache_dir == "assets/passes/lmeval-bundled"


def test_make_lmeval_runs_views_the_bundled_model_takes(bundled):
    from model_utils.experiments.lmeval import check_ruler

    request = lmeval_request(parse_request(make_command("lmeval")), bundled)
    check_ruler(bundled, request)
    from model_utils.experiments.committed import PROBES

    best = PROBES.read_first().verdict.best_temperature  # the committed probe's farthest-reaching T: 0.8
    assert [view.label for view in request.views] == ["T=1", f"T={best:g}", "yarn-rope (s=2) + T=1",
                                                      "self-extend (G=4, W=2048) + T=1"]
    inside = lmeval_request(parse_request(make_command("lmeval-inside")), bundled)
    check_ruler(bundled, inside)
    assert inside.limit * len(inside.lengths) * len(inside.views) == 54  # the committed run inside the length
