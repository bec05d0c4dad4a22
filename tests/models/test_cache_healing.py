"""The bundled model's cache heals: damage is found, reported in one line and rebuilt; processes starting together
convert once; a full disk or an unwritable folder is one clear ModelLoadError that leaves nothing behind. Fast tests
stand the tiny model in for the GGUF's slow dequantization; slow ones use the real model in a temporary
ATTN_CACHE_DIR."""

import errno
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch
from safetensors import SafetensorError
from transformers import PreTrainedModel

from model_utils import ModelLoadError, load_model
from model_utils.models import bundled, cache
from tests.support import ROOT, SAMPLE_TEXT


def bundled_target() -> Path:
    return bundled.bundled_cache_dir(bundled.bundled_gguf_path())


def damage_messages(progress: list[str]) -> list[str]:
    return [message for message in progress if "is damaged" in message]


def leftovers(cache_root: Path) -> list[str]:
    """Everything in the cache root besides the cache, its (empty) lock file and the built attention kernels (a
    process that analysed builds one there); in the kernels folder, anything but a library."""
    target = bundled_target()
    found = sorted(p.name for p in cache_root.iterdir()
                   if p.name not in (target.name, f"{target.name}.lock", "kernels"))
    kernels = cache_root / "kernels"
    if kernels.is_dir():
        found += sorted(f"kernels/{p.name}" for p in kernels.iterdir() if p.suffix != ".so")
    return found


@pytest.fixture
def tiny_gguf(monkeypatch, tmp_path, tiny):
    """An empty ATTN_CACHE_DIR, and the tiny model standing in for the dequantized GGUF; counts conversions."""
    calls = []

    def dequantize(gguf_path, progress):
        calls.append(gguf_path)
        return tiny.model, tiny.tokenizer

    monkeypatch.setenv("ATTN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(bundled, "_dequantize_bundled", dequantize)
    return calls


@pytest.fixture
def hashes(monkeypatch):
    """The files whose sha256 the loader computes."""
    hashed = []
    original = cache._sha256

    def recording(path):
        hashed.append(Path(path).name)
        return original(path)

    monkeypatch.setattr(cache, "_sha256", recording)
    return hashed


@pytest.fixture
def mount_tmpfs(tmp_path):
    """Mount a small tmpfs (needs root); skips where mounting is impossible (the simulated tests still run)."""
    mounted = []

    def mount(size: str, read_only: bool = False) -> Path:
        point = tmp_path / f"mount{len(mounted)}"
        point.mkdir()
        options = f"size={size}" + (",ro" if read_only else "")
        if shutil.which("mount") is None:
            pytest.skip("no mount command here")
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")
        mounted.append(point)
        return point

    yield mount
    for point in mounted:
        subprocess.run(["umount", "-l", str(point)], check=False)


def test_a_warm_load_hashes_nothing_until_a_file_changes(tiny_gguf, hashes):
    assert load_model("bundled").source == "gguf" and len(tiny_gguf) == 1
    hashes.clear()  # the conversion hashed what it wrote
    assert load_model("bundled").source == "cache"
    assert hashes == []  # sizes and stat fingerprints only
    os.utime(bundled_target() / "model.safetensors")  # same bytes, new mtime: checked again, found good
    assert load_model("bundled").source == "cache"
    assert "model.safetensors" in hashes and len(tiny_gguf) == 1
    hashes.clear()
    assert load_model("bundled").source == "cache" and hashes == []  # the good check was recorded


def test_a_rewrite_that_restores_the_mtime_is_still_caught(tiny_gguf, caplog):
    load_model("bundled")
    weights = bundled_target() / "model.safetensors"
    before = weights.stat()
    with open(weights, "r+b") as handle:  # same size, different bytes, and the old mtime put back
        handle.seek(before.st_size // 2)
        handle.write(b"\x00\xff" * 8)
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    progress = []
    with caplog.at_level(logging.WARNING, logger="model_utils.models.bundled"):
        loaded = load_model("bundled", progress=lambda event: progress.append(event.detail))
    assert loaded.source == "gguf" and len(tiny_gguf) == 2
    [message] = damage_messages(progress)
    assert "model.safetensors does not match the sha256" in message and "rebuilding it" in message
    assert [record.getMessage() for record in caplog.records] == [message]


def test_leftovers_of_a_killed_conversion_are_cleared(tiny_gguf, tmp_path):
    target = bundled_target()
    stale = tmp_path / "cache" / f".partial-{target.name}-killed"
    stale.mkdir(parents=True)
    (stale / "model.safetensors").write_bytes(b"half")
    assert load_model("bundled").source == "gguf"
    assert leftovers(tmp_path / "cache") == []


def test_three_threads_on_an_empty_cache_convert_once(monkeypatch, tmp_path, tiny):
    """Also: transformers' loading patches shared functions while it runs; loads in threads must not leave them
    patched (else every later load has an untied, uninitialised lm_head)."""
    shared = (PreTrainedModel.tie_weights, PreTrainedModel.init_weights, torch.nn.init.normal_)
    calls = []

    def slow_dequantize(gguf_path, progress):
        calls.append(gguf_path)
        time.sleep(1.0)  # long enough that the other threads find the lock taken
        return tiny.model, tiny.tokenizer

    monkeypatch.setenv("ATTN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(bundled, "_dequantize_bundled", slow_dequantize)
    barrier, results = threading.Barrier(3), []

    def worker():
        barrier.wait()
        results.append(load_model("bundled"))

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(calls) == 1
    assert sorted(loaded.source for loaded in results) == ["cache", "cache", "gguf"]
    weights = [loaded.model.lm_head.weight for loaded in results]
    assert all(torch.equal(weights[0], other) for other in weights[1:])
    assert (PreTrainedModel.tie_weights, PreTrainedModel.init_weights, torch.nn.init.normal_) == shared


def test_a_full_disk_on_a_real_tmpfs(tiny_gguf, monkeypatch, mount_tmpfs):
    disk = mount_tmpfs("256k")  # the tiny model's weights alone are about 580 kB
    monkeypatch.setenv("ATTN_CACHE_DIR", str(disk))
    with pytest.raises(ModelLoadError, match=r"No space left on device.*free about 550 MB") as caught:
        load_model("bundled")
    assert "\n" not in str(caught.value) and str(disk) in str(caught.value)
    assert leftovers(disk) == [] and not bundled_target().exists()
    assert sum(path.stat().st_size for path in disk.iterdir()) == 0  # at most the empty lock file


def test_a_full_disk_simulated(tiny_gguf, monkeypatch, tmp_path):
    """Where no tmpfs can be mounted: the weights writer fails half-way as safetensors does on a full disk."""

    def full_disk(model, filename):
        Path(filename).write_bytes(b"\x00" * 1000)
        raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    monkeypatch.setattr(bundled, "save_weights", full_disk)
    with pytest.raises(ModelLoadError, match="No space left on device; free about 550 MB"):
        load_model("bundled")
    assert leftovers(tmp_path / "cache") == [] and not bundled_target().exists()


def test_a_disk_quota_names_the_os_reason_and_file(tiny_gguf, monkeypatch, tmp_path):
    def quota(model, filename):
        raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT), filename)

    monkeypatch.setattr(bundled, "save_weights", quota)
    with pytest.raises(ModelLoadError, match=r"Disk quota exceeded: .*model\.safetensors; free about 550 MB"):
        load_model("bundled")
    assert leftovers(tmp_path / "cache") == []


def test_a_cache_folder_below_a_regular_file(tiny_gguf, monkeypatch, tmp_path):
    """Root ignores permission bits, so chmod cannot make a folder unwritable in these tests; a path through a
    regular file fails for every user (ENOTDIR)."""
    (tmp_path / "a-file").write_text("not a folder")
    monkeypatch.setenv("ATTN_CACHE_DIR", str(tmp_path / "a-file" / "cache"))
    with pytest.raises(ModelLoadError, match=r"Not a directory.*set ATTN_CACHE_DIR to a folder this user can write"):
        load_model("bundled")
    assert tiny_gguf == []  # failed before the slow dequantization
    assert (tmp_path / "a-file").read_text() == "not a folder"


def test_a_read_only_cache_folder(tiny_gguf, monkeypatch, mount_tmpfs):
    """A read-only mount refuses writes even to root (EROFS)."""
    monkeypatch.setenv("ATTN_CACHE_DIR", str(mount_tmpfs("1m", read_only=True)))
    with pytest.raises(ModelLoadError, match=r"Read-only file system.*set ATTN_CACHE_DIR to a folder this user"):
        load_model("bundled")
    assert tiny_gguf == []


def test_a_good_cache_on_a_read_only_disk_still_loads(tiny_gguf, hashes, monkeypatch, mount_tmpfs):
    disk = mount_tmpfs("4m")
    monkeypatch.setenv("ATTN_CACHE_DIR", str(disk))
    load_model("bundled")
    os.utime(bundled_target() / "config.json")  # forces a hash check whose result cannot be recorded
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    hashes.clear()
    for _ in range(2):
        assert load_model("bundled").source == "cache"
    assert hashes.count("config.json") == 2 and len(tiny_gguf) == 1  # checked each time, never rebuilt


# --- the real bundled model -------------------------------------------------------------------------------------

def logits(loaded) -> torch.Tensor:
    ids = loaded.tokenizer(SAMPLE_TEXT[:120], return_tensors="pt").input_ids
    with torch.no_grad():
        return loaded.model(ids).logits


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """One real conversion per module into a temporary cache: its folder, its logits, and the dequantized GGUF
    (kept, so a rebuild after damage repeats the write, check and load but not the 15 s dequantization)."""
    root = tmp_path_factory.mktemp("bundled-cache")
    dequantized = []
    real = bundled._dequantize_bundled

    def dequantize_once(gguf_path, progress):
        if not dequantized:
            dequantized.append(real(gguf_path, progress))
        return dequantized[0]

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ATTN_CACHE_DIR", str(root))
        patch.setattr(bundled, "_dequantize_bundled", dequantize_once)
        loaded = load_model("bundled")
        assert loaded.source == "gguf"
        yield {"root": root, "logits": logits(loaded), "dequantize": dequantize_once}
    shutil.rmtree(root, ignore_errors=True)  # 540 MB: not kept among pytest's last three runs


def truncate(folder: Path) -> str:
    size = (folder / "model.safetensors").stat().st_size
    os.truncate(folder / "model.safetensors", size // 2)
    return f"model.safetensors is {size // 2:,} bytes, expected {size:,}"


def flip_bytes(folder: Path) -> str:
    with open(folder / "model.safetensors", "r+b") as handle:
        handle.seek(handle.seek(0, os.SEEK_END) // 2)
        middle = handle.read(64)
        handle.seek(-len(middle), os.SEEK_CUR)
        handle.write(bytes(255 - byte for byte in middle))
    return "model.safetensors does not match the sha256 recorded when it was written"


def delete(name: str):
    def damage(folder: Path) -> str:
        (folder / name).unlink()
        if name == cache.MANIFEST:
            return f"it has no {name}, so what it holds cannot be checked"
        return f"{name} is missing"
    return damage


@pytest.mark.slow
@pytest.mark.parametrize("damage", [truncate, flip_bytes, delete("tokenizer.json"), delete("config.json"),
                                    delete(cache.MANIFEST)],
                         ids=["truncated", "flipped-bytes", "no-tokenizer", "no-config", "no-manifest"])
def test_a_damaged_bundled_cache_is_rebuilt(converted, damage, monkeypatch, tmp_path, caplog):
    cache_root = tmp_path / "cache"
    shutil.copytree(converted["root"], cache_root)
    monkeypatch.setenv("ATTN_CACHE_DIR", str(cache_root))
    monkeypatch.setattr(bundled, "_dequantize_bundled", converted["dequantize"])
    reason = damage(bundled_target())
    progress = []
    try:
        with caplog.at_level(logging.WARNING, logger="model_utils.models.bundled"):
            loaded = load_model("bundled", progress=lambda event: progress.append(event.detail))
        assert damage_messages(progress) == [f"the converted model cache at {bundled_target()} is damaged "
                                             f"({reason}); rebuilding it from the bundled GGUF"]
        assert [record.getMessage() for record in caplog.records] == damage_messages(progress)
        assert loaded.source == "gguf"
        assert torch.equal(logits(loaded), converted["logits"])
        assert cache.cache_problem(bundled_target()) is None and leftovers(cache_root) == []
    finally:
        shutil.rmtree(cache_root, ignore_errors=True)


PROCESS = """
import pathlib, sys, time
from model_utils import load_model
ready = pathlib.Path(sys.argv[1])
(ready / sys.argv[2]).touch()
while len(list(ready.iterdir())) < 3:  # start loading together, once every process has imported torch
    time.sleep(0.01)
loaded = load_model("bundled", progress=lambda event: print("progress:", event.detail, flush=True))
print("result:", loaded.source, repr(loaded.model.model.embed_tokens.weight.double().sum().item()))
"""


@pytest.mark.slow
def test_three_processes_on_an_empty_cache_convert_once(tmp_path, monkeypatch):
    ready = tmp_path / "ready"
    ready.mkdir()
    environment = os.environ | {"ATTN_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    processes = [subprocess.Popen([sys.executable, "-c", PROCESS, str(ready), str(index)], cwd=ROOT,
                                  env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for index in range(3)]
    outputs = [process.communicate(timeout=600) for process in processes]
    try:
        assert [process.returncode for process in processes] == [0, 0, 0], [err[-2000:] for _, err in outputs]
        results = [line.split()[1:] for out, _ in outputs for line in out.splitlines() if line.startswith("result:")]
        assert sorted(source for source, _ in results) == ["cache", "cache", "gguf"]
        assert len({weight_sum for _, weight_sum in results}) == 1
        lines = [line for out, _ in outputs for line in out.splitlines()]
        assert sum("Dequantizing the weights of" in line for line in lines) == 1  # one conversion
        assert sum("waiting for it" in line for line in lines) == 2  # the lock, not luck, kept them apart
        monkeypatch.setenv("ATTN_CACHE_DIR", str(tmp_path / "cache"))
        assert cache.cache_problem(bundled_target()) is None and leftovers(tmp_path / "cache") == []
    finally:
        shutil.rmtree(tmp_path / "cache", ignore_errors=True)
