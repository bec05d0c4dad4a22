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


def domain_sentence(summary: TuneSummary, recipe: str) -> str | None:
    """Whether the answer holds on every kind of text: the range over domains of what `recipe` (a view's label)
    saves, against the range of the best constant temperature's saving per domain (in-sample: chosen per domain,
    which flatters the temperature). None without domains or without that view."""
    by_domain = [{lever.label: lever.saved for lever in entry.levers} for entry in summary.domains]
    constants = [result.label for result in summary.results if result.rope is None and result.schedule is None]
    if not by_domain or any(recipe not in savings for savings in by_domain):
        return None
    ours = [savings[recipe] for savings in by_domain]
    best = [max([0.0, *(savings[label] for label in constants if label in savings)]) for savings in by_domain]
    return (f"Per domain ({len(by_domain)} kinds of text): {recipe} saves {min(ours):+.2f} to {max(ours):+.2f} "
            f"nats per token past the trained length; the best constant T for each domain, chosen on it "
            f"(in-sample), {min(best):+.2f} to {max(best):+.2f}.")
