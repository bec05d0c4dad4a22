"""The Context length page's sections that are not charts by position: what is shown (a committed sweep, chosen by
model where several are committed, or your run, and the committed corpus summary, all read through one cached
function, serving.cache.committed_results, each carrying its verdict), the answer first (the lead verdict's one
sentence, its decomposition chart, then its headline numbers), and, each folded in an expander, the answers in full
with the other verdict's chart and the decomposition table, the committed sweeps side by side and the corpus per
domain, the committed fits, what was measured and how, and the downloads. Each section draws nothing when what it
needs is absent; every word of a verdict is model_utils.verdicts.words'."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from components.present import captions
from components.present.figures.context import fitted_against_law
from components.present.figures.decomposition import decomposition_chart
from components.present.glossary import term_link
from components.present.sweep_data import corpus_trained_length, line_groups, past_bucket_without_loss, summary_for
from components.present.text import plain
from components.serving import settings
from components.serving.cache import committed_results
from components.widgets.context_form import COMMITTED, YOURS
from components.widgets.downloads import sweep_downloads_ui
from model_utils.core.names import model_name
from model_utils.core.records.fit import FitSummary
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import ContextVerdict
from model_utils.verdicts import words
from model_utils.verdicts.fit import fit_order, judge_fit, law

# st.metric cuts a value or label that does not fit its column: four in a row leave 225 px each at 1,400 px, where
# "+0.174 nats/token" (36 px type) and "Held-out gain past the trained length" do not fit; two do
HEADLINES_PER_ROW = 2
METHOD = (
    "How it was measured: one long text runs through the model once per temperature, published schedule and RoPE "
    "recipe, each an in-model pass with the temperature in every layer; the loss and the attention statistics are "
    "averaged over buckets of query positions (causality makes one pass hold every shorter context: the query at "
    "position p sees the same p + 1 tokens whatever follows). The dashed line on every chart is the trained length. "
    "Past the length they are anchored to (here the trained length), the published schedules all **run at a "
    "temperature below 1: they sharpen**. A RoPE recipe changes the rotary positions instead (see the Length schedules "
    "page); YaRN adds its own attention factor, which yarn-rope leaves out. The verdict is computed from the numbers "
    "and may contradict popular explanations: it says what was measured, on one model and one text."
)


@dataclass(frozen=True, kw_only=True)
class Shown:
    """What the page draws: the sweep shown (a committed one or your run), every committed sweep, and the committed
    corpus summary with the trained length its charts mark (None where the page does not know it), each carrying
    the verdict written with it."""

    view: str | None  # COMMITTED or YOURS; None without a sweep to show
    document: SweepDocument | None
    path: Path | None  # the file of the committed sweep chosen (its download)
    committed: tuple[SweepDocument, ...]  # every committed sweep, the default first
    summary: TuneSummary | None
    corpus_trained: int | None
    fits: tuple[FitSummary, ...]  # the committed fits that read

    @property
    def verdict(self) -> ContextVerdict | None:
        """The shown sweep's verdict; None without one (no bucket past the trained length with a loss)."""
        return None if self.document is None else self.document.verdict

    @property
    def corpus(self) -> ContextVerdict | None:
        """The corpus's verdict, with the fits made on its documents folded in when they were written."""
        return None if self.summary is None else self.summary.verdict

    @property
    def groups(self) -> list[str]:
        """The shown sweep's groups of lines (sweep_data.line_groups)."""
        return [] if self.document is None else list(line_groups(self.document))


@dataclass(frozen=True, kw_only=True)
class Answer:
    """One verdict's answer as the page opens on it: where it was measured and what "held out" means there."""

    title: str
    verdict: ContextVerdict
    key: str  # of its decomposition chart
    chart_title: str = ""  # the model and the text or documents, over its chart (words.chart_title)


def shown_ui(yours: SweepDocument | None) -> Shown:
    """The committed sweeps and corpus summary, the choice between a committed sweep and your run when there is a
    run, and the choice of committed sweep by model when there are several; a note where the committed sweep would
    be when there is none. Drawn where the page puts it (under the answer, which it chooses)."""
    committed = committed_results()
    for error in committed.errors:
        st.error(error)
    sweeps = committed.sweeps
    views = [view for view, ready in ((COMMITTED, sweeps), (YOURS, yours)) if ready]
    if len(views) > 1:
        forget_stale("context_view", views)
        view = st.radio("Show", views, key="context_view", horizontal=True)
    else:
        view = views[0] if views else None
    path = committed_choice_ui(sweeps) if view == COMMITTED else next(iter(sweeps), None)
    document = yours if view == YOURS else sweeps.get(path)
    if document is None:
        st.info(f"There is no committed sweep at {plain(settings.CONTEXT_SWEEP)}: `make sweep` writes it. Run one "
                "with the form at the foot of the page.")
    several = len({found.model for found in sweeps.values()}) > 1
    summary = summary_for(committed.summaries, document, several)
    if summary is None and committed.summaries and document is not None:
        st.caption(f"No corpus tune of {plain(model_name(document.model))} is committed: its answer is on one text "
                   "(`python -m model_utils tune` writes one; `make tune-gemma` for Gemma 3 270M).")
    return Shown(view=view, document=document, path=path, committed=tuple(sweeps.values()), summary=summary,
                 fits=committed.fits, corpus_trained=None if summary is None else corpus_trained_length(
                     summary, (*sweeps.values(), yours)))


def committed_choice_ui(sweeps: dict[Path, SweepDocument]) -> Path | None:
    """The committed sweep to show: the only one, or the one chosen by model where several are committed."""
    if len(sweeps) < 2:
        return next(iter(sweeps), None)
    labels = {captions.committed_label(document): path for path, document in sweeps.items()}
    forget_stale("context_committed", list(labels))
    return labels[st.radio("Committed sweep", list(labels), key="context_committed", horizontal=True)]


def forget_stale(key: str, options: list) -> None:
    """Drop a widget's value that the shown document no longer offers (another model, another sweep)."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]


def answers(shown: Shown) -> list[Answer]:
    """The verdicts the page opens on, the lead first: your run when it is shown, else the corpus (held out over
    documents) before the committed sweep (one text)."""
    several = len({document.model for document in shown.committed}) > 1  # then each answer names its model
    run = "your run" if shown.view == YOURS else "the committed sweep" + (
        f" of {model_name(shown.document.model)}" if several else "")
    sweep = [] if shown.verdict is None else [Answer(
        title=f"One text, {run}{_scored(shown.verdict)}", verdict=shown.verdict, key="context_decomposition",
        chart_title=words.chart_title(shown.document.model, shown.verdict, shown.document.text_name))]
    of = f" of {model_name(shown.summary.model)}" if several and shown.summary is not None else ""
    corpus = [] if shown.corpus is None else [Answer(
        title=f"The corpus{of}{_scored(shown.corpus)}", verdict=shown.corpus, key="context_corpus_decomposition",
        chart_title=words.chart_title(shown.summary.model, shown.corpus))]
    return sweep + corpus if shown.view == YOURS else corpus + sweep


def _scored(verdict: ContextVerdict) -> str:
    """How the temperature's saving was scored, in the verdict's words ("held out over documents", "cross-fit on
    one text"), or nothing where it could not be scored apart from its choice."""
    held_out = verdict.gains.held_out
    return "" if held_out is None else f" ({words.scoring_short(held_out.scoring)})"


def answer_ui(shown: Shown) -> None:
    """The answer first: the lead verdict's one sentence (which lever brings the loss back, by how much, and the
    best temperature alone), its decomposition chart, then its headline numbers; first of all, why the sweep shown
    has no verdict where it has none."""
    document = shown.document
    if document is not None and shown.verdict is None:  # why the sweep shown has no answer, before any other's
        blocked = past_bucket_without_loss(document)
        st.info(words.no_context_verdict(document) if blocked is None else words.no_verdict_without_loss(blocked))
    said = answers(shown)
    if not said:
        return
    lead = said[0]
    st.markdown(f"**{plain(lead.title)}.** {plain(words.answer_point(lead.verdict))}")
    st.plotly_chart(decomposition_chart(lead.verdict.decomposition, title=lead.chart_title), key=lead.key)
    st.caption(f"Each bar: what a lever saves past the trained length, in {term_link('Loss', 'loss')} (nats per "
               f"token, lower is better), against T = 1; the {term_link('Rise', 'rise')} is how much the loss goes up "
               f"there. {term_link('Held out', 'Held out')} and {term_link('Cross-fit', 'cross-fit')}: scored on what "
               "the choice was not made on.")
    headline_ui(lead.verdict)


def answers_in_full_ui(shown: Shown) -> None:
    """Folded: every verdict's answer in full (every lever with its interval), the other verdict's decomposition
    chart, and the shown sweep's decomposition table."""
    said = answers(shown)
    if not said:
        return
    with st.expander("Every lever, in full: the answers and the decomposition table"):
        for index, answer in enumerate(said):
            st.markdown(f"**{plain(answer.title)}, in full.** {plain(words.answer(answer.verdict))}")
            if index:  # the lead's chart is the page's first
                st.plotly_chart(decomposition_chart(answer.verdict.decomposition, title=answer.chart_title),
                                key=answer.key)
        decomposition_table_ui(shown)


def headline_ui(verdict: ContextVerdict) -> None:
    """The verdict's few big numbers, led by the dominant lever, two to a row, each with how it was measured in its
    tooltip."""
    said = words.headlines(verdict)
    for row in range(0, len(said), HEADLINES_PER_ROW):
        for column, item in zip(st.columns(HEADLINES_PER_ROW), said[row : row + HEADLINES_PER_ROW], strict=False):
            note = words.headline_note(item)
            # the note (an interval, a ratio) as a grey line under the number: no arrow, no colour, no judgement
            column.metric(plain(item.label), plain(words.headline_number(item)), None if note is None else plain(note),
                          delta_color="off", delta_arrow="off", help=plain(item.help))


def decomposition_table_ui(shown: Shown) -> None:
    """The shown sweep's decomposition as the verdict's table (with where each view leaves the untrained-distance
    mass); absent without a RoPE recipe."""
    rows = [] if shown.verdict is None else words.decomposition_table(shown.verdict)
    if rows:
        st.markdown("**What brings the loss back past the trained length**, this text")
        st.table(rows, hide_index=True)  # a table: its cells wrap
        st.caption(plain(captions.decomposition_caption(remapped=shown.verdict.remaps)))


def tables_ui(shown: Shown) -> None:
    """Folded: every committed sweep's verdict in one row per model (words.side_by_side_rows, as the README's
    table), and the committed corpus's savings per domain past the trained length."""
    rows = [] if shown.summary is None else words.domain_rows(shown.summary)
    if not shown.committed and not rows:
        return
    with st.expander("The committed sweeps side by side, and the corpus per domain"):
        if shown.committed:
            st.table(words.side_by_side_rows(shown.committed), hide_index=True)  # a table: its cells wrap
            st.caption(plain(words.SIDE_BY_SIDE_CAPTION))
        if rows:
            st.markdown("**Per domain of the corpus**")
            st.table(rows, hide_index=True)
            st.caption(plain(words.DOMAINS_CAPTION))


def method_ui(shown: Shown) -> None:
    """The verdicts in full, the sweep's settings and the method, folded."""
    document = shown.document
    if document is None:
        return
    with st.expander("What this sweep measured, and how"):
        if shown.verdict is not None:
            st.markdown("**What this sweep measured past the trained length** (computed from its numbers):\n"
                        + _bullets(shown.verdict))
        if shown.corpus is not None:
            st.markdown("**What the corpus measured past the trained length**:\n" + _bullets(shown.corpus))
        st.caption(plain(captions.sweep_caption(document)))
        st.markdown(METHOD)


def _bullets(verdict: ContextVerdict) -> str:
    return "\n".join(f"- {plain(sentence)}" for sentence in words.sentences(verdict))


def fits_ui(shown: Shown) -> None:
    """Folded, the committed fits when there are any: one table row per fit (held-out gains with intervals), the
    fitted temperatures on YaRN's interpolation against YaRN's law as a temperature, and each fit's verdict."""
    if not shown.fits:
        return
    fits = fit_order(shown.fits)
    with st.expander("Fitted temperature, held out, against YaRN's law"):
        laws = [law(fit) for fit in fits]
        st.table(captions.fit_rows_in_t([words.fit_row(fit) for fit in fits], laws), hide_index=True)
        points = [{"scale": m.scale, "temperature": 1 / m.fitted, "range": [1 / m.interval[1], 1 / m.interval[0]],
                   "label": words.fit_point_label(fit)} for fit, m in zip(fits, laws, strict=True) if m is not None]
        if points:
            st.plotly_chart(fitted_against_law(points), key="context_fit_law")
        st.caption(plain(captions.fit_caption()))
        for fit in fits:
            st.markdown(f"**{plain(words.fit_point_label(fit))}**\n"
                        + "\n".join(f"- {plain(sentence)}" for sentence in words.fit_sentences(judge_fit(fit))))


def downloads_section_ui(shown: Shown) -> None:
    """The shown sweep as JSON (the committed file as it is, your run as it was made) and as CSV."""
    document = shown.document
    if document is None:
        return
    with st.expander("Downloads: the sweep as JSON and CSV"):
        if shown.view == COMMITTED:
            path = shown.path
            sweep_downloads_ui(document, lambda: path.read_text(encoding="utf-8"), "context-sweep")
        else:
            sweep_downloads_ui(document, lambda: json.dumps(document.to_dict(), allow_nan=False),
                               "context-sweep-run")
