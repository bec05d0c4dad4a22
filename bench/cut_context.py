"""`python -m bench.cut_context [SWEEP.json ...]`: give a committed sweep that predates the cut-context reference the
reference and its verdict the rise on the same tokens, as `make sweep` now writes them, without the sweep's hours of
passes: the sweep's own command line (its `run` record) says its text and settings; T = 1's pass comes from its pass
cache or runs once, the reference's windows from CUT_DIR/<model> (or run there), and
verdicts.rise.with_same_token_rise changes the verdict's rise, the one function the sweep itself calls; a published
schedule's saving inside the trained length comes from the sweep's bucket means (verdicts.context.with_schedule_costs,
as the sweep computes it). Every other number of the file stays as it was. Default: every committed sweep."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path

from model_utils.cli.commands import cache_folder, read_text, sweep_settings
from model_utils.cli.requests import parse_request
from model_utils.core.files import write_atomic
from model_utils.core.records.sweep import SweepDocument
from model_utils.engine.plugin import load_model
from model_utils.experiments import committed
from model_utils.experiments.cut_context import CutSettings
from model_utils.experiments.sweep import cut_reference, run_passes
from model_utils.experiments.texts import text_digest
from model_utils.verdicts.context import with_schedule_costs
from model_utils.verdicts.rise import one_text_rise, with_same_token_rise

ROOT = Path(__file__).resolve().parents[1]
CUT_DIR = ROOT / "assets" / "passes" / "cut-context"  # one folder per model, committed


def upgrade(path: Path, cut_dir: Path = CUT_DIR) -> bool:
    """Add the reference to the sweep at `path` (written in place); False when it has one already."""
    document = committed.read(path, SweepDocument)
    if document.verdict is None:
        return False
    if document.cut_context is not None:  # only what is missing: the schedules' cost inside the trained length
        verdict = with_schedule_costs(document.verdict, document.results, document.buckets, document.n_tokens)
        if verdict == document.verdict:
            return False
        write_atomic(path, json.dumps(replace(document, verdict=verdict).to_dict(), ensure_ascii=False,
                                      allow_nan=False) + "\n")
        return True
    words = shlex.split(document.run.command)
    request = parse_request(words[words.index("model_utils") + 1 :], command=document.run.command)
    text, _ = read_text(request.source)
    if text_digest(text) != document.text_sha256:
        raise SystemExit(f"{path}: its command reads another text than the one it ran on")
    settings = sweep_settings(request)
    loaded = load_model(request.model, device=request.device)
    reference = run_passes(loaded, text, [1.0], settings, cache_folder(request))[0]
    cut = cut_reference(loaded, text, document.n_tokens, settings,
                        CutSettings(folder=cut_dir / loaded.name, stride=request.cut_context_stride))
    same = one_text_rise(reference.position_nll[document.trained_length :], cut)
    verdict = with_schedule_costs(document.verdict, document.results, document.buckets, document.n_tokens)
    upgraded = replace(document, cut_context=cut, verdict=with_same_token_rise(verdict, same))
    write_atomic(path, json.dumps(upgraded.to_dict(), ensure_ascii=False, allow_nan=False) + "\n")
    print(f"{path.name}: the rise on the same tokens is {same.rise:+.3f} nats per token "
          f"({same.interval[0]:+.3f} to {same.interval[1]:+.3f}; against earlier positions "
          f"{document.verdict.rise_against_earlier:+.3f})")
    return True


def main(argv: list[str]) -> None:
    paths = [Path(arg) for arg in argv] or committed.SWEEPS.paths()
    for path in paths:
        if not upgrade(path):
            print(f"{path.name}: has its cut-context reference already")


if __name__ == "__main__":
    main(sys.argv[1:])
