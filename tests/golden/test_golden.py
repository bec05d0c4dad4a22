"""Every golden file is what the words say now: a changed word shows here as a diff of one file, to review and then
write with `make golden` (python -m tests.golden --update)."""

import pytest

from tests.golden.__main__ import path
from tests.golden.render import KINDS


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_words_are_the_golden_files(kind):
    assert path(kind).is_file(), f"tests/golden/{kind}.txt is missing: run `make golden` and review it"
    assert KINDS[kind]() == path(kind).read_text(), (
        f"the words no longer say what tests/golden/{kind}.txt holds: if the change is meant, run `make golden` and "
        "review the diff")
