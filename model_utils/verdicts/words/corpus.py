"""A corpus tune's words: its per-domain table and whether the answer holds on every kind of text, the note on
references not yet remeasured, how its spreads were made, the facts FINDINGS opens its block on, and the terminal
table of the best temperature per bucket (the best schedule per bucket is verdicts.corpus's pick)."""

from __future__ import annotations

from model_utils.core.bootstrap import MIN_FOR_INTERVAL
from model_utils.core.records.spread import Spread, SpreadMethod
from model_utils.core.records.tune import TuneSummary
from model_utils.core.views import View
from model_utils.verdicts.corpus import best_schedule
from model_utils.verdicts.domains import domain_ranges
from model_utils.verdicts.words.common import spread_name

__all__ = ["DOMAINS_CAPTION", "SPREAD_METHODS", "domain_rows", "domain_sentence", "spread_facts",
           "spread_method", "stale_reference_note", "tune_facts", "tune_table"]

DOMAINS_CAPTION = (
    "Per domain of the corpus, past the trained length: NLL per token at T = 1 and what each view saves "
    "against it (positive = better), pooled over the domain's documents, each document's own in brackets. "
    "Nothing is chosen on these numbers; they say whether the corpus's answer holds on each kind of text.")


def domain_rows(summary: TuneSummary) -> list[dict[str, str]]:
    """One row per domain: its name, documents, T = 1's NLL past the trained length, then one column per view, each
    view's saving pooled over the domain's documents with each document's own in brackets (one to four documents
    per domain give no interval)."""
    return [{"domain": entry.domain, "documents": str(len(entry.documents)),
             "NLL at T = 1": f"{entry.nll_past_at_1:.3f}",
             **{lever.label: f"{lever.saved:+.3f} (" + ", ".join(f"{v:+.2f}" for v in lever.per_document) + ")"
                for lever in entry.levers}} for entry in summary.domains]


def domain_sentence(summary: TuneSummary, view: View) -> str | None:
    """Whether the answer holds on every kind of text: the range over domains of what `view` (a recipe at T = 1)
    saves, against the range of the best constant temperature's saving per domain (in-sample: chosen per domain,
    which flatters the temperature). None without domains or without that view."""
    found = domain_ranges(summary, view)
    if found is None:
        return None
    ours, best, domains = found
    sizes = sorted({len(entry.documents) for entry in summary.domains})
    each = str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
    return (f"Per kind of text ({domains} kinds, each pooled over its {each} document"
            f"{'s' if sizes != [1] else ''}; a range's ends are single kinds, not an interval): {view.label} saves "
            f"{ours[0]:+.2f} to {ours[1]:+.2f} nats per token past the trained length; the best constant T for each "
            f"kind, chosen on it (in-sample), {best[0]:+.2f} to {best[1]:+.2f}.")


def stale_reference_note(lead: int) -> str:
    """Where a corpus's cut-context windows read the raw text while the model's tokenizer puts `lead` tokens (its
    BOS) before a text, as its sweep's windows read them: the rise below is not yet on a fresh read's reference."""
    what = "the BOS token" if lead == 1 else f"the {lead} tokens (the BOS first)"
    return (f"Not yet remeasured: these documents' cut-context windows read the raw text, without {what} the "
            "tokenizer puts before a text and the full read starts with, "
            "where the sweep's windows read it first; windows that start with it read the same words better, so "
            "the rise below is too small and its shares too large until the tune is rerun to remeasure them.")


SPREAD_METHODS = {  # how a sweep's or a corpus's intervals were made, the fact its file stores
    SpreadMethod.BLOCK_BOOTSTRAP: "moving-block bootstrap over the positions of each bucket",
    SpreadMethod.DOCUMENT_BOOTSTRAP: "documents resampled with replacement; the NLL of a bucket is pooled over the "
                                     "positions of the documents drawn (sum / count)",
    SpreadMethod.RANGE: "too few documents for a bootstrap: the range of the documents, each alone (its NLL of a "
                        "bucket over its own positions)"}


def spread_method(bootstrap, documents: int | None = None) -> str:
    """How a sweep's or a corpus's spreads were made, for a caption: "95% interval over 1,000 resamples (...)", or
    below MIN_FOR_INTERVAL documents "range of the 4 documents (...)" (the record's spread says which)."""
    block = "" if bootstrap.block is None else f", blocks of {bootstrap.block:,} positions"
    method = SPREAD_METHODS[bootstrap.method]
    if bootstrap.method.spread is Spread.RANGE:
        return f"{spread_name(Spread.RANGE, documents)} ({method})"
    return f"{bootstrap.confidence:.0%} interval over {bootstrap.resamples:,} resamples ({method}{block})"


def tune_table(summary: TuneSummary) -> str:
    """One line per bucket: the best constant temperature, its spread over documents, and what it saves against
    T = 1."""
    spread = "95% interval" if summary.bootstrap.spread is Spread.INTERVAL_95 else "range"
    corpus = summary.corpus
    tokens = sorted(set(corpus.tokens))
    length = f"{tokens[0]:,} tokens each" if len(tokens) == 1 else f"{tokens[0]:,}-{tokens[-1]:,} tokens"
    lines = [f"{summary.model}: {corpus.documents} documents, {length}; {len(summary.results)} passes per "
             f"document; {summary.workers} worker(s) x {summary.threads_per_worker} thread(s); "
             f"{summary.wall_seconds:.0f} s this run ({summary.computed_documents} computed), "
             f"peak {summary.peak_rss_gb.max} GB",
             f"{'positions':>15} {'docs':>4} {'best T':>7} {spread:>14} {'NLL at 1':>9} {'saved':>7} "
             f"{spread:>17}  best schedule (saved)"]
    for index, best in enumerate(summary.best):
        start, stop = best.bucket
        low, high = best.temperature_interval
        saved_low, saved_high = best.saved_interval
        schedule = best_schedule(summary, index)
        lines.append(f"{f'{start:,}-{stop - 1:,}':>15} {best.documents:>4} {best.temperature:>7g} "
                     f"{f'[{low:g}, {high:g}]':>14} {best.nll_at_1:>9.4f} {best.saved:>7.4f} "
                     f"{f'[{saved_low:.4f}, {saved_high:.4f}]':>17}  "
                     + (f"{schedule[0]} ({schedule[1]:+.4f})" if schedule else "-"))
    return "\n".join(lines)


def tune_facts(summary: TuneSummary) -> str:
    """What a corpus tune ran, as FINDINGS opens its block: model, documents, lengths, passes, each run's workers,
    time and memory, how the spreads were made (spread_facts) and the command."""
    corpus = summary.corpus
    tokens = sorted(set(corpus.tokens))
    runs = "; ".join(f"{run.computed_documents} documents on {run.workers} Ray worker(s) x "
                     f"{run.threads_per_worker} thread(s) in {run.wall_seconds / 60:.0f} min, peak memory "
                     f"{run.peak_rss_gb:.1f} GB per process ({run.date[:10]})" for run in summary.runs)
    return (f"{summary.model}, {corpus.documents} documents of {corpus.source} "
            f"({tokens[0]:,}" + (f"-{tokens[-1]:,}" if len(tokens) > 1 else "") + " tokens each), trained length "
            f"{summary.trained_length:,}, {len(summary.results)} passes per document, "
            f"{summary.compute_seconds / 3600:.1f} h of passes over all documents: {runs}. {spread_facts(summary)} "
            f"Command: `{summary.runs[-1].command}`.")


def spread_facts(summary: TuneSummary) -> str:
    """How the corpus's spreads were made: a 95% bootstrap over documents, or below MIN_FOR_INTERVAL documents their
    range (core.bootstrap.spread_over's rule, the summary's `spread`)."""
    if summary.bootstrap.spread is Spread.RANGE:
        return (f"Spreads: the range of the {summary.corpus.documents} documents, each alone (fewer than "
                f"{MIN_FOR_INTERVAL} documents: too few for a 95% interval).")
    return "Intervals: 95%, bootstrap over documents."
