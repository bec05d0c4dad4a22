"""Loading: the tiny model is reproducible, the cache is written atomically, bad names get clear errors."""

import json

import pytest
import torch

from model_utils import ModelLoadError, load_model
from model_utils.core.progress import LOAD
from model_utils.models.cache import write_atomically


def test_tiny_random_is_seeded():
    first, second = load_model("tiny-random"), load_model("tiny-random")
    for (name, a), (_, b) in zip(first.model.state_dict().items(), second.model.state_dict().items(), strict=True):
        assert torch.equal(a, b), name
    assert first.n_layers == 3 and first.n_heads == 4 and first.max_positions == 1024


def test_progress_is_reported_up_to_done():
    seen = []
    load_model("tiny-random", progress=seen.append)
    fractions = [event.fraction for event in seen]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0 and fractions == sorted(fractions)
    assert {event.stage for event in seen} == {LOAD} and seen[-1].detail == "Model tiny-random ready"


def test_atomic_write_leaves_nothing_behind_a_crash(tmp_path):
    target = tmp_path / "cache" / "model"

    def crash(folder):
        (folder / "config.json").write_text("{}")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_atomically(target, crash)
    assert not target.exists()
    assert list((tmp_path / "cache").iterdir()) == []  # no half-written staging folder either
    write_atomically(target, lambda folder: (folder / "config.json").write_text("{}"))
    assert (target / "config.json").read_text() == "{}"


def test_atomic_write_keeps_a_concurrent_winner(tmp_path):
    target = tmp_path / "model"

    def slow_writer(folder):
        (folder / "weights").write_text("mine")
        target.mkdir()  # another process finished first
        (target / "weights").write_text("theirs")

    write_atomically(target, slow_writer)
    assert (target / "weights").read_text() == "theirs"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "no model name given"),
        ("   ", "no model name given"),
        ("/no/such/folder", "does not exist"),
        ("./relative/missing", "does not exist"),
        ("/etc/hostname", "is a file, not a folder"),
    ],
)
def test_bad_names_get_a_clear_error(name, message):
    with pytest.raises(ModelLoadError, match=message):
        load_model(name)


def test_folder_that_is_not_a_model(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ModelLoadError, match=r"holds no config\.json"):
        load_model(str(tmp_path))


def test_model_that_needs_remote_code_is_refused(tmp_path):
    config = {"model_type": "my_custom_llm", "architectures": ["MyCustom"],
              "auto_map": {"AutoConfig": "configuration_custom.MyConfig",
                           "AutoModelForCausalLM": "modeling_custom.MyCustom"}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "modeling_custom.py").write_text("raise SystemExit('remote code ran')\n")
    with pytest.raises(ModelLoadError, match="trust_remote_code"):
        load_model(str(tmp_path))


def test_unknown_hub_id_fails_fast_offline(monkeypatch):
    """Offline, a hub id is looked up in the local cache only: no download attempt and its minute of retries."""
    from transformers import AutoModelForCausalLM

    calls = []
    original = AutoModelForCausalLM.from_pretrained

    def recording(name, **kwargs):
        calls.append(kwargs.get("local_files_only"))
        return original(name, **kwargs)

    monkeypatch.setattr("model_utils.models.pretrained.hub_reachable", lambda timeout=3.0: False)
    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", recording)
    with pytest.raises(ModelLoadError, match="tried hub id 'nobody/no-such-model' in the local cache; the hub is"):
        load_model("nobody/no-such-model")
    assert calls == [True]


def test_a_saved_local_model_folder_loads(tmp_path, tiny):
    tiny.model.save_pretrained(tmp_path)
    tiny.tokenizer.save_pretrained(tmp_path)
    loaded = load_model(str(tmp_path))
    assert loaded.source == str(tmp_path) and loaded.n_layers == 3
    assert loaded.config._attn_implementation == "temperature_probe"


def test_model_folder_without_weights_gets_a_clear_error(tmp_path, tiny):
    tiny.model.config.save_pretrained(tmp_path)  # config.json, and no *.safetensors or *.bin beside it
    tiny.tokenizer.save_pretrained(tmp_path)
    with pytest.raises(ModelLoadError) as caught:
        load_model(str(tmp_path))
    assert str(caught.value) == (f"cannot load model {str(tmp_path)!r} (tried the local folder {str(tmp_path)!r}): "
                                 "the folder has a config.json but no weights (no *.safetensors or *.bin file); "
                                 "copy them into it")
