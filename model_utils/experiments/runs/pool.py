"""The pool of a long run, started one way for sweep, tune and fit: one DocumentWorker in this process (one worker
and no --ray-address), or W DocumentWorker actors on a local Ray or a cluster, each checked to hold the driver's
model. A tune hands the pool documents one at a time, a sweep its passes one at a time, a fit a batch of
evaluations. Ray restarts a worker that dies and runs its job again, so the driver receives one result per job."""

from __future__ import annotations

import contextlib
import functools
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from model_utils.core.machine import usable_cores
from model_utils.core.records.sweep import SweepPass
from model_utils.core.views import as_view
from model_utils.experiments.corpus import Document
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.experiments.runs.cluster import start_ray
from model_utils.experiments.runs.errors import RunError, RunUsageError
from model_utils.experiments.runs.worker import DocumentWorker, WorkerSettings
from model_utils.experiments.sweep import Spec
from model_utils.models import LoadedModel

MAX_RESTARTS = 2  # a worker that dies is restarted this often (then its job fails, the run ends, results stay)
MAX_TASK_RETRIES = 2  # a job (a document, a pass) whose worker died is re-run on the restarted worker this often
WORKER_START_SECONDS = 900  # actors that cannot start (a cluster without free CPUs) fail instead of waiting


@dataclass(frozen=True, kw_only=True)
class Placement:
    """Where a run's workers go: --workers, --ray-address and --threads as the command line took them."""

    workers: int = 1
    ray_address: str | None = None
    threads: int | None = None  # torch threads per worker; None: see threads_each

    def __post_init__(self):
        for name, value in (("workers", self.workers), ("threads", self.threads)):
            if value is not None and value < 1:
                raise RunUsageError(f"--{name} must be at least 1, got {value}")

    @property
    def on_ray(self) -> bool:
        return self.workers > 1 or self.ray_address is not None

    def threads_each(self) -> int | None:
        """Each worker's torch threads: as given; else on Ray this machine's cores shared among the workers; else
        None (the process keeps its own)."""
        if self.threads is not None or not self.on_ray:
            return self.threads
        return max(1, usable_cores() // self.workers)


@dataclass(frozen=True, kw_only=True)
class Job:
    """What one worker runs at a time: a DocumentWorker method and its arguments, the name progress and failures give
    it (a document's name, a pass's label), and the item the caller's callbacks receive (the document, the spec)."""

    name: str
    method: str  # "run": a tune's document; "passes": a sweep's pass; "apply": a function of the run's own
    args: tuple
    item: Any = None


@dataclass(kw_only=True)
class Pool:
    """The started workers: one DocumentWorker in this process, or Ray actor handles."""

    workers: list
    on_ray: bool
    threads: int | None  # each worker's torch threads (None: the process's own)

    def run(self, documents: list[Document], finish: Callable[[Document, dict], None],
            on_pass: Callable[[Document, str, int], None] | None = None) -> None:
        """Each document through DocumentWorker.run, its result to `finish` as it comes. In this process `on_pass`
        hears of each pass; an actor prints its own."""
        if self.on_ray:
            jobs = [Job(name=document.name, method="run", args=(document,), item=document) for document in documents]
            run_on_actors(self.workers, jobs, lambda job, result, _: finish(job.item, result), noun="documents")
            return
        for document in documents:
            announce = None if on_pass is None else functools.partial(on_pass, document)
            finish(document, self.workers[0].run(document, announce))

    def passes(self, document: Document, specs: list[Spec], finish: Callable[[Spec, SweepPass, int], None],
               on_start: Callable[[Spec, int], None] | None = None) -> None:
        """Each spec's pass on `document` as a job of its own (DocumentWorker.passes), so that W actors run W passes
        at once: `on_start` hears of a pass as a worker takes it, `finish` gets its record (a SweepPass) as it
        comes, both with the worker's index (0 in this process)."""
        jobs = [Job(name=as_view(spec).label, method="passes", args=(document, (spec,)), item=spec) for spec in specs]
        started = None if on_start is None else lambda job, worker: on_start(job.item, worker)
        if self.on_ray:
            run_on_actors(self.workers, jobs, lambda job, records, worker: finish(job.item, records[0], worker),
                          on_start=started, noun="passes")
            return
        for job in jobs:
            if started is not None:
                started(job, 0)
            finish(job.item, self.workers[0].passes(*job.args)[0], 0)

    def each(self, jobs: list[Job], finish: Callable[[Job, Any, int], None],
             on_start: Callable[[Job, int], None] | None = None, noun: str = "passes") -> None:
        """Each job (a DocumentWorker method, usually `apply`, and its arguments) on a worker, W at once on Ray,
        `finish` getting its result as it comes with the worker's index (0 in this process)."""
        if self.on_ray:
            run_on_actors(self.workers, jobs, finish, on_start=on_start, noun=noun)
            return
        for job in jobs:
            if on_start is not None:
                on_start(job, 0)
            finish(job, getattr(self.workers[0], job.method)(*job.args), 0)

    def evaluate(self, jobs: list[tuple[Document, list]]) -> list[list[dict]]:
        """DocumentWorker.evaluate of each (document, specs), in order; on Ray spread over the actors."""
        if not self.on_ray:
            return [self.workers[0].evaluate(document, specs) for document, specs in jobs]
        import ray

        refs = [self.workers[i % len(self.workers)].evaluate.remote(document, specs)
                for i, (document, specs) in enumerate(jobs)]
        return ray.get(refs)


@contextlib.contextmanager
def open_pool(settings: WorkerSettings, placement: Placement) -> Iterator[Pool]:
    """The pool `placement` asks for, its workers made with `settings`, whose model is the driver's LoadedModel: the
    worker in this process uses it, each Ray actor loads its own copy by name on the same kind of device and keeps
    the passes in `settings.pass_dir` on a local Ray, on its own disk on a cluster. Its actors are ended on the way
    out (even mid-job), and a Ray this call started or joined is shut down. Raises RunUsageError for an address that
    is no Ray cluster, RunError when the actors cannot start."""
    loaded: LoadedModel = settings.model
    threads = placement.threads_each()
    if not placement.on_ray:
        yield Pool(workers=[DocumentWorker(replace(settings, threads=threads))], on_ray=False, threads=threads)
        return
    local = placement.ray_address is None
    remote = replace(settings, model=loaded.name, threads=threads, announce=True,
                     device=None if loaded.device.type == "cpu" else str(loaded.device),
                     pass_dir=settings.pass_dir.resolve() if local and settings.pass_dir else None)
    connected = start_ray(placement.workers, placement.ray_address)  # imports ray: after its bounds are set
    import ray

    actors = []
    try:  # a local actor takes one of the W CPUs; on a cluster it reserves as many CPUs as it has threads
        actors = start_actors(remote, count=placement.workers, cpus_each=1 if local else threads,
                              fingerprint=model_fingerprint(loaded, portable=True))
        yield Pool(workers=actors, on_ray=True, threads=threads)
    finally:
        for actor in actors:  # now, even mid-pass (an interrupted run): a Ray that stays up gets its CPUs back
            ray.kill(actor)
        if connected:
            ray.shutdown()


def start_actors(settings: WorkerSettings, *, count: int, cpus_each: float, fingerprint: str) -> list:
    """`count` DocumentWorker actors made with `settings` (the model by name), each checked to hold the same model
    as the driver (`fingerprint`: the driver's model_fingerprint(portable=True))."""
    import ray

    actor_class = ray.remote(max_restarts=MAX_RESTARTS, max_task_retries=MAX_TASK_RETRIES)(DocumentWorker)
    gpus = 1 if settings.device and settings.device.startswith("cuda") else 0  # a node with a free GPU each
    actors = [actor_class.options(num_cpus=cpus_each, num_gpus=gpus).remote(settings) for _ in range(count)]
    try:
        described = ray.get([actor.describe.remote() for actor in actors], timeout=WORKER_START_SECONDS)
    except ray.exceptions.GetTimeoutError:
        raise RunError(f"{count} workers did not start within {WORKER_START_SECONDS} s; does the cluster have "
                       f"{count} x {cpus_each:g} free CPUs?") from None
    except ray.exceptions.RayActorError as error:  # e.g. the model cannot be loaded on a worker's machine
        reason = str(error).strip().splitlines()
        raise RunError(f"a worker could not start: {reason[-1] if reason else type(error).__name__}") from None
    for info in described:
        if info["fingerprint"] != fingerprint:
            raise RunError(f"the worker on {info['host']} loaded another model (fingerprint {info['fingerprint']}, "
                           f"the driver has {fingerprint}); install the same model and versions on every machine")
    return actors


def run_on_actors(actors: list, jobs: list[Job], finish: Callable[[Job, Any, int], None], *,
                  on_start: Callable[[Job, int], None] | None = None, noun: str = "documents") -> None:
    """Hand the jobs to the actors one at a time and `finish` each result as it comes, with the index of the actor
    that ran it (`on_start` hears of each job as an actor takes it). A job whose worker died more often than Ray
    retries it, or that raised, ends the run once the others in flight are done."""
    import ray

    queue = deque(jobs)
    in_flight: dict = {}  # ObjectRef -> (actor's index, job)

    def submit(index: int) -> None:
        job = queue.popleft()
        if on_start is not None:
            on_start(job, index)
        in_flight[getattr(actors[index], job.method).remote(*job.args)] = (index, job)

    for index in range(min(len(actors), len(queue))):
        submit(index)
    failures: list[str] = []
    cause: BaseException | None = None
    while in_flight:
        ready, _ = ray.wait(list(in_flight), num_returns=1)
        index, job = in_flight.pop(ready[0])
        try:
            result = ray.get(ready[0])
        except ray.exceptions.RayActorError as error:  # died and was restarted MAX_RESTARTS times: out of the pool
            failures.append(f"{job.name} (its worker died {MAX_TASK_RETRIES + 1} times: "
                            f"{str(error).strip().splitlines()[0]})")
            continue
        except ray.exceptions.RayTaskError as error:  # the pass itself raised: the same error as in-process
            cause = cause or error.cause or error
            failures.append(job.name)
            continue
        finish(job, result, index)
        if queue and not failures:
            submit(index)
    if cause is not None:
        raise cause
    if failures or queue:
        left = f"; {len(queue)} not started" if queue else ""
        raise RunError(f"{noun} not finished: {', '.join(failures)}{left}. The finished ones are kept: rerun "
                       "the same command to compute the rest")
