"""The command line: the JSON report, and one clear line with exit status 2 for every user mistake."""

import concurrent.futures
import json
import os
import re
import stat
import subprocess
import sys

import pytest

from model_utils.__main__ import main
from model_utils.core.records.sweep import FORMAT, SweepDocument
from tests.support import SAMPLE_TEXT


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_to_stdout_is_the_report(capsys):
    code, out, err = run(capsys, "analyze", "--model", "tiny-random", "--text", SAMPLE_TEXT,
                         "--temperatures", "0.5", "1", "2", "--window", "16", "--json", "-")
    assert code == 0, err
    document = json.loads(out)
    assert document["model"] == "tiny-random" and document["mode"] == "in-model" and document["window"] == 16
    assert [r["temperature"] for r in document["results"]] == [0.5, 1.0, 2.0]
    assert len(document["results"][0]["next_token"]) == 5
    assert document["load_seconds"] >= 0


def test_json_file_schedule_layers_and_table(capsys, tmp_path):
    out_file = tmp_path / "report.json"
    code, _, err = run(capsys, "analyze", "--model", "tiny-random", "--text", SAMPLE_TEXT, "--temperatures", "1",
                       "--schedule", "qwen-logn:64", "--layers", "1", "2", "--json", str(out_file))
    assert code == 0, err
    document = json.loads(out_file.read_text())
    assert document["layers"] == [1, 2] and document["results"][1]["schedule"] == "qwen-logn (train_length=64)"
    code, out, _ = run(capsys, "analyze", "--model", "tiny-random", "--text", SAMPLE_TEXT, "--mode", "isolated")
    assert code == 0 and "T=0.5" in out and "loss" in out  # no --json: a readable table


def test_the_table_adds_the_remapped_untrained_mass_only_under_a_remapping(capsys, tmp_path):
    text_file = tmp_path / "long.txt"
    text_file.write_text(SAMPLE_TEXT * 40)
    argv = ["analyze", "--model", "tiny-random", "--file", str(text_file), "--max-tokens", "300", "--temperatures",
            "1", "--trained-length", "128", "--beyond-trained"]
    code, out, err = run(capsys, *argv, "--rope", "self-extend:2,32")
    assert code == 0, err
    header, plain, remapped = out.splitlines()[1:4]
    assert "eff untr" in header
    numbers = [[float(value) for value in re.findall(r"\d+\.\d{3}\b", line)[:8]] for line in (plain, remapped)]
    assert numbers[1][6] > 0.05 and numbers[1][7] < numbers[1][6]  # the remapping gives far keys trained distances
    assert numbers[0][6] == numbers[0][7]  # on the model's own positions both are the same mass
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "eff untr" not in out


def test_a_json_file_is_replaced_whole_and_a_pipe_is_written_to(capsys, tmp_path):
    out_file = tmp_path / "report.json"
    out_file.write_text("the previous report")
    argv = ["analyze", "--model", "tiny-random", "--text", SAMPLE_TEXT, "--temperatures", "1", "--json"]
    assert run(capsys, *argv, str(out_file))[0] == 0
    assert json.loads(out_file.read_text())["model"] == "tiny-random"
    assert [path.name for path in tmp_path.iterdir()] == ["report.json"]  # no staging file left beside it
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    keeper = os.open(pipe, os.O_RDWR)  # a writer of our own: opening the reader does not block, closing ends it
    with open(pipe, encoding="utf-8") as reading, concurrent.futures.ThreadPoolExecutor(1) as reader:
        received = reader.submit(reading.read)
        try:
            code = run(capsys, *argv, str(pipe))[0]
        finally:
            os.close(keeper)
        assert code == 0 and json.loads(received.result(timeout=60))["model"] == "tiny-random"
    assert stat.S_ISFIFO(pipe.stat().st_mode)  # written to, not replaced by a file


def test_file_input_and_truncation(capsys, tmp_path):
    text_file = tmp_path / "long.txt"
    text_file.write_text(SAMPLE_TEXT * 20, encoding="utf-8")
    code, out, _ = run(capsys, "analyze", "--model", "tiny-random", "--file", str(text_file), "--max-tokens", "300",
                       "--temperatures", "1", "--json", "-")
    document = json.loads(out)
    assert code == 0 and document["truncated"] is True and document["n_tokens"] == 300


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--text", ""], "empty"),
        (["--text", "   "], "empty"),
        (["--temperatures", "0"], "[0.001, 100]"),
        (["--temperatures", "-1"], "[0.001, 100]"),
        (["--temperatures", "nan"], "[0.001, 100]"),
        (["--temperatures", "inf"], "[0.001, 100]"),
        (["--temperatures", "101"], "[0.001, 100]"),
        (["--temperatures", "abc"], "not a number"),
        (["--temperatures", "1", "1"], "twice"),
        (["--window", "0"], "window must be >= 1"),
        (["--window", "x"], "invalid int value"),
        (["--file", "/no/such/file.txt"], "cannot read --file"),
        (["--file", "/"], "cannot read --file"),
        (["--model", "/no/such/model"], "does not exist"),
        (["--model", "/etc/hostname"], "is a file, not a folder"),
        (["--model", "tiny-random", "--layers", "7"], "layer must be between 0 and 2"),
        (["--schedule", "bogus"], "unknown schedule"),
        (["--mode", "both"], "invalid choice"),
        (["--json", "/no/such/dir/out.json"], "cannot write --json"),
        (["--device", "nosuch"], "cannot put model 'tiny-random' on device 'nosuch'"),
        (["--device", "cuda"], "cannot put model 'tiny-random' on device 'cuda'"),  # this torch is a CPU build
        ([], "one of the arguments --text --file is required"),
    ],
)
def test_user_mistakes_get_one_line_and_status_2(capsys, argv, message):
    if "--text" not in argv and "--file" not in argv and argv:
        argv = [*argv, "--text", SAMPLE_TEXT]
    if "--model" not in argv:
        argv = [*argv, "--model", "tiny-random"]
    code, out, err = run(capsys, "analyze", *argv)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert out == ""


def test_the_real_entry_point_exits_2_without_a_traceback():
    process = subprocess.run([sys.executable, "-m", "model_utils", "analyze", "--model", "tiny-random", "--text", " "],
                             capture_output=True, text=True, timeout=120)
    assert process.returncode == 2
    assert process.stderr.strip() == "error: the text is empty; type or paste some text to analyse"
    process = subprocess.run([sys.executable, "-m", "model_utils", "analyze", "--model", "tiny-random", "--text",
                              "hello world", "--temperatures", "1", "--json", "-"], capture_output=True, text=True,
                             timeout=120)
    assert process.returncode == 0 and json.loads(process.stdout)["n_tokens"] == 11


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--temperatures", "1e9"], "[0.001, 100]"),
        (["--temperatures", *[str(t) for t in range(1, 10)]], "at most 8"),
        (["--window", "-1"], "window must be >= 1"),
        (["--layers", "-1"], "layer must be between 0 and 2"),
        (["--layers", "99"], "layer must be between 0 and 2"),
        (["--max-tokens", "1"], "max_tokens must be between 2 and 65536"),
        (["--max-tokens", "0"], "max_tokens must be between 2 and 65536"),
    ],
)
def test_more_mistakes_get_one_line_and_status_2(capsys, argv, message):
    code, out, err = run(capsys, "analyze", "--model", "tiny-random", "--text", SAMPLE_TEXT, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and out == ""


def test_model_folders_that_cannot_load_get_one_line(capsys, tmp_path):
    not_a_model = tmp_path / "notes"
    not_a_model.mkdir()
    (not_a_model / "readme.txt").write_text("hello")
    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "config.json").write_text(json.dumps({"model_type": "custom_llm", "auto_map": {
        "AutoConfig": "configuration_custom.CustomConfig", "AutoModelForCausalLM": "modeling_custom.Custom"}}))
    for folder, message in ((not_a_model, "holds no config.json"), (remote, "trust_remote_code")):
        code, out, err = run(capsys, "analyze", "--model", str(folder), "--text", SAMPLE_TEXT)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and out == ""


def test_a_megabyte_of_text_is_cut_to_the_token_limit(capsys, tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("All work and no play makes a dull model. " * 25_000, encoding="utf-8")  # ~1 MB
    assert big.stat().st_size > 1_000_000
    code, out, _ = run(capsys, "analyze", "--model", "tiny-random", "--file", str(big), "--max-tokens", "512",
                       "--temperatures", "1", "--json", "-")
    document = json.loads(out)
    assert code == 0 and document["truncated"] is True and document["n_tokens"] == 512


def test_odd_text_stays_literal_in_the_report(capsys):
    text = "emoji 🙂, CJK 注意力, RTL שלום, controls \x07\x1b, <script>alert(1)</script><img src=x onerror=alert(2)>"
    code, out, _ = run(capsys, "analyze", "--model", "tiny-random", "--text", text, "--temperatures", "0.001", "100",
                       "--json", "-")
    document = json.loads(out)
    assert code == 0
    joined = "".join(document["tokens"])
    assert "<script>alert(1)</script><img src=x onerror=alert(2)>" in joined  # data, not markup
    assert all(isinstance(result["loss"], float) for result in document["results"])  # finite: JSON has no NaN


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--bucket-size", "0"], "bucket_size must be >= 1, got 0"),
        (["--max-tokens", "2000"], "past the model's trained length of 1,024"),  # without --beyond-trained
        (["--max-tokens", "100000", "--beyond-trained"], "max_tokens must be between 2 and 65536"),
        (["--temperatures", "0.8", "1.2"], "include 1 in the temperatures"),
        (["--max-tokens", "1000", "--schedule", "yarn:trained"], "yarn:trained scales the context by tokens / trained"),
        (["--q-start", "0"], "q_start must be >= 1"),
    ],
)
def test_sweep_mistakes_get_one_line_and_status_2(capsys, tmp_path, argv, message):
    code, out, err = run(capsys, "sweep", "--model", "tiny-random", "--builtin", "long", "--json",
                         str(tmp_path / "sweep.json"), "--cache-dir", str(tmp_path / "cache"), *argv)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "sweep.json").exists()


def test_sweep_writes_the_documented_json(capsys, tmp_path):
    code, _, err = run(capsys, "sweep", "--model", "tiny-random", "--builtin", "long", "--max-tokens", "1500",
                       "--beyond-trained", "--bucket-size", "512", "--temperatures", "0.8", "1", "1.25",
                       "--schedule", "qwen-logn:trained", "--json", str(tmp_path / "sweep.json"), "--cache-dir",
                       str(tmp_path / "cache"))
    assert code == 0, err
    written = json.loads((tmp_path / "sweep.json").read_text())
    assert written["format"] == FORMAT
    document = SweepDocument.from_dict(written)
    assert document.buckets == ((1, 512), (512, 1024), (1024, 1500)) and document.trained_length == 1024
    assert document.beyond_trained and document.q_start == 1 and document.n_tokens == 1500
    labels = [result.label for result in document.results]
    assert labels == ["T=0.8", "T=1", "T=1.25", "qwen-logn (train_length=1024)"]
    result = document.results[0]
    assert result.temperature == 0.8 and result.schedule is None and result.rope is None
    assert len(result.nll) == 3 and result.heads["entropy"].shape == (3, 3, 4)  # buckets, layers, heads
    assert result.distance_profile.shape[1] == len(document.distance_bins) - 1
    assert [entry.bucket for entry in document.best] == list(document.buckets)
    for entry in document.best:
        assert entry.nll <= entry.nll_at_1 and entry.temperature in (0.8, 1.0, 1.25)
        low, high = entry.temperature_interval
        assert low <= entry.temperature <= high or low <= high
    assert document.run.command.startswith("python -m model_utils ") and document.run.wall_seconds >= 0
    again, _, _ = run(capsys, "sweep", "--model", "tiny-random", "--builtin", "long", "--max-tokens", "1500",
                      "--beyond-trained", "--bucket-size", "512", "--temperatures", "0.8", "1", "1.25",
                      "--schedule", "qwen-logn:trained", "--json", str(tmp_path / "again.json"), "--cache-dir",
                      str(tmp_path / "cache"))
    repeated = json.loads((tmp_path / "again.json").read_text())
    assert again == 0 and {k: v for k, v in repeated.items() if k != "run"} == {
        k: v for k, v in written.items() if k != "run"}  # the cached rerun reproduces it


@pytest.mark.parametrize("module", ["model_utils.__main__", "components.serving.cache"])  # the command line, the server
def test_heavy_imports_end_with_the_collector_on_and_their_objects_frozen(module):
    """torch and transformers are imported with the collector off (model_utils.imports_without_collection): a fresh
    process must end the import with the collector back on and the imported objects frozen out of its scans (the
    server runs a full collection after every script run)."""
    probe = f"import gc, {module}; print(gc.isenabled(), gc.get_freeze_count() > 100_000)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True"]


def test_sweep_names_the_builtin_text_it_ran_on(capsys, tmp_path):
    code, _, err = run(capsys, "sweep", "--model", "tiny-random", "--builtin", "decimal-source", "--max-tokens",
                       "300", "--bucket-size", "128", "--temperatures", "1", "1.1", "--json",
                       str(tmp_path / "sweep.json"), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    written = json.loads((tmp_path / "sweep.json").read_text())
    assert written["text_source"] == "Lib/_pydecimal.py (PSF License), built-in text 'decimal-source'"
    assert written["n_tokens"] == 300


def test_the_lmeval_table_and_progress_name_each_view_by_its_label(capsys):
    from pathlib import Path

    from model_utils.cli.commands import lmeval_progress, lmeval_table
    from model_utils.core.records.lmeval import LmEvalDocument

    path = Path(__file__).resolve().parents[2] / "assets" / "lmeval" / "bundled-niah-single-1.json"
    document = LmEvalDocument.from_dict(json.loads(path.read_text()))
    rows = lmeval_table(document).splitlines()[2:]
    assert [row.split()[2] for row in rows] == [score.view.label.split()[0] for score in document.scores]
    lmeval_progress()(document.scores[0], 1, len(document.scores))
    assert f"tokens, {document.scores[0].view.label}: " in capsys.readouterr().err
