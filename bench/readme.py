"""Write the README's result blocks from the committed result files, so the README never drifts from them.

    python -m bench.readme sweep   # the context-length block, from assets/sweeps/bundled-16k.json
    python -m bench.readme tune    # the corpus block, from assets/tune/bundled-builtin/summary.json

Each block sits between `<!-- NAME:start -->` and `<!-- NAME:end -->` in README.md. `make sweep` and `make tune`
run this after writing their result; `make bench` writes its own block (bench/__main__.py) the same way.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository
SWEEP = ROOT / "assets" / "sweeps" / "bundled-16k.json"
TUNE = ROOT / "assets" / "tune" / "bundled-builtin" / "summary.json"


def replace_block(name: str, lines: list[str], readme: Path = ROOT / "README.md") -> bool:
    """Put `lines` between the markers of block `name`; False when the README has no such block."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = readme.read_text()
    if start not in text:
        return False
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    readme.write_text(pattern.sub(lambda _: "\n".join([start, *lines, end]), text))
    return True


def interval(values: list[float], digits: int | None = None) -> str:
    """'0.9-1' (temperatures: as few digits as they need) or '0.023-0.098' (with `digits`)."""
    low, high = (f"{v:g}" if digits is None else f"{v:.{digits}f}" for v in values)
    return low if low == high else f"{low}-{high}"


def sweep_lines(document: dict) -> list[str]:
    """The verdict and the table behind it: NLL by position at T = 1, the best temperature, the schedules."""
    from model_utils.verdicts.context import context_verdict

    results = {result["label"]: result for result in document["results"]}
    reference = next(result for result in document["results"] if result["temperature"] == 1.0)
    schedules = [result for result in document["results"] if result["schedule"] is not None]
    best = {tuple(entry["bucket"]): entry for entry in document["best"]}
    header = ["positions", "NLL at T = 1", "best T (95% interval)", "NLL it saves (95% interval)",
              *[f"{s['label'].split(' (')[0]}: NLL - T = 1's" for s in schedules]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
    for index, (start, stop) in enumerate(document["buckets"]):
        entry = best.get((start, stop))
        cells = [f"{start:,}-{stop - 1:,}" + (" (past)" if start >= document["trained_length"] else ""),
                 f"{reference['nll'][index]:.2f}"]
        cells += [f"{entry['temperature']:g} ({interval(entry['temperature_interval'])})",
                  f"{entry['saved']:.3f} ({interval(entry['saved_interval'], 3)})"] if entry else ["-", "-"]
        cells += [f"{s['nll'][index] - reference['nll'][index]:+.2f}" for s in schedules]
        lines.append("| " + " | ".join(cells) + " |")
    verdict = context_verdict(document)
    said = verdict.sentences() if verdict else ["The text does not reach past the trained length."]
    facts = (f"{document['model']}, {document['n_tokens']:,} tokens of {document['text_source']}, trained length "
             f"{document['trained_length']:,}, buckets of {document['bucket_size']:,} positions, temperatures "
             + ", ".join(f"{r['temperature']:g}" for r in document["results"] if r["temperature"] is not None)
             + f"; {document['seconds'] / 60:.0f} min of passes on {document['run']['machine']}, peak memory "
             f"{document['peak_rss_gb']:.1f} GB. Command: `{document['run']['command']}` ({len(results)} passes, "
             "each cached as it finishes).")
    return [facts, "", *[f"- {sentence}" for sentence in said], "", *lines]


def tune_lines(summary: dict) -> list[str]:
    """Per bucket over the corpus: NLL at T = 1, the best temperature and what it saves, each schedule's saving."""
    corpus = summary["corpus"]
    tokens = sorted(set(corpus["tokens"]))
    runs = "; ".join(f"{run['computed_documents']} documents on {run['workers']} Ray worker(s) x "
                     f"{run['threads_per_worker']} thread(s) in {run['wall_seconds'] / 60:.0f} min, peak memory "
                     f"{run['peak_rss_gb']:.1f} GB per process ({run['date'][:10]})" for run in summary["runs"])
    facts = (f"{summary['model']}, {corpus['documents']} documents of {corpus.get('source', 'the corpus')} "
             f"({tokens[0]:,}" + (f"-{tokens[-1]:,}" if len(tokens) > 1 else "") + " tokens each), trained length "
             f"{summary['trained_length']:,}, {len(summary['results'])} passes per document: {runs}. Intervals: 95%, "
             f"bootstrap over documents. Command: `{summary['runs'][-1]['command']}`.")
    names = [entry["label"].split(" (")[0] for entry in summary["schedules"]]
    header = ["positions", "NLL at T = 1", "best T (95% interval)", "NLL it saves (95% interval)",
              *[f"{name}: saves" for name in names]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header)]
    for index, best in enumerate(summary["best"]):
        start, stop = best["bucket"]
        cells = [f"{start:,}-{stop - 1:,}", f"{best['nll_at_1']:.2f}",
                 f"{best['temperature']:g} ({interval(best['temperature_interval'])})",
                 f"{best['saved']:.3f} ({interval(best['saved_interval'], 3)})",
                 *[f"{entry['buckets'][index]['saved']:+.3f}" for entry in summary["schedules"]]]
        lines.append("| " + " | ".join(cells) + " |")
    return [facts, "", *lines]


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    if which == "sweep":
        lines = sweep_lines(json.loads(SWEEP.read_text()))
    elif which == "tune":
        lines = tune_lines(json.loads(TUNE.read_text()))
    else:
        raise SystemExit("usage: python -m bench.readme sweep|tune")
    if not replace_block(which, lines):
        raise SystemExit(f"README.md has no <!-- {which}:start --> block")


if __name__ == "__main__":
    main()
