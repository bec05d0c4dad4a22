"""`python -m bench.rekey_passes [--cache-dir DIR] [PROBE.json ...]`: move the retrieval pass caches to the keys of
this version. A unit's key hashed its recipe's label (6 significant digits, so two recipes could share a key) before
it hashed the recipe's canonical JSON (experiments.retrieval.grid.unit_key); a unit without a recipe keeps its key.
For each probe (default: every committed one, its cache in assets/passes/retrieval-<model>, as the Makefile keeps
it), the model is loaded, its filler and passages are tokenized again (checked against the probe's sha256), and the
old and new key of each of its points on a recipe are computed: a file under the old key is renamed to the new one.
Idempotent: a unit already under its new key is left as it is. The sweep's pass cache needs no script: a pass under
its old key is moved when a sweep looks it up (experiments.sweep.pass_path)."""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from model_utils.core.records.retrieval import RetrievalDocument
from model_utils.core.retrieval import Layout
from model_utils.core.views import View
from model_utils.engine.plugin import load_model
from model_utils.experiments import committed
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.experiments.retrieval.grid import FORMAT, RetrievalRequest, layout, unit_ids, unit_key
from model_utils.experiments.retrieval.passages import (
    PASSAGE_NAMES,
    Tokens,
    builtin_filler,
    builtin_passages,
    filler_source,
    filler_tokens,
    passage_tokens,
)
from model_utils.experiments.texts import BUILTIN_TEXTS
from model_utils.models import LoadedModel

ROOT = Path(__file__).resolve().parents[1]
PASSES = committed.ASSETS / "passes"


def old_unit_key(fingerprint: str, ids: Sequence[int], view: View, place: Layout, request: RetrievalRequest) -> str:
    """unit_key as it was: the recipe by its label."""
    multipliers = np.asarray(view.multipliers(len(ids)), dtype=np.float32).tobytes()
    parts = [str(FORMAT), fingerprint, hashlib.sha256(np.asarray(ids, dtype=np.int64).tobytes()).hexdigest(),
             "" if view.rope is None else view.rope.label, hashlib.sha256(multipliers).hexdigest(),
             repr((place.lead, place.passage, place.distance)), str(request.trained_length)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def texts(loaded: LoadedModel, probe: RetrievalDocument) -> tuple[Tokens, list[Tokens]]:
    """The probe's filler and passages as its run read them (a built-in text matched by its source, else the file
    its source names), each checked against the probe's sha256."""
    builtin = {filler_source(name): name for name in BUILTIN_TEXTS}
    if probe.filler_source in builtin:
        filler = builtin_filler(loaded, builtin[probe.filler_source], probe.filler_tokens)
    else:
        filler = filler_tokens(loaded, _read(probe.filler_source), probe.filler_source, probe.filler_tokens)
    passages = [builtin_passages(loaded, (entry.name,), len(entry.tokens))[0] if entry.name in PASSAGE_NAMES
                else passage_tokens(loaded, entry.name, _read(entry.source), entry.source, len(entry.tokens))
                for entry in probe.passages]
    wrong = [text.name for text, sha in zip([filler, *passages], [probe.filler_sha256,
                                                                 *(entry.sha256 for entry in probe.passages)],
                                            strict=True) if text.sha256 != sha]
    if wrong:
        raise SystemExit(f"{', '.join(wrong)}: not the tokens the probe read (another tokenizer or text version)")
    return filler, passages


def _read(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8", errors="replace")


def rekey(loaded: LoadedModel, probe: RetrievalDocument, cache_dir: Path) -> tuple[int, int]:
    """Rename each of the probe's units on a recipe from its old key to its new one in `cache_dir`: (renamed, found
    under the new key already)."""
    filler, passages = texts(loaded, probe)
    request = RetrievalRequest(distances=probe.distances, views=probe.views, trained_length=probe.trained_length,
                               beyond_trained=probe.beyond_trained, lead=probe.lead)
    fingerprint = model_fingerprint(loaded, portable=True)
    by_name = {passage.name: passage for passage in passages}
    renamed = kept = 0
    for point in (point for point in probe.points if point.view.rope is not None):
        passage = by_name[point.passage].ids
        place = layout(passage, point.distance, request)
        for planted in (True, False):
            ids = unit_ids(filler.ids, passage, point.distance, planted, request)
            new = cache_dir / f"{unit_key(fingerprint, ids, point.view, place, request)}.json"
            old = cache_dir / f"{old_unit_key(fingerprint, ids, point.view, place, request)}.json"
            if new.is_file():
                kept += 1
            elif old.is_file():
                old.rename(new)
                renamed += 1
    return renamed, kept


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.rekey_passes", description=__doc__.split("\n\n")[0])
    parser.add_argument("probes", nargs="*", type=Path, help="retrieval JSON files (default: the committed ones)")
    parser.add_argument("--cache-dir", type=Path, help="their pass cache (default: assets/passes/retrieval-MODEL)")
    args = parser.parse_args(argv)
    for path in args.probes or committed.PROBES.paths():
        probe = committed.read(path, RetrievalDocument)
        cache_dir = args.cache_dir or PASSES / f"retrieval-{probe.model}"
        renamed, kept = rekey(load_model(probe.model), probe, cache_dir)
        print(f"{path.name}: {renamed} passes renamed, {kept} already under their key, in {cache_dir}")


if __name__ == "__main__":
    main()
