"""`python -m model_utils generate`: the continuations as JSON or a table, and one line with exit status 2 for each
request the engine refuses (empty text, too many new tokens, a prompt past the trained length)."""

import json

import pytest

from model_utils.__main__ import main
from model_utils.engine.generate import MAX_NEW_TOKENS
from tests.support import SAMPLE_TEXT


def run(capsys, *argv):
    code = main(["generate", "--model", "tiny-random", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_holds_one_continuation_per_temperature(capsys):
    code, out, err = run(capsys, "--text", SAMPLE_TEXT, "--temperatures", "0.5", "1", "4", "--max-new-tokens", "5",
                         "--json", "-")
    assert code == 0, err
    document = json.loads(out)
    assert [c["temperature"] for c in document["continuations"]] == [0.5, 1.0, 4.0]
    assert all(len(c["token_ids"]) <= 5 and len(c["top_next"]) == 5 for c in document["continuations"])
    assert document["mode"] == "in-model" and document["note"] is None


def test_without_json_a_readable_table(capsys):
    code, out, _ = run(capsys, "--text", SAMPLE_TEXT, "--max-new-tokens", "3", "--mode", "isolated")
    assert code == 0 and "T=0.5  next:" in out and "isolated mode" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--text", "   "], "the text is empty"),
    (["--text", SAMPLE_TEXT, "--max-new-tokens", str(MAX_NEW_TOKENS + 1)], f"between 1 and {MAX_NEW_TOKENS}"),
    (["--text", "word " * 1100, "--max-tokens", "4096"], "past the model's trained length"),
    (["--text", SAMPLE_TEXT, "--temperatures", "0"], "temperature"),
])
def test_a_refused_request_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
