"""Write docs/FINDINGS.md's result blocks, the README's "What we found" and the figures its text quotes from the
committed result files (`python -m bench.readme sweep|tune|fit|found|figures|verdicts`), between `<!-- NAME:start -->`
/ `<!-- NAME:end -->` and `<!-- figure:NAME -->` / `<!-- /figure -->` markers, so neither file drifts from the data;
docs/ARCHITECTURE.md ("The verdicts") says which file feeds which block. Every verdict is the one its file stores,
said by model_utils.verdicts.words; `verdicts` (and `tune` and `fit`, first) rewrite the committed corpus summaries
with the committed fits made on their documents folded into their verdicts (verdicts.fit.fold_fits), no pass run.
The committed sweeps are SWEEP (the bundled model's, the first) and every other JSON file in its folder (another
model's, such as `make sweep-gemma`'s): each function takes the folder, so a test can point it at its own."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from model_utils.core.files import write_atomic
from model_utils.core.names import model_name
from model_utils.core.records.fit import FitSummary
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import ContextVerdict, Dominant
from model_utils.verdicts import words
from model_utils.verdicts.fit import fit_order, fold_fits

ROOT = Path(__file__).resolve().parent.parent  # the repository
SWEEPS = ROOT / "assets" / "sweeps"  # the committed sweeps, one per model
SWEEP = SWEEPS / "bundled-16k.json"  # the first: the FINDINGS sweep block and the README's lines on one text
TUNES = ROOT / "assets" / "tune"  # the committed corpus tunes, one per model
TUNE = TUNES / "bundled-builtin" / "summary.json"  # the first: the FINDINGS tune block and the README's corpus line
FITS = ROOT / "assets" / "fit"
FINDINGS = ROOT / "docs" / "FINDINGS.md"  # the long blocks; the README keeps "What we found"
CHART = "assets/screenshots/decomposition.png"  # the Context length page's decomposition chart (browser test)
RESULTS = ROOT / "bench" / "RESULTS.md"
PAGES = ROOT / "bench" / "PAGES.md"
SAVES = "saves = NLL at T = 1 minus NLL, in nats per token; positive = better"


def replace_block(name: str, lines: list[str], readme: Path = ROOT / "README.md") -> bool:
    """Put `lines` between the markers of block `name`; False when the README has no such block."""
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
                 others: list[tuple[str, Sequence]]) -> list[str]:
    """Per bucket: the NLL at T = 1, the best constant temperature and what it saves (`best`: entries with bucket,
    temperature, saved and their intervals), what every other view (label, NLL per bucket) saves."""
    by_start = {entry.bucket[0]: entry for entry in best}
    header = ["positions", "NLL at T = 1", "best T (95% interval)", "best T saves (95% interval)",
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
    recipes: dict[str, list[str]] = {}
    for result in results:
        if result.recipe is not None and result.temperature is not None:
            recipes.setdefault(result.recipe, []).append(f"{result.temperature:g}")
    facts = (f"{document.model}, {document.n_tokens:,} tokens of {document.text_source}, trained length "
             f"{document.trained_length:,}, buckets of {document.bucket_size:,} positions, temperatures "
             + ", ".join(f"{r.temperature:g}" for r in results if r.temperature is not None and r.recipe is None)
             + "".join(f"; {recipe} at T = {', '.join(temperatures)}" for recipe, temperatures in recipes.items())
             + f"; {document.seconds / 60:.0f} min of passes on {document.run.machine}, peak memory "
             f"{document.peak_rss_gb:.1f} GB. Command: `{document.run.command}` ({len(results)} passes, "
             "each cached as it finishes).")
    verdict = document.verdict
    said = bullets(verdict) if verdict else ["- The text does not reach past the trained length."]
    lines = [facts, "", *said, "", f"Per bucket of positions ({SAVES}):", "",
             *bucket_table(document.buckets, document.trained_length, document.reference().nll, document.best,
                           [(other.label, other.nll) for other in compared(results)])]
    return lines + decomposition_lines(verdict)


def decomposition_lines(verdict: ContextVerdict | None) -> list[str]:
    """The decomposition table past the trained length, under its heading; none without one."""
    if not (verdict and words.decomposition_table(verdict)):
        return []
    return ["", f"Past the trained length, against T = 1 on the model's own positions ({SAVES}):", "",
            *decomposition_table(verdict)]


def domain_lines(summary: TuneSummary) -> list[str]:
    """The per-domain table (words.domain_rows) under its caption; none without domains."""
    rows = words.domain_rows(summary)
    if not rows:
        return []
    return ["", words.DOMAINS_CAPTION, "", *table(list(rows[0]), [list(row.values()) for row in rows])]


def tune_lines(summary: TuneSummary) -> list[str]:
    """The corpus verdict and, per bucket over the corpus, the NLL at T = 1, the best temperature and what it saves,
    and what each schedule and recipe saves."""
    corpus = summary.corpus
    tokens = sorted(set(corpus.tokens))
    runs = "; ".join(f"{run.computed_documents} documents on {run.workers} Ray worker(s) x "
                     f"{run.threads_per_worker} thread(s) in {run.wall_seconds / 60:.0f} min, peak memory "
                     f"{run.peak_rss_gb:.1f} GB per process ({run.date[:10]})" for run in summary.runs)
    facts = (f"{summary.model}, {corpus.documents} documents of {corpus.source} "
             f"({tokens[0]:,}" + (f"-{tokens[-1]:,}" if len(tokens) > 1 else "") + " tokens each), trained length "
             f"{summary.trained_length:,}, {len(summary.results)} passes per document, "
             f"{summary.compute_seconds / 3600:.1f} h of passes over all documents: {runs}. Intervals: 95%, "
             f"bootstrap over documents. Command: `{summary.runs[-1].command}`.")
    by_label = {entry.label: entry for entry in summary.schedules + summary.recipes}
    shown = [result for result in summary.results
             if result.schedule is not None or (result.rope is not None and result.temperature == 1)]
    others = [(result.label, [entry.nll for entry in by_label[result.label].buckets])
              for result in shown if result.label in by_label]
    reference = [entry.nll_at_1 for entry in summary.best]
    verdict = summary.verdict
    lines = [facts, "", *(bullets(verdict) if verdict else []), "", f"Per bucket of positions ({SAVES}):", "",
             *bucket_table(summary.buckets, summary.trained_length, reference, summary.best, others)]
    return lines + decomposition_lines(verdict) + domain_lines(summary)


def fit_lines(summaries: list[FitSummary]) -> list[str]:
    """A table of the committed fits (one row each, held-out gains with their intervals) and each fit's verdict."""
    fits = fit_order(summaries)
    if not fits:
        raise SystemExit(f"no fit.json under {FITS}: run `make fit`")
    columns = words.FIT_COLUMNS
    lines = [f"Held out: each document is scored with the value fitted on the other fold's documents ({SAVES}, "
             "past the trained length; intervals: bootstrap over the held-out documents).", "",
             "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(words.fit_row(fit)[column] for column in columns) + " |" for fit in fits]
    for fit in fits:
        command = "python -m model_utils fit ..." if fit.run is None else fit.run.command
        lines += ["", f"**{words.fit_point_label(fit)}** (`{command}`):", ""]
        lines += [f"- {sentence}" for sentence in words.fit_sentences(fit)[1:]]
    return lines


def read_tune(path: Path = TUNE) -> TuneSummary:
    return TuneSummary.from_dict(json.loads(path.read_text()))


def read_tunes(folder: Path = TUNES, first: Path = TUNE) -> list[TuneSummary]:
    """The committed corpus summaries: `first` (when it is there), then every other `folder/*/summary.json`."""
    return [read_tune(path) for path in first_then_others(first, folder.glob("*/summary.json"))]


def other_tune_lines(summaries: Sequence[TuneSummary]) -> list[str]:
    """docs/FINDINGS.md's block of the corpus tunes after the first (another model's): each one's facts, verdict
    and tables as the first one's (tune_lines), under the model's name; a line saying there is none otherwise."""
    return per_model(summaries, tune_lines, "No other model's corpus tune is committed yet (`make tune-gemma` writes "
                     "Gemma 3 270M's).")


def per_model(results: Sequence, lines_of, none: str) -> list[str]:
    """Each result's lines (`lines_of`) under its model's name, a blank line between; `none` where there is none."""
    if not results:
        return [none]
    lines: list[str] = []
    for result in results:
        lines += [*([""] if lines else []), f"### {model_name(result.model)}", "", *lines_of(result)]
    return lines


def read_fits(folder: Path = FITS) -> list[FitSummary]:
    return [FitSummary.from_dict(json.loads(path.read_text())) for path in sorted(folder.glob("*/fit.json"))]


def fold_committed(tunes: Path = TUNES, fits: Path = FITS) -> list[Path]:
    """Rewrite every committed corpus summary with the committed fits made on its documents folded into its verdict
    (verdicts.fit.fold_fits), in the records' current format, as the tune command writes it; returns the files it
    changed. No pass runs: the verdict's numbers are the ones the tune stored."""
    found, changed = read_fits(fits), []
    for path in sorted(tunes.glob("*/summary.json")):
        summary = fold_fits(read_tune(path), found)
        payload = json.dumps(summary.to_dict(), ensure_ascii=False, allow_nan=False) + "\n"
        if payload != path.read_text():
            write_atomic(path, payload)
            changed.append(path)
    return changed


def figure_values(results: Path = RESULTS, pages: Path = PAGES) -> dict[str, str]:
    """The timings the README's text quotes, as it quotes them, from the committed benchmark files."""
    bench, page = results.read_text(), pages.read_text()

    def found(pattern: str, text: str, where: Path) -> float:
        match = re.search(pattern, text)
        if match is None:
            raise SystemExit(f"{where} has no line matching {pattern!r}: rerun the benchmark that writes it")
        return float(match.group(1))

    cold = found(r"\| cold start \(dequantize the GGUF, write the cache\) \| ([0-9.]+) \|", bench, results)
    warm = found(r"\| warm start \(from the cache\) \| ([0-9.]+) \|", bench, results)
    warm_up = found(r"warm-up done: .* ready in ([0-9.]+) s", page, pages)
    return {"cold-start": f"about {cold:.0f} s", "warm-start": f"about {warm:.1f} s",
            "warm-up": f"about {warm_up:.0f} s"}


def replace_figures(values: dict[str, str], readme: Path = ROOT / "README.md") -> list[str]:
    """Write each figure between its markers; returns the names the README has no marker for."""
    text = readme.read_text()
    for name, value in values.items():
        text = re.sub(rf"(<!-- figure:{re.escape(name)} -->).*?(<!-- /figure -->)",
                      lambda match, value=value: match[1] + value + match[2], text)
    readme.write_text(text)
    return [name for name in values if f"<!-- figure:{name} -->" not in text]


def found_lines(document: SweepDocument, summary: TuneSummary | None,
                others: Sequence[SweepDocument] = (), other_summaries: Sequence[TuneSummary] = ()) -> list[str]:
    """The README's "What we found", at most ten lines: the chart, the answer on the corpus (held out over
    documents) and on one text (cross-fit), the recipe families side by side where more than the frequency changes
    ran, what the published schedules do, the answer on each other committed sweep (`others`, after its model's
    corpus answer where `other_summaries` holds one), and the scope; every number from the stored verdicts (the
    corpus's with the fits made on its documents folded in). With sweeps of more than one model each line names the
    model it was measured on."""
    one = document.verdict
    corpus = None if summary is None else summary.verdict
    models = list(dict.fromkeys(model_name(sweep.model) for sweep in (document, *others)))

    def on(model: str) -> str:
        return f"{model_name(model)}, " if len(models) > 1 else ""

    lines = [f"![What brings the loss back past the trained length: each lever's saving on the scale of the rise]"
             f"({CHART})", ""]
    if corpus is not None:
        lines.append(f"- **On {on(summary.model)}{corpus_scope(corpus)}, held out over documents:** "
                     f"{words.answer(corpus)}")
        lines += domain_line(summary, corpus) + family_line(corpus)
    if one is not None:
        lines.append(f"- **On {on(document.model)}one text, cross-fit:** {words.answer(one)}")
        lines += family_line(one) + schedule_line(one, "here" if len(models) == 1 else f"on {models[0]}")
    for other in others:
        for other_summary in (found for found in other_summaries if found.model == other.model):
            other_corpus = other_summary.verdict
            if other_corpus is not None:
                lines.append(f"- **On {on(other.model)}{corpus_scope(other_corpus)}, held out over documents:** "
                             f"{words.answer(other_corpus)}")
        verdict = other.verdict
        if verdict is not None:
            lines.append(f"- **On {on(other.model)}one text, cross-fit:** {words.answer(verdict)}")
    lines.append(f"- {scope_sentence(models)} The verdicts in full, the per-bucket tables and the fits: "
                 "[docs/FINDINGS.md](docs/FINDINGS.md).")
    return lines


def corpus_scope(verdict: ContextVerdict) -> str:
    """'8 documents': what a corpus's answer rests on, as a README line names it."""
    return words.scope(verdict.documents).removeprefix("one model, ")


def scope_sentence(models: list[str]) -> str:
    """What the findings rest on: one small model, or each model named, and texts that ship with Python."""
    if len(models) == 1:
        return f"One small model ({models[0]}) and texts that ship with Python: not a law."
    return (f"{len(models)} small models ({', '.join(models)}), each on texts that ship with Python, every line on the "
            "model it names: not a law.")


def domain_line(summary: TuneSummary, verdict: ContextVerdict) -> list[str]:
    """The corpus's dominant recipe and the best constant T per domain (words.domain_sentence), when there are
    domains."""
    lever = verdict.decomposition.lever(Dominant.RECIPE)
    said = None if lever is None else words.domain_sentence(summary, words.row_label(lever))
    return [] if said is None else [f"- {said}"]


def family_line(verdict: ContextVerdict) -> list[str]:
    """The recipe families compared (words.families_sentence), where the results hold more than the frequency
    changes; nothing otherwise, so no claim is made on what was not measured."""
    said = words.families_sentence(verdict)
    return [] if said is None else [f"- **Frequency changes, distance remappings, sink + window:** {said}"]


def schedule_line(verdict: ContextVerdict, where: str = "here") -> list[str]:
    """The best and the worst published schedule on one text (`where`: "here", or "on <model>")."""
    said = words.schedules_line(verdict, where)
    return [] if said is None else [f"- {said}"]


def read_sweep(path: Path) -> SweepDocument:
    return SweepDocument.from_dict(json.loads(path.read_text()))


def read_sweeps(folder: Path = SWEEPS, first: Path = SWEEP) -> list[SweepDocument]:
    """The committed sweeps: `first` (when it is there), then every other JSON file of `folder` by name."""
    return [read_sweep(path) for path in first_then_others(first, folder.glob("*.json"))]


def first_then_others(first: Path, found) -> list[Path]:
    """`first` (when it is there), then the other paths of `found` by name."""
    return [first] * first.is_file() + sorted(path for path in found if path.resolve() != first.resolve())


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


def write_found(folder: Path = SWEEPS, first: Path = SWEEP, readme: Path = ROOT / "README.md",
                tunes: Path = TUNES) -> None:
    """The README's "What we found" and the committed sweeps side by side (its `sweeps` block)."""
    summary = read_tune() if TUNE.is_file() else None
    sweeps = read_sweeps(folder, first)
    others = read_tunes(tunes)[1 if summary is not None else 0:]
    if not replace_block("found", found_lines(sweeps[0], summary, sweeps[1:], others), readme):
        raise SystemExit("README.md has no <!-- found:start --> block")
    if not replace_block("sweeps", sweeps_lines(sweeps), readme):
        raise SystemExit("README.md has no <!-- sweeps:start --> block")


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    if which == "figures":
        missing = replace_figures(figure_values())
        if missing:
            raise SystemExit(f"README.md has no <!-- figure:{missing[0]} --> marker")
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
        sweeps = read_sweeps()
        lines = sweep_lines(sweeps[0])
        if not replace_block("other-sweeps", other_sweep_lines(sweeps[1:]), FINDINGS):
            raise SystemExit("docs/FINDINGS.md has no <!-- other-sweeps:start --> block")
    elif which == "tune":
        lines = tune_lines(read_tune())
        if not replace_block("other-tunes", other_tune_lines(read_tunes()[1:]), FINDINGS):
            raise SystemExit("docs/FINDINGS.md has no <!-- other-tunes:start --> block")
    elif which == "fit":
        lines = fit_lines(read_fits())
    else:
        raise SystemExit("usage: python -m bench.readme sweep|tune|fit|found|figures|verdicts")
    if not replace_block(which, lines, FINDINGS):
        raise SystemExit(f"docs/FINDINGS.md has no <!-- {which}:start --> block")
    write_found()


if __name__ == "__main__":
    main()
