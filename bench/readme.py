"""Write the README's "What we found" and docs' generated blocks from the committed result files, between
`<!-- NAME:start -->` / `<!-- NAME:end -->` and `<!-- figure:NAME -->` / `<!-- /figure -->` markers, so no page of
text drifts from the data (`python -m bench.readme sweep|tune|fit|found|figures|verdicts`). Every sentence is
model_utils.verdicts.words'; each function takes its result folder, so a test can point it at its own.
docs/ARCHITECTURE.md ("README and FINDINGS") says which file feeds which block and what `verdicts` rewrites."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from bench.timings import TIMINGS, read_timings
from model_utils.core import bootstrap, reach
from model_utils.core.files import write_atomic
from model_utils.core.names import model_as_run, model_name
from model_utils.core.records.fit import FitSummary
from model_utils.core.records.retrieval import RetrievalDocument
from model_utils.core.records.spread import Spread
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import ContextVerdict, Dominant
from model_utils.experiments import committed
from model_utils.verdicts import decomposition, findings, layers, past, words
from model_utils.verdicts.fit import fit_order, fold_fits, judge_fit
from model_utils.verdicts.words import common as words_common
from model_utils.verdicts.words import found as words_found

ROOT = Path(__file__).resolve().parent.parent  # the repository
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FINDINGS = DOCS / "FINDINGS.md"  # the findings in full; the README keeps the short form
CHART = "assets/screenshots/decomposition.png"  # the Context length page's decomposition chart (make screenshots)
NO_LMEVAL = "No lm-evaluation-harness run is committed yet: `make lmeval` writes the bundled model's."
NO_PROBE = "No retrieval probe is committed yet: `make retrieval` writes the bundled model's."
PROBE_LINK = "docs/PAGES.md#retrieval-at-a-distance"  # the Retrieval page, as docs/PAGES.md describes it


def replace_block(name: str, lines: list[str], readme: Path = README) -> bool:
    """Put `lines` between the markers of block `name` in the file `readme`; False when it has no such block."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = readme.read_text()
    if start not in text:
        return False
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    readme.write_text(pattern.sub(lambda _: "\n".join([start, *lines, end]), text))
    return True


def interval(values: list[float], digits: int | None = None, sign: str = "") -> str:
    """'0.9-1' (temperatures: as few digits as they need), '0.023-0.098' (with `digits`), or '+0.023 to +0.098'
    (with sign '+', for a saving that may be negative)."""
    low, high = (f"{v:g}" if digits is None else f"{v:{sign}.{digits}f}" for v in values)
    return low if low == high else f"{low} to {high}" if sign else f"{low}-{high}"


def bullets(verdict: ContextVerdict) -> list[str]:
    return [f"- {sentence}" for sentence in words.sentences(verdict)]


def table(header: list[str], rows: list[list[str]], align: str = "---:") -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + f"{align}|" * len(header),
            *["| " + " | ".join(cells) + " |" for cells in rows]]


def compared(results: Sequence) -> list:
    """The results shown next to T = 1 per bucket: every schedule, and every recipe at T = 1 (of a sweep, or of a
    summary as sweep_data.corpus_lines reads it)."""
    return [r for r in results if r.schedule is not None or (r.recipe is not None and r.temperature == 1)]


def bucket_table(buckets: Sequence[Sequence[int]], trained: int, reference_nll: Sequence, best: Sequence,
                 others: list[tuple[str, Sequence]], spread: str) -> list[str]:
    """Per bucket: the NLL at T = 1, the best constant temperature and what it saves (`best`: entries with bucket,
    temperature, saved and their spreads, which `spread` names: words.spread_name), what every other view (label,
    NLL per bucket) saves."""
    by_start = {entry.bucket[0]: entry for entry in best}
    header = ["positions", "NLL at T = 1", f"best T ({spread})", f"best T saves ({spread})",
              *[f"{label} saves" for label, _ in others]]
    rows = []
    for index, (start, stop) in enumerate(buckets):
        entry = by_start.get(start)
        nll = reference_nll[index]
        cells = [f"{start:,}-{stop - 1:,}" + (" (past)" if start >= trained else ""),
                 "-" if nll is None else f"{nll:.2f}"]
        cells += [f"{entry.temperature:g} ({interval(entry.temperature_interval)})",
                  f"{entry.saved:+.3f} ({interval(entry.saved_interval, 3, '+')})"] if entry else ["-", "-"]
        cells += ["-" if nll is None or other[index] is None else f"{nll - other[index]:+.3f}" for _, other in others]
        rows.append(cells)
    return table(header, rows)


def decomposition_table(verdict: ContextVerdict) -> list[str]:
    """The decomposition past the trained length: what each way saves there and where it leaves the
    untrained-distance mass (words.decomposition_table)."""
    rows = words.decomposition_table(verdict)
    return table(list(rows[0]), [list(row.values()) for row in rows], "---") if rows else []


def sweep_lines(document: SweepDocument) -> list[str]:
    """The verdict and the tables behind it: NLL by position at T = 1, the best temperature, what each schedule and
    recipe saves, and the decomposition past the trained length."""
    results = document.results
    verdict = document.verdict
    said = bullets(verdict) if verdict else ["- The text does not reach past the trained length."]
    lines = [words.sweep_facts(document), "", *said, "", f"Per bucket of positions ({words.SAVES_PER_TOKEN}):", "",
             *bucket_table(document.buckets, document.trained_length, document.reference().nll, document.best,
                           [(other.label, other.nll) for other in compared(results)],
                           words.spread_name(Spread.INTERVAL_95, None))]  # a bootstrap over the positions
    return lines + decomposition_lines(verdict)


def decomposition_lines(verdict: ContextVerdict | None) -> list[str]:
    """The decomposition table past the trained length, under its heading; none without one."""
    if not (verdict and words.decomposition_table(verdict)):
        return []
    return ["", f"Past the trained length, against T = 1 on the model's own positions ({words.SAVES_PER_TOKEN}):", "",
            *decomposition_table(verdict)]


def domain_lines(summary: TuneSummary) -> list[str]:
    """The per-domain table (words.domain_rows) under its caption, then whether the leading recipe's answer holds
    on every kind of text (words.domain_sentence); none without domains."""
    rows = words.domain_rows(summary)
    if not rows:
        return []
    lines = ["", words.DOMAINS_CAPTION, "", *table(list(rows[0]), [list(row.values()) for row in rows])]
    lever = None if summary.verdict is None else summary.verdict.decomposition.lever(Dominant.RECIPE)
    said = None if lever is None else words.domain_sentence(summary, lever.view)
    return lines + ([] if said is None else ["", said])


def lead_note(summary: TuneSummary, sweeps: Sequence[SweepDocument]) -> list[str]:
    """A line where the corpus's cut-context windows read less before the text than a sweep's of the same model
    (the tokenizer's BOS, which a fresh read starts with): its references are then not yet remeasured
    (words.stale_reference_note); none otherwise."""
    leads = [sweep.cut_context.lead for sweep in sweeps if sweep.model == summary.model and sweep.cut_context]
    mine = [cut.lead for cut in summary.cut_context or ()]
    if not leads or not mine or min(mine) >= max(leads):
        return []
    return ["", words.stale_reference_note(max(leads))]


def tune_lines(summary: TuneSummary, sweeps: Sequence[SweepDocument] = ()) -> list[str]:
    """The corpus verdict and, per bucket over the corpus, the NLL at T = 1, the best temperature and what it saves,
    and what each schedule and recipe saves; a note where its references read less than `sweeps` of its model."""
    by_view = {entry.view: entry for entry in summary.schedules + summary.recipes}
    shown = [result for result in summary.results
             if result.schedule is not None or (result.rope is not None and result.temperature == 1)]
    others = [(result.label, [entry.nll for entry in by_view[result.view].buckets])
              for result in shown if result.view in by_view]
    reference = [entry.nll_at_1 for entry in summary.best]
    verdict = summary.verdict
    lines = [words.tune_facts(summary), *lead_note(summary, sweeps), "", *(bullets(verdict) if verdict else []), "",
             f"Per bucket of positions ({words.SAVES_PER_TOKEN}):", "",
             *bucket_table(summary.buckets, summary.trained_length, reference, summary.best, others,
                           words.spread_name(summary.bootstrap.spread, summary.corpus.documents))]
    return lines + decomposition_lines(verdict) + domain_lines(summary)


def fit_lines(summaries: list[FitSummary]) -> list[str]:
    """A table of the committed fits (one row each, held-out gains with their intervals) and each fit's verdict."""
    fits = fit_order(summaries)
    if not fits:
        raise SystemExit(f"no fit.json under {committed.FITS.folder}: run `make fit`")
    columns = words.FIT_COLUMNS
    lines = [words.FIT_TABLE_CAPTION, "",
             "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(words.fit_row(fit)[column] for column in columns) + " |" for fit in fits]
    for fit in fits:
        command = "python -m model_utils fit ..." if fit.run is None else fit.run.command
        lines += ["", f"**{words.fit_point_label(fit)}** (`{command}`):", ""]
        lines += [f"- {sentence}" for sentence in words.fit_sentences(judge_fit(fit))[1:]]
    return lines


def other_tune_lines(summaries: Sequence[TuneSummary], sweeps: Sequence[SweepDocument] = ()) -> list[str]:
    """docs/FINDINGS.md's block of the corpus tunes after the first (another model's): each one's facts, verdict
    and tables as the first one's (tune_lines, with `sweeps` for its note), under the model's name; a line saying
    there is none otherwise."""
    return per_model(summaries, lambda summary: tune_lines(summary, sweeps), "No other model's corpus tune is "
                     "committed yet (`make tune-gemma` writes Gemma 3 270M's).")


def per_model(results: Sequence, lines_of, none: str, heading=lambda result: model_name(result.model)) -> list[str]:
    """Each result's lines (`lines_of`) under its heading (its model's name), a blank line between; `none` where
    there is none."""
    if not results:
        return [none]
    lines: list[str] = []
    for result in results:
        lines += [*([""] if lines else []), f"### {heading(result)}", "", *lines_of(result)]
    return lines


def fold_committed(tunes: Path = committed.TUNES.folder, fits: Path = committed.FITS.folder) -> list[Path]:
    """Rewrite every committed corpus summary with the committed fits made on its documents folded into its verdict
    (verdicts.fit.fold_fits), in the records' current format, as the tune command writes it; returns the files it
    changed. No pass runs: the verdict's numbers are the ones the tune stored."""
    found, changed = replace(committed.FITS, folder=fits).read(), []
    for path in replace(committed.TUNES, folder=tunes, first=None).paths():
        summary = fold_fits(committed.read(path, TuneSummary), found)
        payload = json.dumps(summary.to_dict(), ensure_ascii=False, allow_nan=False) + "\n"
        if payload != path.read_text():
            write_atomic(path, payload)
            changed.append(path)
    return changed


def figure_values(timings: Path = TIMINGS) -> dict[str, str]:
    """The timings the README's text quotes, as it quotes them, from the benchmarks' bench/timings.json."""
    found = read_timings(timings)

    def seconds(name: str) -> float:
        if name not in found:
            raise SystemExit(f"{timings} has no {name!r} timing: rerun the benchmark that writes it (`make bench`, "
                             "`make bench-pages`)")
        return found[name]["seconds"]

    return {"cold-start": f"about {seconds('cold-start'):.0f} s", "warm-start": f"about {seconds('warm-start'):.1f} s",
            "warm-up": f"about {seconds('warm-up'):.0f} s"}


def figure_files(root: Path = ROOT) -> list[Path]:
    """The Markdown files whose text may quote a figure: the README and every page of docs/."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def replace_figures(values: dict[str, str], files: Sequence[Path] | None = None) -> list[str]:
    """Write each figure between its markers in every file that has them; returns the names no file has a marker
    for."""
    files = figure_files() if files is None else files
    marked: set[str] = set()
    for path in files:
        text = path.read_text()
        for name, value in values.items():
            text = re.sub(rf"(<!-- figure:{re.escape(name)} -->).*?(<!-- /figure -->)",
                          lambda match, value=value: match[1] + value + match[2], text)
        marked |= {name for name in values if f"<!-- figure:{name} -->" in text}
        if text != path.read_text():
            path.write_text(text)
    return [name for name in values if name not in marked]


# === What we found: the README's short form and FINDINGS' opening ====================================================


def corpora(summaries: Sequence[TuneSummary]) -> list[tuple[str, ContextVerdict]]:
    """(model, corpus verdict) of each committed tune that has one, in committed.TUNES' order (the bundled model's
    first): what words.found_conclusion and words.found_bullets judge."""
    return [(summary.model, summary.verdict) for summary in summaries if summary.verdict is not None]


def found_lines(corpus_verdicts: Sequence[tuple[str, ContextVerdict]],
                probes: Sequence[RetrievalDocument] = ()) -> list[str]:
    """The README's "What we found": the conclusion (words.found_conclusion), at most three bullets with one number
    each (words.found_bullets; without a committed probe the third says where the probe will show), the chart and
    one link to FINDINGS."""
    said = words.found_bullets(corpus_verdicts, probes)
    if not probes and len(said) < 3:
        said.append(words.no_probe_bullet(PROBE_LINK))
    return [words.found_conclusion(corpus_verdicts), "", *[f"- {bullet}" for bullet in said], "",
            f"![What each lever brings back]({CHART})", "",
            "[All findings](docs/FINDINGS.md)."]


def models_of(sweeps: Sequence[SweepDocument], summaries: Sequence[TuneSummary]) -> list[str]:
    """The models the findings rest on, each as it ran (in full: which checkpoint, which quantization), in the order
    they first appear."""
    return list(dict.fromkeys(model_as_run(result.model, in_full=True) for result in (*sweeps, *summaries)))


def conclusion_lines(corpus_verdicts: Sequence[tuple[str, ContextVerdict]], models: list[str]) -> list[str]:
    """FINDINGS' opening: the README's conclusion sentence, then what it rests on."""
    return [f"**{words.found_conclusion(corpus_verdicts)}** {words.scope_sentence(models)}"]


def rises_lines(sweeps: Sequence[SweepDocument], summaries: Sequence[TuneSummary]) -> list[str]:
    """Every committed verdict's rise on the same words next to its rise against earlier positions, in nats per
    token (the loss: lower is better), the corpora first."""
    rows = [words.rise_row(summary.model, summary.verdict) for summary in summaries if summary.verdict is not None]
    rows += [words.rise_row(sweep.model, sweep.verdict, sweep.text_source) for sweep in sweeps
             if sweep.verdict is not None]
    return table(list(words.RISES_COLUMNS), rows, "---")


# Each constant that picks a word, where it lives and what it decides; its value is read from the code, so the table
# cannot drift from it (a renamed or moved constant fails here, at import).
THRESHOLDS = (
    (decomposition, "RECOVERS", "A lever \"does the recovery\" (the answer names it) when its interval clears 0 "
     "and its saving is at least this share of the rise; below it for every lever, most of the rise remains."),
    (words_common, "ALL_OF_IT", "A share of the rise at or above this (it rounds to 100% or more) is said as \"all of "
     "it\": the lever's loss ends at or below the cut-context reference's in the point estimate. A share above 100% "
     "is never said to be more than the rise: no interval on that difference was measured (see How to read this)."),
    (words_found, "HARDLY_HELPS", "The best temperature alone \"hardly helps\" (What we found) when it brings back "
     "less than this share of the rise on every model; else the most it brings back is said."),
    (past, "GONE", "A recipe makes the untrained-distance mass \"go away\" when it leaves at most this fraction of "
     "T = 1's."),
    (layers, "ABOVE_UNIFORM", "A share of the non-sink mass on untrained distances is \"above what uniform attention "
     "would give\" only at this many times uniform's share or more: a share within a tenth of it is a tie."),
    (bootstrap, "MIN_FOR_INTERVAL", "From this many documents (or passages) on, a spread over them is called a 95% "
     "interval; below, it is the range of the documents, and says how many."),
    (bootstrap, "CONFIDENCE", "The level of every interval called a 95% interval."),
    (reach, "REACH_SHARE", "The reach: where what the first copy of a passage saves on its repeat first falls "
     "below this share of what it saves at the shortest distance, given as the two measured distances it lies "
     "between."),
    (reach, "REFINE_TOKENS", "`--refine` adds distances inside a reach's bracket until its two measured distances "
     "are at most this many tokens apart,"),
    (reach, "REFINE_SHARE", "or this share of the nearer distance, whichever is larger."),
    (findings, "NEAR_UNIFORM", "A layer is \"near uniform\" above this mean normalized entropy of its heads."),
    (findings, "NEAR_ONE_HOT", "A layer is \"near one-hot\" (all the weight on one key) below it."),
    (findings, "LOSS_FACTOR", "A loss is \"far above\" the reference's beyond this many times it."),
    (findings, "ANSWER_FLOOR", "The answer's probability \"falls\" from at least this at the reference to under half "
     "of it."),
)
RULES = (  # a rule that picks a word and has no one value: a function of the bucket
    (past, "uniform_share", "Attention \"moves onto keys farther back than the trained length\" from the first bucket "
     "past it where T = 1's share of the non-sink mass on such keys is at least ABOVE_UNIFORM times this share, what "
     "uniform attention over the keys a layer sees would give; in no bucket, it \"keeps mostly to distances it was "
     "trained on\". Where a "
     "model has several layer types, each type is judged on its own keys (a sliding-window layer of 512 keys never "
     "sees a distance past a trained length of 32,768: its share is 0)."),
)


def module_path(module) -> str:
    """'model_utils/verdicts/past.py': where a module's constants live."""
    return f"`{module.__name__.replace('.', '/')}.py`"


def thresholds_lines() -> list[str]:
    """The constants and rules that pick a word, with their values read from the code."""
    rows = [[f"`{name}`", f"{getattr(module, name):g}", module_path(module), said] for module, name, said in THRESHOLDS]
    rows += [[f"`{name}()`", "per bucket of queries q and layer: the mean of max(0, v - L) / v, v = min(q, the "
              "layer's sliding span) the keys it sees, L the trained length",
              module_path(module), said] for module, name, said in RULES if callable(getattr(module, name))]
    return table(["constant", "value", "where", "what it decides"], rows, "---")


def sweeps_lines(documents: Sequence[SweepDocument]) -> list[str]:
    """The committed sweeps side by side (words.side_by_side_rows): its caption and one table row per sweep."""
    columns = words.SIDE_BY_SIDE_COLUMNS
    rows = words.side_by_side_rows(documents)
    return [words.SIDE_BY_SIDE_CAPTION, "", *table(list(columns), [[row[column] for column in columns] for row in rows],
                                                   "---")]


def other_sweep_lines(documents: Sequence[SweepDocument]) -> list[str]:
    """docs/FINDINGS.md's block of the sweeps after the first (another model's): each one's facts, verdict and
    tables as the first one's (sweep_lines), under the model's name; a line saying there is none otherwise."""
    return per_model(documents, sweep_lines,
                     "No other model's sweep is committed yet (`make sweep-gemma` writes Gemma 3 270M's).")


def write_found(folder: Path = committed.SWEEPS.folder, first: Path | None = committed.SWEEPS.first,
                readme: Path = README, tunes: Path = committed.TUNES.folder, probes: Path = committed.PROBES.folder,
                findings_file: Path = FINDINGS, lmevals: Path = committed.LMEVALS.folder) -> None:
    """The README's "What we found", and FINDINGS' conclusion, rises, committed sweeps side by side, retrieval
    probes, lm-evaluation-harness runs and thresholds: the blocks every committed file feeds (the sweeps of
    `folder`, `first` first; the bundled model's committed tune, then the others of `tunes`; the probes of `probes`,
    its bundled.json first; the lm-eval runs of `lmevals`)."""
    sweeps = replace(committed.SWEEPS, folder=folder, first=first).read()
    summaries = replace(committed.TUNES, folder=tunes).read()
    probed = replace(committed.PROBES, folder=probes, first=probes / committed.PROBES.first.name).read()
    found, runs = corpora(summaries), replace(committed.LMEVALS, folder=lmevals).read()
    blocks = [(readme, "found", found_lines(found, probed)),
              (findings_file, "conclusion", conclusion_lines(found, models_of(sweeps, summaries))),
              (findings_file, "rises", rises_lines(sweeps, summaries)),
              (findings_file, "sweeps", sweeps_lines(sweeps)),
              (findings_file, "retrieval", per_model(probed, words.retrieval_findings, NO_PROBE)),
              (findings_file, "lmeval", per_model(runs, words.lmeval_findings, NO_LMEVAL, words.lmeval_heading)),
              (findings_file, "thresholds", thresholds_lines())]
    for path, name, lines in blocks:
        if not replace_block(name, lines, path):
            raise SystemExit(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} has no "
                             f"<!-- {name}:start --> block")


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    if which == "figures":
        missing = replace_figures(figure_values())
        if missing:
            raise SystemExit(f"no README.md or docs/*.md has a <!-- figure:{missing[0]} --> marker")
        return
    if which == "found":
        write_found()
        return
    if which in ("tune", "fit", "verdicts"):  # the summaries carry the fits before any block is written from them
        for path in fold_committed():
            print(f"{path.relative_to(ROOT)}: the committed fits on its documents folded into its verdict")
    if which == "verdicts":
        which = "tune"
    if which == "sweep":
        sweeps = committed.SWEEPS.read()
        lines = sweep_lines(sweeps[0])
        if not replace_block("other-sweeps", other_sweep_lines(sweeps[1:]), FINDINGS):
            raise SystemExit("docs/FINDINGS.md has no <!-- other-sweeps:start --> block")
    elif which == "tune":
        summaries, sweeps = committed.TUNES.read(), committed.SWEEPS.read()
        lines = tune_lines(summaries[0], sweeps)
        if not replace_block("other-tunes", other_tune_lines(summaries[1:], sweeps), FINDINGS):
            raise SystemExit("docs/FINDINGS.md has no <!-- other-tunes:start --> block")
    elif which == "fit":
        lines = fit_lines(committed.FITS.read())
    else:
        raise SystemExit("usage: python -m bench.readme sweep|tune|fit|found|figures|verdicts")
    if not replace_block(which, lines, FINDINGS):
        raise SystemExit(f"docs/FINDINGS.md has no <!-- {which}:start --> block")
    write_found()


if __name__ == "__main__":
    main()
