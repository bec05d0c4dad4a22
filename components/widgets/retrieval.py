"""The Retrieval page's sections: the committed probe to show, its answer (the verdict's sentences, the reach chart,
the headline reaches), one passage at one distance token by token, the method and the table, and a probe of your
own passage. The words come from model_utils.verdicts.words; the pictures from present.retrieval."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.present.glossary import term_link
from components.present.retrieval import layer_mass_chart, loss_html, reach_chart, view_styles
from components.present.text import plain
from components.serving import settings
from components.serving.cache import ProbeRequest, cached_probe, committed_probes
from components.widgets.controls import sidebar_choices
from model_utils import AnalysisError, ModelLoadError
from model_utils.core.names import model_name
from model_utils.core.records.retrieval import RetrievalDocument
from model_utils.core.retrieval import LEAD_TOKENS, PASSAGE_TOKENS
from model_utils.core.views import View
from model_utils.verdicts.retrieval import REACH_SHARE
from model_utils.verdicts.words import (
    comebacks_sentence,
    reach_headline,
    reach_sentence,
    reach_short,
    reach_text,
    retrieval_method,
    shifts_sentence,
)

DEFAULT_PASSAGE = (settings.ASSETS / "essay.txt")
CHOSEN_DISTANCES = (256, 512, 1024, 2048, 3072, 3800)  # your probe: the text stays within RETRIEVAL_MAX_TOKENS
QUESTION = ("Plant a passage early in a long text and repeat it later: a model that can still reach the first copy "
            "predicts the repeat almost perfectly. How far back does that work, and does a temperature move it?")


def committed_ui() -> RetrievalDocument | None:
    """The committed probe to show: the bundled model's first, a choice when another model's is committed."""
    found = committed_probes()
    for error in found.errors:
        st.error(error)
    documents = list(found.documents)
    if not documents:
        st.info("No committed probe to show yet: `make retrieval` runs it (hours, in the background).")
        return None
    if len(documents) == 1:
        return documents[0]
    names = [document.model for document in documents]
    chosen = st.selectbox("Model", names, format_func=model_name, key="retrieval_model",
                          help="Each committed probe is one model's.")
    return documents[names.index(chosen)]


def default_views(document: RetrievalDocument) -> list[str]:
    """What the chart opens on: the constant temperatures at both ends and T = 1, and every recipe at T = 1."""
    constants = [v for v in document.views if v.temperature is not None and v.rope is None]
    ends = {min(constants, key=lambda v: v.temperature).label, max(constants, key=lambda v: v.temperature).label}
    return [v.label for v in document.views if v.label in ends or v == document.verdict.reference or v.rope is not None]


def answer_ui(document: RetrievalDocument) -> None:
    """The answer in one sentence, the reach chart, what each view does to the reach one click away, then the
    reaches as numbers."""
    st.markdown(f"**{plain(reach_headline(document.model, document.verdict))}**")
    chart = st.container()  # the chart first, its choice of lines under it
    labels = [view.label for view in document.views]
    shown = st.multiselect("Lines", labels, default=default_views(document), key="retrieval_lines",
                           help="Every temperature, published schedule and recipe the probe ran; the band is the "
                                "spread over the passages.")
    curves = [document.curve(view) for view in document.views if view.label in shown]
    chart.plotly_chart(reach_chart(curves, view_styles(document.views), document.trained_length, REACH_SHARE),
                       key="retrieval_reach")
    st.caption(f"{QUESTION} Each line: the {term_link('Loss', 'loss')} on a repeated "
               f"{term_link('Passage, filler', 'passage')} with nothing planted minus the loss with its first copy "
               f"planted that far back (higher: the model used the copy), mean of {len(document.passages)} passages. "
               f"The {term_link('Reach', 'reach')} is where the line falls below {REACH_SHARE:.0%} of its "
               "shortest-distance value: the dotted segment joins the two measured distances it lies between, and "
               "the open diamond on it is read between those points, not measured.")
    with st.expander("What each temperature and recipe does to the reach"):
        back = comebacks_sentence(document.curves)
        st.markdown(plain(reach_sentence(document.model, document.verdict)))
        st.markdown(plain(shifts_sentence(document.verdict, document.curves)) + (f" {plain(back)}" if back else ""))
    columns = st.columns(3)
    for column, view in zip(columns, _headline_views(document), strict=False):
        column.metric(f"reach at {view.label}", reach_short(document.curve(view).reach),
                      help=reach_text(document.curve(view).reach))


def _headline_views(document: RetrievalDocument) -> list[View]:
    """T = 1, the constant temperature that reaches farthest, and the recipe that reaches farthest."""
    best_t = document.verdict.best_temperature
    recipes = [v for v in document.views if v.rope is not None and document.curve(v).reach.value is not None]
    best_recipe = max(recipes, key=lambda v: document.curve(v).reach.value, default=None)
    chosen = [document.verdict.reference, None if best_t is None else View(best_t), best_recipe]
    return list(dict.fromkeys(view for view in chosen if view is not None))


def passage_ui(document: RetrievalDocument) -> None:
    """One passage at one distance: its repeat's tokens shaded by their loss at each chosen view, side by side, and
    where the repeat's queries look in every layer."""
    st.subheader("One passage, token by token")
    left, middle, right = st.columns(3)
    passage = left.selectbox("Passage", [p.name for p in document.passages], key="retrieval_passage")
    measured = sorted({point.distance for point in document.points})  # the grid's and those a refining added
    distance = middle.selectbox("Distance back", measured, index=len(measured) // 2,
                                format_func=lambda d: f"{d:,} tokens", key="retrieval_distance")
    views = right.multiselect("Views", [v.label for v in document.views], default=default_views(document)[:3],
                              key="retrieval_views")
    tokens = next(p for p in document.passages if p.name == passage).tokens
    by_label = {view.label: view for view in document.views}
    found = {(p.passage, p.distance, p.view): p for p in document.points}
    points = [found[key] for label in views if (key := (passage, distance, by_label[label])) in found]
    missing = [plain(label) for label in views if (passage, distance, by_label[label]) not in found]
    if missing:
        st.info(f"Not measured at {distance:,} tokens: {', '.join(missing)}. Each view is drawn only where it was "
                "measured (past the trained length the probe measures the recipes and T = 1 only).")
    for column, point in zip(st.columns(max(1, len(points))), points, strict=False):
        column.markdown(f"**{plain(point.view.label)}**: loss {point.planted.loss:.2f} with the copy, "
                        f"{point.unplanted.loss:.2f} without")
        column.html(loss_html(tokens, point.planted.token_nll))
    st.caption("The repeat, each token shaded by its loss with the copy planted (white: predicted, red: a surprise; "
               "the first token is not scored). Hover a token for its loss.")
    st.plotly_chart(layer_mass_chart(points, view_styles(document.views)), key="retrieval_layers")
    st.caption("In each layer, the weight the strongest head puts on the first copy of the token to be predicted "
               f"(what an {term_link('Induction copy', 'induction copy')} reads), averaged over the repeat's tokens; "
               "dotted: the same keys with nothing planted.")


def method_ui(document: RetrievalDocument) -> None:
    with st.expander("How it is measured"):
        st.markdown(plain(retrieval_method()))
        st.markdown(f"{len(document.passages)} passages, planted {document.lead} tokens into "
                    f"{plain(document.filler_source)}:")
        st.markdown("\n".join(f"- {plain(p.name)}: {plain(p.source)}" for p in document.passages))
        rows = [{"view": c.view.label, "reach": reach_text(c.reach),
                 **{f"{d:,}": f"{g:.2f} ({lo:.2f} to {hi:.2f})" for d, g, lo, hi in
                    zip(c.distances, c.gain, c.low, c.high, strict=True)}} for c in document.curves]
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        st.caption("What the copy saves, nats per token, by distance (the passages' range in brackets).")


def your_probe_ui() -> None:
    """Your own passage at one distance on the bundled model, at the sidebar's temperatures, with the time it
    will take said before it runs."""
    st.subheader("Your passage")
    choices = sidebar_choices()
    with st.form("retrieval_form"):
        passage = st.text_area("Passage to plant (its first 256 tokens)", DEFAULT_PASSAGE.read_text()[:1200],
                               key="retrieval_text", height=120, max_chars=settings.MAX_TEXT_CHARS)
        distance = st.selectbox("Distance back", CHOSEN_DISTANCES, index=2, format_func=lambda d: f"{d:,} tokens",
                                key="retrieval_own_distance")
        tokens = LEAD_TOKENS + distance + PASSAGE_TOKENS
        passes = 2 * len(choices.temperatures)
        seconds = passes * tokens / 1000 * settings.RETRIEVAL_SECONDS_PER_1K
        st.caption(f"Planted in the built-in long text, {passes} passes of about {tokens:,} tokens at the sidebar's "
                   f"temperatures (1 must be among them): about {seconds:.0f} s on 2 cores.")
        submitted = st.form_submit_button("Run the probe")
    if not submitted:
        return
    request = ProbeRequest(model=choices.model, passage=passage, distance=distance,
                           temperatures=tuple(choices.temperatures), passage_tokens=PASSAGE_TOKENS, lead=LEAD_TOKENS)
    try:
        document = cached_probe(request)
    except (AnalysisError, ModelLoadError) as error:
        st.error(plain(error))
        return
    for column, view in zip(st.columns(len(document.views)), document.views, strict=True):
        point = document.points[[p.view for p in document.points].index(view)]
        column.metric(view.label, f"saves {point.gain:.2f}",
                      help="nats per token: the loss without the copy minus with it")
        column.html(loss_html(document.passages[0].tokens, point.planted.token_nll))

