"""The engine off the CPU, checked where there is no GPU: on the "meta" device (shapes and dtypes, no data), the
attention function runs the code a GPU runs. There the fused kernel is neither built nor loaded, the statistics stay
on the device through every layer (a meta tensor cannot be copied to the host, so any copy would raise), and
Probe.move_to_host copies them once per pass. Models in half precision keep their dtype in the output while the
statistics are float32 and summed in float64. bench/gpu.py, where there is no GPU: its one line, and its dry run."""

import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch

from model_utils.core.statistics import ROW_FIELDS, bucket_bounds, distance_bins
from model_utils.engine import probe as probe_module
from model_utils.engine.kernel import load_kernel
from model_utils.engine.plugin import probed_attention
from model_utils.engine.probe import Probe
from tests.support import ROOT

N, VIEWS, HEADS, KV_HEADS, DIM = 300, 2, 4, 2, 16
LAYERS = ({}, {"sliding_window": 12}, {"softcap": 10.0})  # a plain layer, a sliding-window one, a soft-capped one


@pytest.fixture
def no_kernel(monkeypatch):
    monkeypatch.setattr(probe_module, "load_kernel", lambda: pytest.fail("the kernel was loaded for a meta pass"))


def meta_pass(probe: Probe, dtype: torch.dtype) -> list[torch.Tensor]:
    """Every layer of LAYERS through probed_attention on meta tensors, as a model's forward would call it."""
    outputs = []
    for layer, settings in enumerate(LAYERS):
        module = SimpleNamespace(layer_idx=layer, num_key_value_groups=HEADS // KV_HEADS, is_causal=True)
        query = torch.empty(VIEWS, HEADS, N, DIM, device="meta", dtype=dtype)
        key = torch.empty(VIEWS, KV_HEADS, N, DIM, device="meta", dtype=dtype)
        output, _ = probed_attention(module, query, key, key, None, scaling=0.25, attention_probe=probe, **settings)
        outputs.append(output)
    return outputs


def meta_probe(**fields) -> Probe:
    return Probe(view_multipliers=torch.tensor([[0.5] * N, [2.0] * N]), window=8, q_start=8, bucket_size=64,
                 trained_length=128, **fields)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_off_the_cpu_the_statistics_stay_on_the_device_and_no_kernel_is_loaded(no_kernel, dtype):
    probe = meta_probe()
    outputs = meta_pass(probe, dtype)
    assert probe.path == "torch" and probe.kernel == probe_module.AUTO  # never resolved, so never built
    width = len(ROW_FIELDS) + len(distance_bins(N, 128)) - 1
    for layer, output in enumerate(outputs):
        assert (output.device.type, output.dtype, output.shape) == ("meta", dtype, (VIEWS, N, HEADS, DIM))
        sums, last = probe.sums[layer], probe.last_rows[layer]
        assert (sums.device.type, sums.dtype) == ("meta", torch.float64)
        assert sums.shape == (VIEWS, HEADS, len(bucket_bounds(8, N, 64)), width)
        assert (last.device.type, last.dtype, last.shape) == ("meta", torch.float32, (VIEWS, HEADS, N))


def test_a_kernel_given_to_a_pass_off_the_cpu_is_not_used(no_kernel):
    kernel = load_kernel()  # the real one: no_kernel only stops the probe from loading it
    assert kernel is not None
    probe = meta_probe(kernel=kernel)
    meta_pass(probe, torch.float32)
    assert probe.path == "torch"


def test_the_sums_and_last_rows_reach_the_host_in_one_copy_each_per_pass(no_kernel, monkeypatch):
    probe = meta_probe()
    meta_pass(probe, torch.float32)
    copies = []

    def to_host(tensor):  # what a device's copy to the host gives: the same shape and dtype, on the CPU
        copies.append(tuple(tensor.shape))
        return torch.zeros(tensor.shape, dtype=tensor.dtype)

    monkeypatch.setattr(torch.Tensor, "cpu", to_host)
    probe.move_to_host()
    assert copies == [(len(LAYERS), *probe.sums[0].shape), (len(LAYERS), *probe.last_rows[0].shape)]
    assert all(probe.sums[layer].device.type == "cpu" for layer in range(len(LAYERS)))
    probe.move_to_host()  # on the host already: nothing moves again
    assert len(copies) == 2


def test_bench_gpu_says_in_one_line_that_it_needs_a_gpu_and_dry_runs_on_the_cpus_torch_path():
    def bench_gpu(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "bench.gpu", *arguments], cwd=ROOT, capture_output=True,
                              text=True, timeout=600, check=False)

    if not torch.cuda.is_available():
        done = bench_gpu()
        assert done.returncode == 0 and done.stdout.strip().splitlines() == [
            f"bench/gpu.py needs a CUDA GPU: torch {torch.__version__} sees none here (torch.cuda.is_available() is "
            "False), so nothing was measured"]
    done = bench_gpu("--device", "cpu", "--models", "tiny-random", "--sizes", "64")
    assert done.returncode == 0, done.stderr
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| tiny-random")]
    assert [row[2:4] for row in rows] == [["cpu, float32", "fused"], ["cpu, float32", "torch"],
                                          ["cpu, bfloat16", "torch"], ["cpu, float16", "torch"]]
    assert float(rows[1][6]) < 1e-5 and float(rows[2][6]) < 1e-2  # the loss: float32, then bfloat16
