"""The pictures README.md and docs/ embed cannot go stale: each is one `make screenshots` takes, and its manifest
hash (bench/screenshots.py: the code that draws its page and the committed data the page draws) matches the tree."""

import json
import re

import pytest

from bench.screenshots import MANIFEST, PICTURES, data, fingerprint, sources
from tests.support import ROOT

EMBEDDED = sorted({match for doc in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
                   for match in re.findall(r"assets/screenshots/([\w.-]+\.png)", doc.read_text(encoding="utf-8"))})


def test_every_embedded_picture_is_one_make_screenshots_takes_and_is_there():
    taken = {picture.name for picture in PICTURES}
    assert EMBEDDED and set(EMBEDDED) <= taken, sorted(set(EMBEDDED) - taken)
    assert all((ROOT / "assets" / "screenshots" / name).is_file() for name in EMBEDDED)
    assert "6-retrieval.png" in EMBEDDED  # the Retrieval page has its picture


@pytest.mark.parametrize("picture", PICTURES, ids=[picture.name for picture in PICTURES])
def test_each_picture_was_taken_from_the_code_and_data_of_this_tree(picture):
    manifest = json.loads(MANIFEST.read_text())
    assert picture.name in manifest, f"{picture.name} was never taken: run `make screenshots`"
    assert manifest[picture.name]["hash"] == fingerprint(picture), (
        f"{picture.name} is older than its page's code or data: run `make screenshots SCREENSHOTS_ARGS=--stale` "
        "and look at the picture before committing it")


def test_the_hash_covers_the_page_its_words_and_its_data():
    retrieval = [path.relative_to(ROOT).as_posix() for path in sources("retrieval")]
    assert {"app.py", "components/pages/retrieval.py", "model_utils/verdicts/words/__init__.py",
            "model_utils/verdicts/words/retrieval.py"} <= set(retrieval)  # the words package, through its star imports
    assert any(path.name == "bundled.json" for path in data("retrieval"))
    maps = [path.relative_to(ROOT).as_posix() for path in sources("attention_maps")]
    assert "model_utils/engine/analyze.py" in maps  # a page that runs the model draws the engine's numbers
    assert any(path.name == "short.txt" for path in data("attention_maps"))
