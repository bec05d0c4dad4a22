"""The rise past the trained length on the same tokens (core.records.verdict.SameTokenRise): the loss at T = 1 of
the positions past it minus the loss of the same positions read with the context cut to the trained length
(core.records.cut_context), so that the text's own difficulty cancels. One text: a moving-block interval of the
per-position difference; a corpus: the rise pooled over documents, with their range below 8 documents and a 95%
bootstrap interval from 8 on (core.bootstrap.spread_over)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from model_utils.core.bootstrap import paired_block_interval, spread_over
from model_utils.core.records.cut_context import CutContextPass
from model_utils.core.records.spread import Spread
from model_utils.core.records.verdict import ContextVerdict, RiseBase, SameTokenRise
from model_utils.verdicts.decomposition import decompose

SEED = 0  # of the resamples: the same data always give the same interval


def one_text_rise(t1_past: np.ndarray, cut: CutContextPass, seed: int = SEED) -> SameTokenRise:
    """`t1_past`: T = 1's NLL of the positions past the trained length (a pass's position_nll[L:]), the positions
    `cut` scores."""
    if len(t1_past) != len(cut.position_nll):
        raise ValueError(f"the cut-context reference scores {len(cut.position_nll)} positions and the pass "
                         f"{len(t1_past)}: they were not made on the same text")
    rise, low, high = paired_block_interval(np.asarray(t1_past, dtype=np.float64) - cut.position_nll,
                                            np.random.default_rng(seed))
    return SameTokenRise(nll_cut=float(cut.position_nll.mean()), rise=rise, interval=(low, high),
                         spread=Spread.INTERVAL_95, stride=cut.stride, min_context=cut.min_context, documents=None)


def corpus_rise(t1_sums: np.ndarray, cut_sums: np.ndarray, counts: np.ndarray, *, stride: int, min_context: int,
                seed: int = SEED) -> SameTokenRise:
    """Per document [document]: T = 1's NLL summed over its positions past the trained length, the same with the
    cut context, and how many positions; the rise pooled over documents (sum / count) with its spread."""
    rows = np.stack([t1_sums, cut_sums, counts], axis=1).astype(np.float64)  # [document, 3]

    def pooled(chosen: np.ndarray) -> float:
        return float((chosen[:, 0].sum() - chosen[:, 1].sum()) / chosen[:, 2].sum())

    spread, low, high = spread_over(rows, pooled, np.random.default_rng(seed))
    return SameTokenRise(nll_cut=float(rows[:, 1].sum() / rows[:, 2].sum()), rise=pooled(rows),
                         interval=(float(low), float(high)), spread=spread, stride=stride, min_context=min_context,
                         documents=len(rows))


def with_same_token_rise(verdict: ContextVerdict, same: SameTokenRise) -> ContextVerdict:
    """`verdict` (verdicts/past.py, its rise against earlier positions) with the rise measured on the same tokens in
    its place: the decomposition's rise, base and dominant lever, and the held-out gain's share, are of `same.rise`.
    The one place a verdict's rise changes base: a sweep, a tune and the upgrade of a committed verdict call it."""
    held = verdict.gains.held_out
    if held is not None:
        held = replace(held, share_of_rise=held.saved / same.rise if same.rise > 0 else None)
    old = verdict.decomposition
    decomposition = decompose(rise=same.rise, rows=old.rows, untrained_constant_range=old.untrained_constant_range,
                              rise_base=RiseBase.CUT_CONTEXT)
    return replace(verdict, gains=replace(verdict.gains, held_out=held), decomposition=decomposition,
                   same_token_rise=same)
