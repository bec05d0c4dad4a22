"""The corpus tune's summary (summary.json, written by experiments/tune/summary.py and the `tune` command) as a
record: per bucket and view the NLL pooled over documents with its interval, the best constant temperature per
bucket, what each schedule and recipe saves against T = 1, and the corpus's verdict (verdicts.corpus computes it, with
the fits made on its documents folded in by verdicts.fit.fold_fits). A view is a View (its to_dict in the JSON),
never a label to parse back."""

from __future__ import annotations

from dataclasses import dataclass, replace

from model_utils.core.records import RecordError, check_format, field
from model_utils.core.records.base import OLD_VIEW_KEYS, DocumentEntry, Record, old_view, read, read_value
from model_utils.core.records.run import RunInfo
from model_utils.core.records.spread import Spread, SpreadMethod, method_from_sentence
from model_utils.core.records.verdict import ContextVerdict, completed, upgraded_in
from model_utils.core.views import OfView, View

FORMAT = 4  # bump when a key changes; from_dict refuses other formats but OLDER
OLDER = (1, 2, 3)  # 3: the bootstrap's method as its sentence (_from_format_3); 2: also views by their labels
# (_from_format_2); 1: also no layer windows, and intervals over documents a bootstrap however few (read as such)
KIND = "corpus-tune summary"


@dataclass(frozen=True, kw_only=True)
class RowSettings(Record):
    """What every row of the tune depends on besides its document, as each row file's metadata holds it: compared
    on a rerun, so a folder is never extended with rows made otherwise."""

    format: int  # of the rows (experiments/tune/rows.py)
    model: str
    model_fingerprint: str
    specs: tuple[str, ...]  # the views' labels, in the order they ran
    max_tokens: int
    bucket_size: int
    q_start: int
    window: int
    trained_length: int | None  # None: the model's own
    beyond_trained: bool


@dataclass(frozen=True, kw_only=True)
class CorpusEntry(Record):
    """Which documents the tune covers: where they came from, how many tokens each, and which were skipped as
    duplicates of an earlier one."""

    source: str
    documents: int
    tokens: tuple[int, ...]  # per document, in the corpus's order
    duplicates_skipped: tuple[str, ...]
    listed: tuple[DocumentEntry, ...]


@dataclass(frozen=True, kw_only=True)
class TuneResult(OfView, Record):
    """One view over the corpus: its NLL per bucket pooled over documents (sum / count) with a bootstrap interval,
    and each statistic per bucket averaged over the documents' queries."""

    view: View
    nll: tuple[float, ...]  # [bucket]
    nll_interval: tuple[tuple[float, float], ...]  # [bucket] (low, high)
    statistics: dict[str, tuple[float, ...]]  # name -> [bucket]


@dataclass(frozen=True, kw_only=True)
class CorpusBest(Record):
    """The best constant temperature of one bucket on the model's own positions, what it saves against T = 1, and
    both intervals over documents (core.bootstrap.best_temperature)."""

    bucket: tuple[int, int]  # positions start..stop - 1
    documents: int  # that reach the bucket
    positions: int  # with a loss, over those documents
    temperature: float
    nll: float
    nll_at_1: float
    saved: float
    temperature_interval: tuple[float, float]
    saved_interval: tuple[float, float]


@dataclass(frozen=True, kw_only=True)
class Saving(Record):
    """What one view saves against T = 1 in one bucket (NLL at T = 1 minus its NLL; positive = better)."""

    bucket: tuple[int, int]
    documents: int
    positions: int
    nll: float
    saved: float
    saved_interval: tuple[float, float]


@dataclass(frozen=True, kw_only=True)
class Compared(OfView, Record):
    """A schedule or a view on a RoPE recipe, bucket by bucket against T = 1."""

    view: View
    buckets: tuple[Saving, ...]


@dataclass(frozen=True, kw_only=True)
class CorpusBootstrap(Record):
    """How the intervals were made: documents resampled with replacement, or below MIN_FOR_INTERVAL documents
    (core.bootstrap) their range, each document alone (the method's `spread`)."""

    resamples: int
    confidence: float
    seed: int
    method: SpreadMethod  # DOCUMENT_BOOTSTRAP or RANGE

    @property
    def spread(self) -> Spread:
        return self.method.spread

    @property
    def block(self) -> None:
        """None: documents are resampled, not blocks of positions (a sweep's bootstrap says its block size)."""
        return None


@dataclass(frozen=True, kw_only=True)
class PeakMemory(Record):
    """Peak resident memory in GB of the driver, of the busiest worker (None without workers) and of both."""

    driver: float
    workers: float | None
    max: float


@dataclass(frozen=True, kw_only=True)
class ComputingRun(RunInfo):
    """A run that computed documents into the folder: how it was made and with how many workers."""

    computed_documents: int
    workers: int
    threads_per_worker: int


@dataclass(frozen=True, kw_only=True)
class DomainLever(OfView, Record):
    """What one view saves past the trained length against T = 1 on one domain's documents (positive = better)."""

    view: View
    saved: float  # pooled over the domain's positions past the trained length
    per_document: tuple[float, ...]  # each document's own, in the order of DomainSavings.documents


@dataclass(frozen=True, kw_only=True)
class DomainSavings(Record):
    """One domain of the corpus past the trained length: its documents, T = 1's NLL there, and every other view's
    saving; too few documents for an interval, so each document's value is given instead."""

    domain: str
    documents: tuple[str, ...]  # sha256
    nll_past_at_1: float
    levers: tuple[DomainLever, ...]  # one per view but T = 1, in the order they ran


@dataclass(frozen=True, kw_only=True)
class DocumentCut(Record):
    """One document's cut-context reference (experiments.cut_context), pooled: its positions past the trained length
    read with at most the trained length before them, their NLL summed, the windows' stride, and the tokens each
    window reads before the text's (the tokenizer's lead, Gemma's BOS)."""

    sha256: str
    nll_sum: float
    positions: int
    stride: int
    min_context: int
    lead: int = 0  # 0 in files written before windows had a lead: they read the raw slice


@dataclass(frozen=True, kw_only=True)
class TuneSummary(Record):
    """summary.json. summarize_tune fills the numbers; `tune` adds how this run went (workers .. peak_rss_gb) and
    the command line the record of the runs (run, runs): None or empty until then."""

    model: str
    model_fingerprint: str
    settings: RowSettings
    trained_length: int
    corpus: CorpusEntry
    buckets: tuple[tuple[int, int], ...]  # the buckets some document reaches
    results: tuple[TuneResult, ...]  # one per view, in the order they ran
    best: tuple[CorpusBest, ...]  # [bucket]
    schedules: tuple[Compared, ...]
    recipes: tuple[Compared, ...]
    bootstrap: CorpusBootstrap
    compute_seconds: float  # every document's passes, over all runs that made them
    rows: str  # the folder of the rows, as given to the tuner
    verdict: ContextVerdict | None  # None: no bucket past the trained length, or none inside it
    workers: int | None = None
    threads_per_worker: int | None = None
    ray_address: str | None = None
    computed_documents: int | None = None
    skipped_documents: int | None = None
    wall_seconds: float | None = None
    peak_rss_gb: PeakMemory | None = None
    run: RunInfo | None = None  # this run
    runs: tuple[ComputingRun, ...] = ()  # every run that computed documents, oldest first
    domains: tuple[DomainSavings, ...] = ()  # per domain of a corpus whose documents carry one
    cut_context: tuple[DocumentCut, ...] | None = None  # per document; None: not measured (the rise is then against
    # the documents' earlier positions)
    layer_windows: tuple[int | None, ...] | None = None  # per layer, the keys a query sees in a sliding-window layer,
    # None for full attention (LoadedModel.sliding_windows()); None in format 1

    def to_dict(self) -> dict:
        return {"format": FORMAT, **super().to_dict()}

    @classmethod
    def from_dict(cls, data: dict, kind: str | None = None) -> TuneSummary:
        """The summary of a summary.json; RecordError for another format or a missing key. Summaries written
        before domains were summarized, or before the cut-context reference, read with none; a verdict written
        before its loss break held every past bucket's NLL at T = 1 reads it from the summary's own T = 1 result
        (with_past_nll), and one that named its passes by their labels reads them as the summary's own views."""
        summary = read(cls, upgraded(data), KIND)
        return replace(summary, verdict=completed(summary.verdict, summary.results, summary.buckets))


def upgraded(data: dict) -> dict:
    """A summary's JSON of this format, from this format or an older one."""
    found = check_format(data, KIND, FORMAT, OLDER)
    if found in (1, 2):
        data = _from_format_2(data)
    if found != FORMAT:
        data = _from_format_3(data)
    return upgraded_in(data, KIND, documents=field(field(data, "corpus", KIND), "documents", KIND))


def _from_format_3(data: dict) -> dict:
    """Formats 3 to 1 stored the bootstrap's method as its sentence (and 3 and 2 its spread, which the method says;
    format 1 made a bootstrap interval whatever the number of documents, and its sentence says so)."""
    return data | {"format": FORMAT, "bootstrap": method_from_sentence(field(data, "bootstrap", KIND), KIND)}


def _from_format_2(data: dict) -> dict:
    """Formats 2 and 1 stored each view as its label, temperature, schedule label and recipe (the comparisons and
    the domains' levers by the label alone)."""
    trained = field(data, "trained_length", KIND)
    lengths = (field(field(data, "settings", KIND), "max_tokens", KIND),)
    results = [{"view": old_view(entry, lengths, trained, KIND), **{key: value for key, value in entry.items()
                                                                   if key not in OLD_VIEW_KEYS}}
               for entry in field(data, "results", KIND)]
    views = {entry["label"]: result["view"] for entry, result in zip(data["results"], results, strict=True)}

    def by_label(entry: dict) -> dict:
        label = field(entry, "label", KIND)
        if label not in views:
            raise RecordError(f"this {KIND} compares {label}, a view none of its results ran: it is damaged; "
                              "regenerate it with the command that made it")
        return {"view": views[label], **{key: value for key, value in entry.items() if key not in OLD_VIEW_KEYS}}

    return data | {
        "format": 3, "results": results,
        **{key: [by_label(entry) for entry in field(data, key, KIND)] for key in ("schedules", "recipes")},
        "domains": [domain | {"levers": [by_label(lever) for lever in field(domain, "levers", KIND)]}
                    for domain in data.get("domains", [])]}


def previous_runs(data: dict) -> tuple[ComputingRun, ...]:
    """The runs that computed a folder's documents, from the summary.json a rerun replaces: of this format, or of
    the one before it (no format number; its runs are written the same way), so a summary rebuilt from older rows
    keeps the record of the runs that made them."""
    if isinstance(data, dict) and data.get("format") is None:
        return read_value(tuple[ComputingRun, ...], data.get("runs") or [], KIND)
    return TuneSummary.from_dict(data).runs
