"""The sweep on workers (sweep --workers/--ray-address) on the tiny model: its JSON is the in-process sweep's but for
where each pass ran (its seconds and peak memory); the driver's pass cache gets every pass, including those a
cluster's worker kept on its own disk; a rerun computes nothing that finished, and an interrupted run resumes at the
passes it had not finished; a worker killed mid-pass has its pass run again; a recipe the model cannot take is one
line and exit 2 before any worker starts.

The Ray tests start one local Ray for the module (ray.init takes seconds), as test_tune.py does, and are slow."""

import contextlib
import json
import os
import re
import signal
import threading
import time

import psutil
import pytest

from model_utils.__main__ import main
from model_utils.core.rope import Rope
from model_utils.core.schedules import Schedule
from model_utils.core.views import View, as_view
from model_utils.experiments import sweep_workers
from model_utils.experiments.runs import pool as pool_module
from model_utils.experiments.runs.cluster import start_ray
from model_utils.experiments.runs.pool import Placement, Pool
from model_utils.experiments.runs.worker import DocumentWorker, WorkerSettings
from model_utils.experiments.sweep import SweepSettings, sweep
from model_utils.experiments.sweep_workers import sweep_on_workers
from model_utils.experiments.texts import builtin_text

pytestmark = pytest.mark.usefixtures("one_torch_thread")

# Past the tiny model's trained length (1,024), so the schedules and the recipe act; 6 passes, 3 buckets.
SETTINGS = SweepSettings(max_tokens=1500, bucket_size=512, beyond_trained=True)
SPECS = [0.8, 1.0, 1.25, Schedule("qwen-logn", 1024.0), Schedule("logn", 1024.0), View(1.0, Rope("yarn", 2))]
LABELS = [as_view(spec).label for spec in SPECS]
WHERE_IT_RAN = ("seconds", "peak_rss_gb")  # each pass's compute time and its process's peak; the document's sum, max
CLI_SWEEP = ["sweep", "--model", "tiny-random", "--builtin", "long", "--max-tokens", "1500", "--beyond-trained",
             "--bucket-size", "512", "--temperatures", "0.8", "1", "1.25", "--schedule", "qwen-logn:trained",
             "--schedule", "logn:trained", "--rope", "yarn:2@1"]


@pytest.fixture(scope="module")
def text() -> str:
    return builtin_text("long")


@pytest.fixture(scope="module")
def reference(tiny, text, tmp_path_factory):
    """The in-process sweep, as `sweep` without --workers runs it: what every other way of running must give."""
    return sweep(tiny, text, SPECS, SETTINGS, source="built-in", cache_dir=tmp_path_factory.mktemp("reference"))


def comparable(data: dict) -> str:
    """A sweep's JSON without the fields that say where and how fast each pass ran (checked to be there, so that
    leaving them out hides nothing else) and without the command line's run record."""
    data = {key: value for key, value in data.items() if key != "run"}
    for result in data["results"]:
        assert all(isinstance(result.pop(key), float) for key in WHERE_IT_RAN)
    assert all(isinstance(data.pop(key), float) for key in WHERE_IT_RAN)
    return json.dumps(data, allow_nan=False)


def same_but_where_it_ran(document, expected) -> None:
    """The two documents' JSON byte for byte, but for where and how fast each pass ran."""
    assert comparable(document.to_dict()) == comparable(expected.to_dict())


def cached(folder) -> dict[str, int]:
    """The pass cache's files and their modification times (ns)."""
    return {path.name: path.stat().st_mtime_ns for path in folder.glob("*.json")}


# --- in this process -----------------------------------------------------------------------------------------------


def test_one_worker_gives_the_sweep_and_a_rerun_computes_nothing(tiny, text, reference, tmp_path, monkeypatch):
    def no_ray(*args):
        raise AssertionError("one worker without an address started Ray")

    monkeypatch.setattr(pool_module, "start_ray", no_ray)
    events = []
    document = sweep_on_workers(tiny, text, SPECS, SETTINGS, Placement(), source="built-in", cache_dir=tmp_path,
                                on_pass=events.append)
    same_but_where_it_ran(document, reference)
    started = [event for event in events if event.seconds is None]
    assert [event.label for event in started] == LABELS and {event.worker for event in events} == {0}
    assert [event.done for event in events if event.seconds is not None] == list(range(1, len(SPECS) + 1))
    assert all(event.total == len(SPECS) for event in events)
    before = cached(tmp_path)
    assert len(before) == len(SPECS)
    again = []
    repeated = sweep_on_workers(tiny, text, SPECS, SETTINGS, Placement(), source="built-in", cache_dir=tmp_path,
                                on_pass=again.append)
    assert again == [] and cached(tmp_path) == before  # no pass computed, no file rewritten
    assert repeated.to_dict() == document.to_dict()  # even the seconds: they are the cached passes'


def test_passes_are_found_wherever_the_model_cache_is(tiny, text, tmp_path, monkeypatch):
    """Committed passes (assets/passes/) are reused on a machine whose model cache is in another folder, which
    transformers records in the config's `_name_or_path`: the pass key leaves it out."""
    specs = [1.0]
    sweep_on_workers(tiny, text, specs, SETTINGS, Placement(), source="built-in", cache_dir=tmp_path)
    before = cached(tmp_path)
    monkeypatch.setattr(tiny.model.config, "_name_or_path", str(tmp_path / "another-home" / ".cache" / "model"))
    events = []
    sweep_on_workers(tiny, text, specs, SETTINGS, Placement(), source="built-in", cache_dir=tmp_path,
                     on_pass=events.append)
    assert events == [] and cached(tmp_path) == before  # no pass computed, none written beside them


def test_the_driver_keeps_the_passes_a_clusters_worker_kept_on_its_own_disk(tiny, text, reference, tmp_path,
                                                                           monkeypatch):
    """On a cluster each worker keeps its passes on its own machine; the records travel back and the driver writes
    them into its own cache, so a rerun on the driver finds them."""
    elsewhere = tmp_path / "worker-disk"

    @contextlib.contextmanager
    def remote_pool(settings, placement):
        worker = DocumentWorker(WorkerSettings(model=tiny, sweep=settings.sweep, pass_dir=elsewhere))
        yield Pool(workers=[worker], on_ray=False, threads=None)

    monkeypatch.setattr(sweep_workers, "open_pool", remote_pool)
    document = sweep_on_workers(tiny, text, SPECS, SETTINGS, Placement(), source="built-in",
                                cache_dir=tmp_path / "driver")
    same_but_where_it_ran(document, reference)
    assert len(cached(elsewhere)) == len(cached(tmp_path / "driver")) == len(SPECS)
    for name in cached(elsewhere):
        assert (elsewhere / name).read_text() == (tmp_path / "driver" / name).read_text()


@pytest.mark.parametrize(("model", "rope", "message"), [
    ("gemma3_text", "self-extend:2,64", "has a RoPE per layer type; the distance remapping self-extend (G=2, W=64) "
                                        "is not applied to such models yet"),
    ("gemma3_text", "rerope:64", "has a RoPE per layer type; the distance remapping rerope (W=64)"),
    ("gpt2", "yarn:2", "learns its positions as a table, not with rotary embeddings (RoPE)"),
])
@pytest.mark.parametrize("placement", [[], ["--workers", "2"]], ids=["in-process", "on-ray"])
def test_a_recipe_the_model_cannot_take_is_one_line_and_exit_2_before_any_worker(
        architecture_folder, capsys, tmp_path, monkeypatch, model, rope, message, placement):
    def no_ray(*args):
        raise AssertionError("a refused sweep started Ray")

    monkeypatch.setattr(pool_module, "start_ray", no_ray)
    status = main(["sweep", "--model", str(architecture_folder(model)), "--builtin", "long", "--max-tokens", "300",
                   "--beyond-trained", "--bucket-size", "128", "--temperatures", "1", "1.1", "--rope", rope,
                   *placement, "--json", str(tmp_path / "sweep.json"), "--cache-dir", str(tmp_path / "cache")])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "sweep.json").exists() and not list((tmp_path / "cache").glob("*.json"))


def test_gemma3_takes_a_rope_recipe_on_its_global_layers(architecture_folder, capsys, tmp_path):
    """Gemma 3's RoPE is per layer type: a recipe such as YaRN applies to its full-attention layers (checked against
    transformers in tests/engine/test_rope.py); only the distance remappings are refused."""
    status = main(["sweep", "--model", str(architecture_folder("gemma3_text")), "--builtin", "long", "--max-tokens",
                   "300", "--beyond-trained", "--bucket-size", "128", "--temperatures", "1", "1.1", "--rope",
                   "yarn:2@1", "--json", str(tmp_path / "sweep.json"), "--cache-dir", str(tmp_path / "cache")])
    assert status == 0, capsys.readouterr().err
    results = json.loads((tmp_path / "sweep.json").read_text())["results"]
    assert [result["view"] for result in results] == [View(1.0).to_dict(), View(1.1).to_dict(),
                                                      View(1.0, Rope("yarn", 2.0)).to_dict()]
    assert results[2]["rope_layer_types"] == "full_attention"


@pytest.mark.parametrize(("argument", "message"), [
    (["--workers", "0"], "--workers must be at least 1, got 0"),
    (["--threads", "0"], "--threads must be at least 1, got 0"),
    (["--workers", "2", "--ray-address", "not-an-address"], "is not HOST:PORT"),
])
def test_a_bad_placement_is_one_line_and_exit_2(capsys, tmp_path, argument, message):
    status = main([*CLI_SWEEP, *argument, "--json", str(tmp_path / "sweep.json"), "--cache-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "sweep.json").exists()


# --- on Ray --------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module, started as the pool starts it (2 CPUs, no dashboard, a small object store)."""
    import ray

    assert start_ray(2, None)
    yield ray
    ray.shutdown()


def _workers(title: str = "ray::DocumentWorker") -> list[psutil.Process]:
    """This test's Ray worker processes whose title starts with `title` (Ray titles an actor by its class, and a
    busy one by the method it runs: ray::DocumentWorker.passes)."""
    found = []
    for process in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if " ".join(process.cmdline()).startswith(title):
                found.append(process)
    return found


@pytest.mark.slow
def test_two_ray_workers_write_the_in_process_json(capsys, local_ray, tmp_path):
    assert main([*CLI_SWEEP, "--json", str(tmp_path / "here.json"), "--cache-dir", str(tmp_path / "here")]) == 0
    capsys.readouterr()
    assert main([*CLI_SWEEP, "--workers", "2", "--json", str(tmp_path / "ray.json"), "--cache-dir",
                 str(tmp_path / "ray")]) == 0
    err = capsys.readouterr().err
    on_ray, here = (json.loads((tmp_path / name).read_text()) for name in ("ray.json", "here.json"))
    assert "--workers 2" in on_ray["run"]["command"] and "--workers" not in here["run"]["command"]
    assert comparable(on_ray) == comparable(here)
    said = [re.fullmatch(r"(.+): (started|finished) on worker ([12]) of 2(?: in \d+\.\d s)?", line.strip())
            for line in err.splitlines()]  # the bar is redrawn on the same line, after a carriage return
    said = [found.groups()[:3] for found in said if found]
    for what in ("started", "finished"):  # each pass said where it started and where it finished
        assert sorted(label for label, event, _ in said if event == what) == sorted(LABELS), err
    assert {worker for _, _, worker in said} == {"1", "2"}  # both workers ran passes
    for label in LABELS:  # a pass finishes on the worker it started on
        assert len({worker for name, _, worker in said if name == label}) == 1


class InterruptError(Exception):
    """Stands in for Ctrl-C in the driver."""


@pytest.mark.slow
def test_an_interrupted_sweep_resumes_and_computes_no_finished_pass_again(tiny, text, reference, local_ray,
                                                                         tmp_path):
    def interrupt_after_the_first(event):
        if event.seconds is not None:
            raise InterruptError

    with pytest.raises(InterruptError):
        sweep_on_workers(tiny, text, SPECS, SETTINGS, Placement(workers=2), source="built-in", cache_dir=tmp_path,
                         on_pass=interrupt_after_the_first)
    deadline = time.monotonic() + 60
    while _workers() and time.monotonic() < deadline:  # the pass in flight may still land in the cache until then
        time.sleep(0.1)
    assert not _workers(), "the interrupted run's workers were not ended"
    before = cached(tmp_path)
    assert 1 <= len(before) < len(SPECS)  # the finished pass is kept; the interruption ended the run
    events = []
    document = sweep_on_workers(tiny, text, SPECS, SETTINGS, Placement(workers=2), source="built-in",
                                cache_dir=tmp_path, on_pass=events.append)
    same_but_where_it_ran(document, reference)
    computed = sorted(event.label for event in events if event.seconds is None)
    assert len(computed) == len(SPECS) - len(before) and sorted(set(computed)) == computed
    after = cached(tmp_path)
    assert len(after) == len(SPECS) and {name: after[name] for name in before} == before  # none rewritten
    assert events[0].done == len(before)




@pytest.mark.slow
def test_a_worker_killed_mid_pass_has_its_pass_run_again(tiny, text, reference, local_ray, tmp_path):
    killed: list[int] = []
    stop = threading.Event()

    def kill_the_first_busy_worker():
        while not killed and not stop.is_set():
            busy = _workers("ray::DocumentWorker.passes")
            if busy:
                os.kill(busy[0].pid, signal.SIGKILL)
                killed.append(busy[0].pid)
            time.sleep(0.005)

    events = []
    killer = threading.Thread(target=kill_the_first_busy_worker, daemon=True)
    killer.start()
    try:
        document = sweep_on_workers(tiny, text, SPECS, SETTINGS, Placement(workers=2), source="built-in",
                                    cache_dir=tmp_path, on_pass=events.append)
    finally:
        stop.set()
        killer.join()
    assert killed, "no worker was mid-pass"
    assert not psutil.pid_exists(killed[0]) or psutil.Process(killed[0]).status() == psutil.STATUS_ZOMBIE
    same_but_where_it_ran(document, reference)  # the killed pass ran again, on the restarted worker
    finished = sorted(event.label for event in events if event.seconds is not None)
    assert finished == sorted(LABELS)  # each pass received once: nothing lost, nothing twice
    assert len(cached(tmp_path)) == len(SPECS)
