"""The corpus summary's per-domain savings past the trained length as table rows, one per domain, shared by the
Context length page and docs/FINDINGS.md: each view's saving against T = 1 pooled over the domain's documents, each
document's own in brackets (one to four documents per domain give no interval). In-sample: nothing is chosen here."""

from __future__ import annotations

from model_utils.core.records.tune import TuneSummary

CAPTION = ("Per domain of the corpus, past the trained length: NLL per token at T = 1 and what each view saves "
           "against it (positive = better), pooled over the domain's documents, each document's own in brackets. "
           "Nothing is chosen on these numbers; they say whether the corpus's answer holds on each kind of text.")


def domain_rows(summary: TuneSummary) -> list[dict[str, str]]:
    """One row per domain: its name, documents, T = 1's NLL past the trained length, then one column per view."""
    return [{"domain": entry.domain, "documents": str(len(entry.documents)),
             "NLL at T = 1": f"{entry.nll_past_at_1:.3f}",
             **{lever.label: f"{lever.saved:+.3f} (" + ", ".join(f"{v:+.2f}" for v in lever.per_document) + ")"
                for lever in entry.levers}} for entry in summary.domains]
