"""Threads: with torch set to 1 or 2 threads, a pass never runs more compute threads than that, on either path. In a
fresh process per setting, a sampler thread reads the state of every thread of the process (/proc/self/task/*/stat)
while passes run, and counts those running or ready to run ("R"), itself left out. One OpenMP pool (torch's, which
the kernel and MKL share) shows as at most the setting; a second pool would show more. The tokenizers library's own
pool (Rust, two threads here) is switched off (TOKENIZERS_PARALLELISM=false): it works before the pass, not in it,
and its threads, woken at each tokenization, show as running for a moment while using no measurable CPU time."""

import json
import os
import subprocess
import sys
from pathlib import Path
from unittest.mock import PropertyMock, patch

import pytest
import torch

from model_utils import ModelLoadError
from model_utils.engine.plugin import self_check
from model_utils.models import LoadedModel
from tests.support import ROOT

SAMPLER = r'''
import json, os, sys, threading, time
import torch
from model_utils import analyze, load_model

torch.set_num_threads(int(sys.argv[1]))
tiny = load_model("tiny-random")
text = open(sys.argv[2]).read()
found = {}
for path in ("fused", "torch"):
    os.environ["ATTN_KERNEL"] = path
    analyze(tiny, text[:300], temperatures=[1.0])  # the kernel loaded, the thread team made
    samples, done = [], threading.Event()

    def sample():
        me = str(threading.get_native_id())
        while not done.is_set():
            running = existing = 0
            for task in os.listdir("/proc/self/task"):
                try:
                    state = open(f"/proc/self/task/{task}/stat").read().rsplit(")", 1)[1].split()[0]
                except OSError:  # the thread ended meanwhile
                    continue
                if task != me:
                    existing += 1
                    running += state == "R"
            samples.append((running, existing))
            time.sleep(0.0002)  # leave the cores to the pass

    sampler = threading.Thread(target=sample)
    sampler.start()
    report = analyze(tiny, text, temperatures=[0.5, 1.0, 2.0, 4.0], window=8, max_tokens=1024)
    done.set()
    sampler.join()
    found[path] = {"kernel": report.kernel, "samples": len(samples), "most_running": max(s[0] for s in samples),
                   "threads": max(s[1] for s in samples),
                   "running": {str(k): sum(s[0] == k for s in samples) for k in range(4)}}
print(json.dumps(found))
'''


@pytest.fixture(scope="module")
def long_text(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("threads") / "text.txt"
    path.write_text("Attention weights come from a softmax over scores; a temperature divides them. " * 20)
    return path


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc (Linux)")
@pytest.mark.parametrize("threads", [1, 2])
def test_a_pass_runs_no_more_compute_threads_than_torchs_setting(long_text, threads):
    env = os.environ | {"TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SAMPLER, str(threads), str(long_text)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for path, seen in found.items():
        assert seen["kernel"] == path and seen["samples"] > 50, seen
        assert seen["most_running"] <= threads, (path, seen)
    # the count can show parallel work: with 2 threads, 2 were seen running at once
    assert max(seen["most_running"] for seen in found.values()) == threads, found


def test_the_load_check_runs_on_one_thread_and_gives_the_count_back(tiny):
    """The self-check's three tokens run on one torch thread (a second has nothing to share and, on busy cores,
    each small operation waits for it); the calling thread's own count is back afterwards, also after a refusal."""
    seen = []
    hook = tiny.model.base_model.layers[0].register_forward_pre_hook(
        lambda module, args: seen.append(torch.get_num_threads()))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        self_check(tiny)
        assert (seen, torch.get_num_threads()) == ([1, 1], 2)  # the base model's pass, then the whole model's
        more_layers = patch.object(LoadedModel, "n_layers", new_callable=PropertyMock, return_value=99)
        with pytest.raises(ModelLoadError, match="sends 3 of its 99 layers"), more_layers:
            self_check(tiny)
        assert torch.get_num_threads() == 2
    finally:
        hook.remove()
        torch.set_num_threads(before)
