"""`python -m model_utils retrieval`: the JSON a run writes, the views that read every text whole (named on stderr),
and one line with exit status 2 for every mistake a user can make (a passage longer than the distance, a distance
past the filler, an empty passage, a distance past the trained length without --beyond-trained)."""

import json

import pytest

from model_utils.__main__ import main
from model_utils.core.records.retrieval import RetrievalDocument
from model_utils.core.rope import Rope
from model_utils.core.views import View

TINY = ["retrieval", "--model", "tiny-random", "--trained-length", "512", "--passage-tokens", "16"]


def run(capsys, tmp_path, *argv):
    code = main([*TINY, "--cache-dir", str(tmp_path / "passes"), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_run_writes_its_document_and_prints_its_table(capsys, tmp_path):
    out = tmp_path / "retrieval.json"
    code, _, err = run(capsys, tmp_path, "--distances", "32", "64", "--passages", "essay", "source-code",
                       "--temperatures", "1", "1.5", "--json", str(out))
    assert code == 0, err
    document = RetrievalDocument.from_dict(json.loads(out.read_text()))
    assert [p.name for p in document.passages] == ["essay", "source-code"] and document.distances == (32, 64)
    assert len(document.points) == 2 * 2 * 2 and document.run is not None and "retrieval" in document.run.command
    assert [line for line in err.splitlines() if line.startswith("[")][-1].startswith("[16/16]")
    code, table, _ = run(capsys, tmp_path, "--distances", "32", "64", "--passages", "essay", "source-code",
                         "--temperatures", "1", "1.5")
    assert code == 0 and "T=1.5" in table and "reach" in table  # every pass came from the cache


@pytest.mark.parametrize(("argv", "message"), [
    (["--distances", "8"], "longer than the distance 8"),
    (["--distances", "600"], "past the model's trained length of 512"),
    (["--distances", "64", "128", "64"], "shortest first"),
    (["--distances", "64", "--temperatures", "2"], "include 1"),
    (["--distances", "64", "--passage-tokens", "1"], "--passage-tokens must be at least 2"),
    (["--distances", "64", "--passages", "nope"], "invalid choice"),
])
def test_a_mistake_is_one_line_and_status_2(capsys, tmp_path, argv, message):
    code, out, err = run(capsys, tmp_path, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ") and message in err


def test_a_distance_past_the_filler_is_refused(capsys, tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("A short filler. " * 8)
    code, _, err = run(capsys, tmp_path, "--distances", "400", "--filler-file", str(short))
    assert code == 2 and "needs 432 tokens of filler before the repeat and the filler has" in err
    assert len(err.strip().splitlines()) == 1


def test_an_empty_passage_file_is_refused(capsys, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n")
    code, _, err = run(capsys, tmp_path, "--distances", "64", "--passage-file", str(empty))
    assert code == 2 and "is empty" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, tmp_path, "--distances", "64", "--passage-file", str(tmp_path / "missing.txt"))
    assert code == 2 and "cannot read --passage-file" in err


def test_a_view_that_cannot_share_its_prefix_is_named_and_separate_passes_reads_every_text_whole(capsys, tmp_path):
    out = tmp_path / "retrieval.json"
    code, _, err = run(capsys, tmp_path, "--distances", "32", "64", "--passages", "essay", "--temperatures", "1",
                       "--rope", "dynamic:2@1", "--beyond-trained", "--json", str(out))
    assert code == 0, err
    assert "dynamic (s=2) + T=1 reads each text whole" in err
    document = RetrievalDocument.from_dict(json.loads(out.read_text()))
    dynamic = View(1.0, Rope("dynamic", 2.0))
    assert document.separate_views == (dynamic,)
    assert {p.view for p in document.points if p.planted.prefix_tokens is None} == {dynamic}
    code, _, err = run(capsys, tmp_path, "--distances", "32", "64", "--passages", "essay", "--temperatures", "1",
                       "--separate-passes", "--json", str(out))
    assert code == 0 and "Every view reads each text whole" in err
    assert RetrievalDocument.from_dict(json.loads(out.read_text())).separate_views == (View(1.0),)
