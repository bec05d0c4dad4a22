"""Commands recorded in result files name no path of the machine that ran them."""

from pathlib import Path

from model_utils.core.paths import portable_argument, portable_command

HOME = Path("/", "home", "someone")  # built, not written: no committed file holds a machine path
REPO = HOME / "src" / "explorer"


def test_paths_inside_the_repository_become_relative():
    assert portable_argument(str(REPO / "assets" / "tune"), cwd=REPO, home=HOME) == "assets/tune"
    assert portable_argument(f"--out={REPO}/runs/x", cwd=REPO, home=HOME) == "--out=runs/x"


def test_paths_in_the_home_folder_start_with_a_tilde():
    cache = str(HOME / ".cache" / "attention-temperature-explorer" / "sweeps")
    assert portable_argument(cache, cwd=REPO, home=HOME) == "~/.cache/attention-temperature-explorer/sweeps"


def test_other_arguments_are_kept():
    for argument in ("--temperatures", "0.9", "yarn-rope:2@0.9,1", "relative/path", "/srv/shared/cache"):
        assert portable_argument(argument, cwd=REPO, home=HOME) == argument


def test_a_whole_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    command = portable_command(["tune", "--out", str(tmp_path / "out"), "--cache-dir", str(Path.home() / ".c")])
    assert command == "python -m model_utils tune --out out --cache-dir ~/.c"
