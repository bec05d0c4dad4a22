"""The run machinery tune and fit share: the pool start-up (the worker in this process, or K Ray actors), its one
usage error for a bad Ray address, and the worker's keyword-only settings. What the workers compute is checked
against the engine in test_tune.py and test_fit.py."""

import socket
import time

import pytest

from model_utils.core.machine import usable_cores
from model_utils.experiments.corpus import Document
from model_utils.experiments.runs import pool as pool_module
from model_utils.experiments.runs.errors import RunUsageError
from model_utils.experiments.runs.pool import Placement, Pool, open_pool
from model_utils.experiments.runs.worker import DocumentWorker, WorkerSettings
from model_utils.experiments.sweep import SweepSettings

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SETTINGS = SweepSettings(max_tokens=200, bucket_size=64)
JOBS = [(Document("a", "one two three " * 20), [1.0]), (Document("b", "four five " * 30), [1.0, 1.5])]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: nothing listens there


def _without_seconds(results: list[list[dict]]) -> list[list[dict]]:
    return [[{key: value for key, value in row.items() if key != "seconds"} for row in rows] for rows in results]


def test_each_worker_gets_a_share_of_the_cores_unless_told():
    assert Placement().threads_each() is None  # in this process: the process's own threads
    assert Placement(threads=3).threads_each() == 3
    for workers in (2, 3, 64):
        assert Placement(workers=workers).threads_each() == max(1, usable_cores() // workers)
        assert Placement(workers=workers, threads=2).threads_each() == 2
    assert Placement(ray_address="10.0.0.1:6379").on_ray and not Placement(threads=4).on_ray


def test_one_worker_runs_in_this_process_on_the_drivers_model(tiny, tmp_path, monkeypatch):
    def no_ray(*args):
        raise AssertionError("one worker without an address started Ray")

    monkeypatch.setattr(pool_module, "start_ray", no_ray)
    settings = WorkerSettings(model=tiny, sweep=SETTINGS, specs=(1.0,), pass_dir=tmp_path)
    with open_pool(settings, Placement()) as pool:
        assert not pool.on_ray and pool.threads is None and len(pool.workers) == 1
        worker = pool.workers[0]
        assert isinstance(worker, DocumentWorker) and worker.loaded is tiny and worker.pass_dir == tmp_path
        records = pool.evaluate([(Document("a", "one two three " * 20), [1.0, 1.5])])
    assert [[record["spec"] for record in computed] for computed in records] == [["T=1", "T=1.5"]]
    assert len(list(tmp_path.glob("*.json"))) == 2  # the passes are in the pass cache it was given


def test_the_pool_hands_each_document_to_finish_in_order_and_names_it_to_on_pass():
    class Worker:
        def run(self, document, on_pass):
            on_pass("T=1", 0)
            return {"sha256": document.sha256}

    documents = [Document("a", "first"), Document("b", "second")]
    finished, passes = [], []
    Pool(workers=[Worker()], on_ray=False, threads=None).run(
        documents, lambda document, result: finished.append((document.name, result["sha256"])),
        lambda document, label, index: passes.append((document.name, label, index)))
    assert finished == [(d.name, d.sha256) for d in documents]
    assert passes == [("a", "T=1", 0), ("b", "T=1", 0)]


def test_a_worker_without_columns_says_what_run_needs(tiny, tmp_path):
    worker = DocumentWorker(WorkerSettings(model=tiny, sweep=SETTINGS, specs=(1.0,), pass_dir=tmp_path))
    with pytest.raises(TypeError, match=r"WorkerSettings\.columns"):
        worker.run(Document("a", "one two three " * 20))
    with pytest.raises(TypeError):
        WorkerSettings(tiny, SETTINGS)  # keyword-only: no positional tuple to mislabel


@pytest.mark.parametrize(("address", "message"), [
    ("not-an-address", "is not HOST:PORT"),
    ("ray://10.0.0.1:10001", "is not HOST:PORT"),
    ("127.0.0.1:{closed}", "cannot reach a Ray cluster at 127.0.0.1:"),
])
def test_a_bad_ray_address_is_one_usage_error_in_seconds(tiny, tmp_path, address, message):
    settings = WorkerSettings(model=tiny, sweep=SETTINGS, specs=(1.0,), pass_dir=tmp_path)
    started = time.perf_counter()
    placement = Placement(ray_address=address.format(closed=_closed_port()))
    with pytest.raises(RunUsageError) as refused, open_pool(settings, placement):
        raise AssertionError("the pool started")
    assert message in str(refused.value) and "\n" not in str(refused.value)
    assert "--ray-address" in str(refused.value)  # names what to change
    assert time.perf_counter() - started < 30


@pytest.mark.slow
def test_k_workers_are_ray_actors_on_the_drivers_model_and_ray_stops_after(tiny, tmp_path):
    import ray

    assert not ray.is_initialized()  # this pool starts (and so stops) its own local Ray
    settings = WorkerSettings(model=tiny, sweep=SETTINGS, specs=(1.0,), pass_dir=tmp_path)
    with open_pool(settings, Placement(workers=2)) as pool:
        assert pool.on_ray and len(pool.workers) == 2 and pool.threads == max(1, usable_cores() // 2)
        described = ray.get([actor.describe.remote() for actor in pool.workers])
        assert len({info["pid"] for info in described}) == 2
        assert {info["threads"] for info in described} == {pool.threads}
        on_ray = pool.evaluate(JOBS)
    assert not ray.is_initialized()
    assert len(list(tmp_path.glob("*.json"))) == 3  # a local Ray's actors keep the passes where they were told
    with open_pool(WorkerSettings(model=tiny, sweep=SETTINGS, pass_dir=tmp_path / "here"), Placement()) as here:
        in_process = here.evaluate(JOBS)  # computed again, in this process
    assert _without_seconds(on_ray) == _without_seconds(in_process)
