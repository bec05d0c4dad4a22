"""`python -m tests.golden --update` (`make golden`): write every golden file again from the words package; without
--update, say which files differ."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.golden.render import KINDS

FOLDER = Path(__file__).resolve().parent


def path(kind: str) -> Path:
    return FOLDER / f"{kind}.txt"


def main(argv: list[str]) -> int:
    update = "--update" in argv
    differ = []
    for kind, render in KINDS.items():
        text = render()
        if not path(kind).is_file() or path(kind).read_text() != text:
            differ.append(kind)
            if update:
                path(kind).write_text(text)
    verb = "written again" if update else "differ (python -m tests.golden --update writes them)"
    print(f"{len(differ)} of {len(KINDS)} golden files {verb}: {', '.join(differ) or 'none'}")
    return 0 if update or not differ else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
