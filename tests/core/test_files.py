"""The one atomic write: a file is replaced whole or not at all, and nothing is left beside it."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from model_utils.core.files import write_atomic


def test_a_write_replaces_the_file_and_leaves_nothing_beside_it(tmp_path):
    path = tmp_path / "result.json"
    path.write_text("old")
    write_atomic(path, "new ≠ old")  # text is written as UTF-8
    assert path.read_text(encoding="utf-8") == "new ≠ old"
    write_atomic(path, lambda staging: staging.write_bytes(b"\x00\x01"))  # or by a function given the file
    assert path.read_bytes() == b"\x00\x01"
    assert sorted(os.listdir(tmp_path)) == ["result.json"]


def test_a_failure_mid_write_keeps_the_old_file_and_no_staging_file(tmp_path):
    path = tmp_path / "result.json"
    path.write_text("old")
    seen = []

    def half_then_fail(staging):
        staging.write_text("half of the new")
        seen.append(staging)
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, half_then_fail)
    assert path.read_text() == "old"
    assert seen and seen[0].parent == tmp_path and seen[0].name.startswith(".")  # it did stage beside the file
    assert sorted(os.listdir(tmp_path)) == ["result.json"]


def test_an_interrupt_mid_write_of_a_new_file_leaves_no_file(tmp_path):
    def interrupted(staging):
        staging.write_bytes(b"part")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(tmp_path / "rows.parquet", interrupted)
    assert os.listdir(tmp_path) == []


def test_a_process_killed_mid_write_leaves_the_old_file_whole(tmp_path):
    """SIGKILL runs no cleanup: the staging file may stay (a dot name, which readers pass by), the file is whole."""
    path = tmp_path / "summary.json"
    path.write_text('{"old": true}')
    script = textwrap.dedent(f"""
        import os, signal
        from model_utils.core.files import write_atomic

        def killed(staging):
            staging.write_text('{{"new"')
            os.kill(os.getpid(), signal.SIGKILL)

        write_atomic({str(path)!r}, killed)
    """)
    process = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[2], check=False)
    assert process.returncode == -signal.SIGKILL
    assert path.read_text() == '{"old": true}'
    assert [name for name in os.listdir(tmp_path) if not name.startswith(".")] == ["summary.json"]


def test_a_symlink_stays_a_symlink(tmp_path):
    (tmp_path / "real.json").write_text("old")
    (tmp_path / "link.json").symlink_to("real.json")
    write_atomic(tmp_path / "link.json", "new")
    assert (tmp_path / "link.json").is_symlink() and (tmp_path / "real.json").read_text() == "new"
