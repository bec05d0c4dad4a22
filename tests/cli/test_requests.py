"""The command line parses into one typed request per command (model_utils/cli/requests.py), filled once: every
command has its request, the defaults a command adds are in it (fit's schedules, its scoring past the trained
length), a request cannot be written to, and no code assigns into argparse's Namespace."""

import ast
import dataclasses
from pathlib import Path

import pytest

from model_utils.cli import requests
from model_utils.cli.parser import build_parser
from model_utils.cli.requests import (
    FILL,
    FitCommand,
    LmEvalCommand,
    RetrievalCommand,
    SweepCommand,
    parse_request,
)
from model_utils.core.schedules import ScheduleRequest

ROOT = Path(__file__).resolve().parents[2]


def test_every_command_has_its_request():
    commands = next(action for action in build_parser()._actions if action.dest == "command")
    assert set(FILL) == set(commands.choices)


def test_a_sweep_is_filled_once_with_typed_fields():
    request = parse_request(["sweep", "--builtin", "long", "--temperatures", "0.9", "1", "--schedule", "yarn:2",
                             "--rope", "yarn-rope:2@1", "--workers", "2", "--json", "out.json"])
    assert isinstance(request, SweepCommand) and request.source.builtin == "long" and request.source.text is None
    assert request.views.temperatures == (0.9, 1.0) and request.views.schedules == (ScheduleRequest("yarn", 2.0),)
    assert [rope.temperatures for rope in request.views.ropes] == [(1.0,)]
    assert request.passes.max_tokens == 16384 and request.placing.workers == 2
    assert request.argv == "python -m model_utils sweep --builtin long --temperatures 0.9 1 --schedule yarn:2 " \
                           "--rope yarn-rope:2@1 --workers 2 --json out.json"
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.json = "other.json"


def test_fit_compares_with_the_five_schedules_and_scores_past_the_trained_length():
    request = parse_request(["fit", "--builtin-corpus", "--out", "fits"])
    assert isinstance(request, FitCommand) and request.corpus == "builtin"
    assert request.views.schedules == (ScheduleRequest("all", "trained"),) and request.passes.beyond_trained
    given = parse_request(["fit", "--corpus", "docs", "--out", "fits", "--schedule", "none"])
    assert given.views.schedules == (ScheduleRequest("none", None),) and given.corpus == "docs"


def test_retrieval_and_lmeval_keep_their_own_options_and_the_recorded_command():
    probe = parse_request(["retrieval", "--distances", "512", "1024", "--recipes-past-trained"],
                          command="python -m model_utils retrieval ...")
    assert isinstance(probe, RetrievalCommand) and probe.recipes_past_trained and not probe.beyond_trained
    assert probe.distances == (512, 1024) and probe.argv == "python -m model_utils retrieval ..."
    run = parse_request(["lmeval", "--lengths", "2048", "4096", "--limit", "3", "--threads", "1"])
    assert isinstance(run, LmEvalCommand) and run.lengths == (2048, 4096) and run.threads == 1


def namespace_writes(path: Path) -> list[str]:
    """Assignments to an attribute of a name called `args` (argparse's Namespace, as the tree names it)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        found += [f"{path.name}:{node.lineno}" for target in targets if isinstance(target, ast.Attribute)
                  and isinstance(target.value, ast.Name) and target.value.id == "args"]
    return found


def test_nothing_writes_into_the_namespace():
    files = [*(ROOT / "model_utils" / "cli").glob("*.py"), ROOT / "model_utils" / "__main__.py",
             *(ROOT / "bench").glob("*.py")]
    assert namespace_writes(Path(requests.__file__)) == []
    assert [where for path in files for where in namespace_writes(path)] == []


def test_the_check_finds_a_write(tmp_path):
    (tmp_path / "old.py").write_text("def run(args):\n    args.max_tokens = 5\n")
    assert namespace_writes(tmp_path / "old.py") == ["old.py:2"]
