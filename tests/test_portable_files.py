"""No committed file names a folder of the machine it was made on: result files record their commands with
relative paths (or ~), and the README quotes them."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A home folder (Linux root's or a user's, macOS) or this workplace's checkout folder, as an absolute path.
MACHINE_PATH = re.compile(r"(?<![\w.~/-])/(?:root|home/[\w.-]+|Users/[\w.-]+|work)/")


def committed_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / name for name in names.splitlines() if (ROOT / name).is_file()
            and not name.endswith((".parquet", ".png", ".gguf")) and name != "tests/test_portable_files.py"]


def test_no_committed_file_holds_a_machine_path():
    found = []
    for path in committed_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
                  for m in MACHINE_PATH.finditer(text)]
    assert not found, "absolute machine paths in committed files:\n" + "\n".join(found[:20])


def test_the_pattern_catches_what_it_is_for():
    for text in ("--cache-dir /root/.cache/x", "/home/ann/src", "(/Users/bob/x)", "`/work/main/assets`"):
        assert MACHINE_PATH.search(text), text
    for text in ("~/.cache/x", "assets/tune", "https://example.org/home/x/", "a/root/b"):
        assert not MACHINE_PATH.search(text), text
