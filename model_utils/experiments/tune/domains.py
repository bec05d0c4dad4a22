"""Per domain of the corpus (a built-in document's kind of text), what every view saves past the trained length
against T = 1: does the corpus's answer hold on each kind of text, or does one domain carry it? One to four
documents per domain give no interval, so each document's own saving is listed beside the domain's pooled one."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from model_utils.core.records.tune import DomainLever, DomainSavings
from model_utils.core.views import View


def domain_savings(*, sums: np.ndarray, counts: np.ndarray, views: Sequence[View], domains: Sequence[str | None],
                   hashes: Sequence[str], reference: int, past: Sequence[int]) -> tuple[DomainSavings, ...]:
    """`sums` [document, view, bucket] NLL sums and `counts` [document, bucket] positions (documents in the order
    of `hashes` and `domains`); `past` the buckets past the trained length; `reference` T = 1's view. Empty when no
    document has a domain or no bucket lies past the trained length."""
    if not past or all(domain is None for domain in domains):
        return ()
    past_sums = sums[:, :, past].sum(axis=2)  # [document, view]
    past_counts = counts[:, past].sum(axis=1)  # [document]
    found = []
    for domain in dict.fromkeys(domain for domain in domains if domain is not None):
        members = [i for i, name in enumerate(domains) if name == domain and past_counts[i] > 0]
        if not members:
            continue
        pooled = past_sums[members].sum(axis=0) / past_counts[members].sum()  # [view]
        each = past_sums[members] / past_counts[members, None]  # [document, view]
        levers = tuple(DomainLever(view=view, saved=float(pooled[reference] - pooled[index]),
                                   per_document=tuple(float(value) for value in each[:, reference] - each[:, index]))
                       for index, view in enumerate(views) if index != reference)
        found.append(DomainSavings(domain=domain, documents=tuple(hashes[i] for i in members),
                                   nll_past_at_1=float(pooled[reference]), levers=levers))
    return tuple(found)
