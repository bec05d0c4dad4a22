"""The long runs the Makefile commits (`make sweep`, `make sweep-gemma`): each command, as `make -n` prints it, is
one the command line accepts and whose every pass the sweep's own checks accept on its model, so that hours of
passes never end at once on a refused recipe (a distance remapping on Gemma 3's RoPE per layer type did)."""

import shlex
import subprocess
from pathlib import Path

import pytest

from model_utils.cli.commands import read_text, requested_views, sweep_settings
from model_utils.cli.parser import build_parser
from model_utils.experiments.sweep import check_sweep

ROOT = Path(__file__).resolve().parents[1]


def make_command(target: str) -> list[str]:
    """The arguments after `python -m model_utils` of the target's model_utils command, as make would run it."""
    printed = subprocess.run(["make", "-n", target, "BIN=.venv/bin"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.replace("\\\n", " ")
    commands = [line for line in printed.splitlines() if "-m model_utils " in line]
    assert len(commands) == 1, printed
    words = shlex.split(commands[0])
    return words[words.index("model_utils") + 1 :]


def checked_passes(argv: list[str], loaded) -> int:
    """The number of passes of a sweep command line, after the sweep's checks (they raise on a refused pass)."""
    args = build_parser().parse_args(argv)
    assert args.model == loaded.name
    text, _ = read_text(args)
    specs = requested_views(args, loaded, text)
    check_sweep(loaded, text, specs, sweep_settings(args))
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
