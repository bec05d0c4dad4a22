"""The app's caches: one model object per process, and bounded caches of reports, answer tokens and sweeps, with
model passes admitted through the process's gate and followed by anyone who asks for the same result meanwhile
(docs/ARCHITECTURE.md, Serving)."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import streamlit as st
from streamlit.logger import get_logger
from streamlit.runtime.scriptrunner_utils.script_run_context import get_run_yield_check, get_script_run_ctx

from components.present.progress import progress_text, sweep_progress_text
from components.present.text import plain
from components.serving import settings
from components.serving.admission import (
    WARM_UP,
    Flight,
    Flights,
    Gate,
    Place,
    following_message,
    queue_message,
    queued_status,
)
from model_utils import imports_without_collection
from model_utils.core.errors import AnalysisError
from model_utils.core.progress import PASS, OnProgress, Progress
from model_utils.core.records.fit import FitSummary
from model_utils.core.records.retrieval import RetrievalDocument
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.experiments import committed
from model_utils.experiments.committed import ResultFiles

with imports_without_collection():  # torch and transformers, imported here by the warm-up or the first model page
    from model_utils import LoadedModel, Report, Schedule, analyze, load_model, set_threads
with imports_without_collection():
    from model_utils import Generation, GenerationRequest, generate_continuations
with imports_without_collection():
    from model_utils import AnswerProbe, AnswerRequest, answer_probe, collapse_limit

# (schedule name, parameter) stands for a Schedule: cache keys stay plain tuples of numbers and strings.
TemperatureKey = float | tuple[str, float]
GATE = Gate(settings.MAX_CONCURRENT)
FLIGHTS = Flights()
get_logger("components")  # the server log shows the components' INFO lines (passes, queue, warm-up)
log = get_logger(__name__)
_passes = itertools.count(1)


def _who() -> str:
    return WARM_UP if threading.current_thread().name == WARM_UP else "a visitor"


def _share_the_cores() -> None:
    """Give the pass running in this thread its share of the cores: cores // (passes running), at least one torch
    thread. OpenMP keeps the count per calling thread, and the fused kernel reads it there (torch.get_num_threads),
    so this sets the pass's own team only. Called at admission and between layers, as passes come and go. With
    admission control off, every pass keeps torch's default (all cores): that is the oversubscribed baseline."""
    if GATE.slots is not None:
        set_threads(settings.CORES // max(1, GATE.running))


def _sharing_the_cores(progress: OnProgress) -> OnProgress:
    """The engine's between-layers callback: re-divide the cores among the passes running, then report."""
    def between_layers(event: Progress) -> None:
        _share_the_cores()
        progress(event)

    return between_layers


def _in_script_run() -> bool:
    return get_script_run_ctx(suppress_warning=True) is not None


class _Progress:
    """A computation's progress: a bar when a page's script run asked for it (none in the warm-up thread), and the
    text its followers see (FLIGHTS). Every bar update is a point where Streamlit stops a run whose visitor left."""

    def __init__(self, text: str):
        self.text = text
        self.bar = st.progress(0.0, text=text) if _in_script_run() else None
        FLIGHTS.report(0.0, text)

    def __call__(self, event: Progress) -> None:
        message = progress_text(event)
        FLIGHTS.report(event.fraction, message)
        if self.bar is not None:
            self.bar.progress(min(1.0, event.fraction), text=message)

    def queued(self, place: Place) -> None:
        """Called every half second while waiting: redraws only when the place changes (a message drawn inside a
        cached function is recorded and replayed on every hit), but lets Streamlit stop the run every time."""
        text = queue_message(place)
        FLIGHTS.report(0.0, queued_status(place))
        if self.bar is not None and text != self.text:
            self.bar.progress(0.0, text=text)
        else:
            check = get_run_yield_check()  # what any st call does first: raise StopException if the visitor left
            if check is not None:
                check()
        self.text = text

    def close(self) -> None:
        if self.bar is not None:
            self.bar.empty()


@st.cache_resource(show_spinner=False, max_entries=4)
def cached_model(name: str) -> LoadedModel:
    progress = _Progress(f"Loading model {name}")
    loaded = load_model(name, progress=progress)
    progress.close()
    return loaded


def _spec(key: TemperatureKey) -> float | Schedule:
    return Schedule(key[0], key[1]) if isinstance(key, tuple) else key


def _run(model_name: str, text: str, temperatures: tuple[TemperatureKey, ...], mode: str, window: int,
         max_tokens: int, keep_maps, q_start: int | None = None, cut: str = "end") -> Report:
    loaded = cached_model(model_name)
    # a prompt cut before its question leaves room after it for the answer probe (engine/answer.py)
    limit = collapse_limit(loaded, max_tokens) if cut == "question" else min(max_tokens, loaded.max_positions)
    progress = _Progress("Running the model")
    who = _who()
    with GATE.admitted(who, on_wait=progress.queued):
        _share_the_cores()
        log.info("model pass %d for %s: %d temperature(s), up to %d tokens, %s mode (%d running, %d waiting)",
                 next(_passes), who, len(temperatures), max_tokens, mode, GATE.running, GATE.waiting)
        # these pages stay within the model's trained context; only the context-length page goes past it, when asked
        report = analyze(loaded, text, temperatures=[_spec(t) for t in temperatures], mode=mode, window=window,
                         keep_maps=keep_maps, max_tokens=limit, q_start=q_start, cut=cut,
                         progress=_sharing_the_cores(progress))
    progress.close()
    return report


@st.cache_data(show_spinner=False, max_entries=12, max_size="256mb", ttl=3600)
def cached_report(model_name: str, text: str, temperatures: tuple[TemperatureKey, ...], mode: str, window: int,
                  max_tokens: int) -> Report:
    """Statistics, loss and last-query rows: small (a few MB), so a dozen are kept."""
    return _run(model_name, text, temperatures, mode, window, max_tokens, keep_maps=None)


@st.cache_data(show_spinner=False, max_entries=4, max_size="512mb", ttl=3600)
def cached_report_with_maps(model_name: str, text: str, temperatures: tuple[TemperatureKey, ...], mode: str,
                            window: int, max_tokens: int, q_start: int | None = None) -> Report:
    """Also keeps every layer's queries and keys, so any layer / head map re-draws without running the model
    (about 100 MB at 256 tokens and 4 temperatures on the bundled model, hence only four kept). `q_start`: the
    first query the statistics average (None: the engine's default, past the recent window)."""
    return _run(model_name, text, temperatures, mode, window, max_tokens, keep_maps="all", q_start=q_start)


@st.cache_data(show_spinner=False, max_entries=12, max_size="256mb", ttl=3600)
def cached_collapse_report(model_name: str, text: str, temperatures: tuple[TemperatureKey, ...], mode: str,
                           window: int, max_tokens: int) -> Report:
    """The Collapse inspector's report: a prompt longer than `max_tokens` is cut before its question (its head and
    its question kept), within the trained length less the answer probe's room."""
    return _run(model_name, text, temperatures, mode, window, max_tokens, keep_maps=None, cut="question")


@st.cache_data(show_spinner=False, max_entries=64, ttl=3600)
def cached_answer_probe(model_name: str, text: str, temperatures: tuple[TemperatureKey, ...], mode: str,
                        max_tokens: int, answer: str) -> AnswerProbe:
    """The whole expected answer's log-probability and a short greedy continuation at each temperature, after the
    prompt as cached_collapse_report reads it (model_utils.answer_probe: one batched pass and a few cached steps),
    admitted through the gate like a report. A refused answer raises AnalysisError, which is not cached."""
    loaded = cached_model(model_name)
    progress = _Progress("Asking the model for the answer at each temperature")
    who = _who()
    with GATE.admitted(who, on_wait=progress.queued):
        _share_the_cores()
        log.info("model pass %d for %s: the answer probe at %d temperature(s), %s mode (%d running, %d waiting)",
                 next(_passes), who, len(temperatures), mode, GATE.running, GATE.waiting)
        request = AnswerRequest(temperatures=[_spec(t) for t in temperatures], answer=answer, mode=mode,
                                max_tokens=max_tokens)
        try:
            probe = answer_probe(loaded, text, request, progress=_sharing_the_cores(progress))
        except AnalysisError:
            progress.close()
            raise
    progress.close()
    return probe


def collapse_view(model_name: str, text: str, temperatures: tuple[TemperatureKey, ...], mode: str, window: int,
                  max_tokens: int, answer: str = "") -> Report:
    """The Collapse inspector's report, with the answer probe of `answer` computed into its cache as well, so that
    the server's warm-up readies both for the default view. An answer the engine refuses is left to the page, which
    asks for it again and shows why beside the answer's box."""
    report = cached_collapse_report(model_name, text, temperatures, mode, window, max_tokens)
    if answer.strip():
        with contextlib.suppress(AnalysisError):
            computed_once(cached_answer_probe, model_name, text, temperatures, mode, max_tokens, answer)
    return report


@st.cache_data(show_spinner=False, max_entries=16, ttl=3600)
def cached_generation(model_name: str, text: str, temperatures: tuple[float, ...], mode: str, max_new_tokens: int,
                      max_tokens: int) -> Generation:
    """What the model says after `text` (cut to `max_tokens`) at each temperature: the top next tokens and a greedy
    continuation of `max_new_tokens` (model_utils.generate_continuations), admitted through the gate like a report.
    A refusal (past the trained length) raises AnalysisError, which is not cached."""
    loaded = cached_model(model_name)
    progress = _Progress(f"Generating {max_new_tokens} tokens at each temperature")
    who = _who()
    with GATE.admitted(who, on_wait=progress.queued):
        _share_the_cores()
        log.info("model pass %d for %s: a continuation of %d token(s) at %d temperature(s), %s mode (%d running, "
                 "%d waiting)", next(_passes), who, max_new_tokens, len(temperatures), mode, GATE.running,
                 GATE.waiting)
        request = GenerationRequest(temperatures=temperatures, max_new_tokens=max_new_tokens, mode=mode,
                                    max_tokens=max_tokens)
        try:
            generation = generate_continuations(loaded, text, request, progress=_sharing_the_cores(progress))
        except AnalysisError:
            progress.close()  # the refusal's error line takes the bar's place
            raise
    progress.close()
    return generation


def _follow(flight: Flight) -> None:
    """Wait for someone else's computation of the same result, drawing its progress when a page is waiting."""
    bar = st.progress(0.0, text=following_message(flight.who, flight.message)) if _in_script_run() else None
    while not flight.landed.wait(0.5):
        if bar is not None:
            bar.progress(min(1.0, flight.fraction), text=following_message(flight.who, flight.message))
    if bar is not None:
        bar.empty()


def computed_once(function: Callable, *args, **kwargs):
    """`function(*args, **kwargs)` (a cached function of this module), computed once however many ask for it at
    the same time: while the same call is in flight (the warm-up's or another visitor's), follow its progress,
    then read its result from the cache. If that computation was stopped, this one computes it."""
    key = (function.__qualname__, args, tuple(sorted(kwargs.items())))
    while True:
        flight, mine = FLIGHTS.join(key, _who())
        if mine:
            break
        _follow(flight)
    try:
        return function(*args, **kwargs)
    finally:
        FLIGHTS.land(flight)


# --- the context-length page ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Committed:
    """The committed results the Context length and Length schedules pages show, each a ready record carrying the
    verdict written with it: every sweep by its file (the default first), every corpus summary (the default first),
    every fit; and one line for each file that could not be read, which the page shows as an error."""

    sweeps: dict[Path, SweepDocument]
    summaries: tuple[TuneSummary, ...]
    fits: tuple[FitSummary, ...]
    errors: tuple[str, ...]


def committed_files() -> tuple[ResultFiles, ResultFiles, ResultFiles]:
    """The committed sweeps, corpus summaries and fits where settings point (looked up on each call, so that a test
    can point them elsewhere): model_utils.experiments.committed's kinds, each at its folder and default file."""
    return (replace(committed.SWEEPS, folder=settings.SWEEPS_DIR, first=settings.CONTEXT_SWEEP),
            replace(committed.TUNES, folder=settings.TUNE_DIR, first=settings.CORPUS_SUMMARY),
            replace(committed.FITS, folder=settings.FIT_DIR))


def committed_results() -> Committed:
    """The committed results, read once through cached_committed: their files (listed on each call, the default
    first, so a file added or replaced is read) and their modification times are its key."""
    return cached_committed(*(_stamped(files.paths()) for files in committed_files()))


def _stamped(paths: list[Path]) -> tuple[tuple[str, float], ...]:
    return tuple((str(path), path.stat().st_mtime) for path in paths)


@st.cache_data(show_spinner=False, max_entries=4, ttl=3600)
def cached_committed(sweeps: tuple[tuple[str, float], ...], summaries: tuple[tuple[str, float], ...],
                     fits: tuple[tuple[str, float], ...]) -> Committed:
    """The committed files (path, modification time) as their records (a sweep's tables as arrays: a cached copy is
    a few objects, not the 400,000 numbers of the committed sweep); a file that cannot be read is an error line."""
    errors: list[str] = []
    found = {kind: [(Path(path), record) for path, _ in files
                    if (record := _record(Path(path), kind, errors)) is not None]
             for kind, files in ((SweepDocument, sweeps), (TuneSummary, summaries), (FitSummary, fits))}
    return Committed(sweeps=dict(found[SweepDocument]), summaries=tuple(record for _, record in found[TuneSummary]),
                     fits=tuple(record for _, record in found[FitSummary]), errors=tuple(errors))


def _record(path: Path, record: type, errors: list[str]):
    """The file's record (model_utils.experiments.committed.read), or None with its error line added."""
    try:
        return committed.read(path, record)
    except (OSError, ValueError) as error:  # a RecordError is a ValueError: its message says how to regenerate
        errors.append(f"Cannot read {plain(path)}: {plain(error)}")
        return None


@dataclass(frozen=True, kw_only=True)
class SweepRequest:
    """A context-length sweep as a page asks for it, and cached_sweep's cache key: st.cache_data hashes a dataclass
    by its fields, all plain and hashable here. The passes: each temperature, then each schedule, on the model's
    own positions; with `rope`, each temperature again on that recipe."""

    model: str
    text: str
    source: str  # where the text comes from, as the document records it
    temperatures: tuple[float, ...]
    schedules: tuple[Schedule, ...] = ()  # resolved: each with its knob at this text's length
    rope: Rope | None = None
    max_tokens: int
    bucket_size: int
    window: int
    beyond_trained: bool

    @property
    def specs(self) -> list[float | Schedule | View]:
        """What the sweep runs, in order (model_utils.experiments.sweep.Spec)."""
        on_rope = () if self.rope is None else tuple(View(t, self.rope) for t in self.temperatures)
        return [*self.temperatures, *self.schedules, *on_rope]

    @property
    def settings(self):
        """The sweep's SweepSettings (imports the engine)."""
        from model_utils import SweepSettings

        return SweepSettings(max_tokens=self.max_tokens, bucket_size=self.bucket_size, window=self.window,
                             beyond_trained=self.beyond_trained)


@st.cache_data(show_spinner=False, max_entries=4, max_size="256mb", ttl=3600)
def cached_sweep(request: SweepRequest) -> SweepDocument:
    """A context-length sweep document (model_utils.experiments.sweep.sweep) of `request`. The progress bar
    appears with the first pass that runs (a refused or fully cached sweep draws none) and says which pass and which
    layer it is at."""
    import time

    from model_utils import sweep

    loaded = cached_model(request.model)
    specs = request.specs
    passes, bar, current = len(specs), [], {"index": 0, "label": ""}

    def on_start(label: str, index: int) -> None:
        current.update(index=index, label=label)
        if not bar:  # the first pass to run: passes before it came from the pass cache
            bar.append(st.progress(0.0))
            current.update(started=time.perf_counter(), first=index / passes)
        bar[0].progress(index / passes, text=sweep_progress_text(number=index + 1, passes=passes, label=label))

    def on_layer(event: Progress) -> None:
        done = min(1.0, (current["index"] + event.fraction) / passes)
        ran = done - current["first"]  # the share of the sweep run so far, at the speed measured since
        left = (time.perf_counter() - current["started"]) * (1.0 - done) / ran if ran > 0 else 0.0
        bar[0].progress(done, text=sweep_progress_text(number=current["index"] + 1, passes=passes,
                                                       label=current["label"], event=event, seconds_left=left))

    waiting: list[_Progress] = []  # a bar only if the sweep has to wait for a slot

    def queued(place: Place) -> None:
        if not waiting:
            waiting.append(_Progress(queue_message(place)))
        waiting[0].queued(place)

    who = _who()
    with GATE.admitted(who, on_wait=queued):  # the whole sweep holds one slot, like one analysis
        for element in waiting:
            element.close()
        _share_the_cores()
        log.info("model pass %d for %s: a context-length sweep, %d pass(es), up to %d tokens (%d running, %d "
                 "waiting)", next(_passes), who, passes, request.max_tokens, GATE.running, GATE.waiting)
        document = sweep(loaded, request.text, specs, request.settings, source=request.source,
                         cache_dir=settings.SWEEP_PASSES, on_start=on_start, progress=_sharing_the_cores(on_layer))
    for element in bar:
        element.empty()
    return document


# --- the retrieval page -----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CommittedProbes:
    """The committed retrieval probes as records, the default first, and an error line per file that cannot be
    read."""

    documents: tuple[RetrievalDocument, ...]
    errors: tuple[str, ...]


def committed_probes() -> CommittedProbes:
    """The committed probes (settings.RETRIEVAL_DEFAULT, then every other RETRIEVAL_DIR/*.json), read once through
    cached_probes, keyed by their paths and modification times."""
    probes = replace(committed.PROBES, folder=settings.RETRIEVAL_DIR, first=settings.RETRIEVAL_DEFAULT)
    return cached_probes(_stamped(probes.paths()))


@st.cache_data(show_spinner=False, max_entries=4, ttl=3600)
def cached_probes(files: tuple[tuple[str, float], ...]) -> CommittedProbes:
    errors: list[str] = []
    documents = tuple(record for path, _ in files
                      if (record := _record(Path(path), RetrievalDocument, errors)) is not None)
    return CommittedProbes(documents=documents, errors=tuple(errors))


@dataclass(frozen=True, kw_only=True)
class ProbeRequest:
    """A retrieval probe as the page asks for it, and cached_probe's cache key: a typed passage at one distance in
    the built-in filler, at each temperature."""

    model: str
    passage: str
    distance: int
    temperatures: tuple[float, ...]
    passage_tokens: int
    lead: int


@st.cache_data(show_spinner=False, max_entries=8, ttl=3600)
def cached_probe(request: ProbeRequest) -> RetrievalDocument:
    """The probe of `request` (model_utils.retrieval), admitted through the gate like a report, with a bar of its
    passes. A refusal raises AnalysisError, which is not cached."""
    from model_utils import RetrievalRequest, retrieval, retrieval_texts

    loaded = cached_model(request.model)
    progress = _Progress("Running the probe")
    who = _who()
    with GATE.admitted(who, on_wait=progress.queued):
        _share_the_cores()
        log.info("model pass %d for %s: a retrieval probe at %d tokens back, %d temperature(s)", next(_passes), who,
                 request.distance, len(request.temperatures))
        try:
            filler, passages = retrieval_texts(loaded, request.passage, "long", request.distance,
                                               request.passage_tokens, request.lead)
            probe = RetrievalRequest(distances=(request.distance,), views=tuple(View(t) for t in request.temperatures),
                                     trained_length=loaded.max_positions, lead=request.lead)
            document = retrieval(loaded, filler, passages, probe,
                                 cache_dir=settings.RETRIEVAL_PASSES or _probe_cache(),
                                 on_unit=lambda event: progress(Progress(
                                     stage=PASS, fraction=event.done / max(1, event.total), step=event.done + 1,
                                     steps=event.total, detail=event.label)))
        except AnalysisError:
            progress.close()
            raise
    progress.close()
    return document


def _probe_cache() -> Path:
    from model_utils.core.paths import cache_root

    return cache_root() / "retrieval"
