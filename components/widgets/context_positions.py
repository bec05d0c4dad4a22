"""The Context length page's charts by query position: the loss (this text and the corpus side by side; four lines
by default, the rest behind a toggle), and, each folded in an expander, the best temperature per bucket and
attention (a statistic by layer, the untrained-distance mass of every pass, the distance profile against T = 1).
Each choice among what the shown document offers is kept in the link."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from components.present import captions
from components.present.figures.context import (
    BEST_STYLE,
    CUT_STYLE,
    best_temperatures,
    distance_heatmaps,
    pass_heatmap,
    position_lines,
    schedule_names,
    sweep_styles,
)
from components.present.glossary import term_link
from components.present.margins import FULL_WIDTH, HALF_WIDTH
from components.present.parsing import parse_choice
from components.present.sweep_data import (
    CUT_LABEL,
    HEADLINE_LINES,
    MAIN_LINES,
    OWN_POSITIONS,
    best_entries,
    best_nll_by_bucket,
    best_recipes,
    constant_temperatures,
    cut_context_by_bucket,
    default_comparison,
    distance_by_bucket,
    identical_results,
    lead_recipe,
    line_groups,
    n_layers,
    nll_by_bucket,
    reference_result,
    remaps,
    statistic_by_bucket,
    statistics_of,
    summary_intervals,
    untrained_rows,
)
from components.present.text import plain
from components.widgets.context_sections import Shown, forget_stale
from components.widgets.url_state import linked_widget, publish_to_url
from model_utils.core.statistics import STATISTIC_LABELS

MEAN_OF_LAYERS = "mean of layers"
NLL_TITLE = "loss, nats per token (lower is better)"
BEST_LABEL = "best constant T per bucket"


def choice_ui(widget, label: str, key: str, url_key: str, options: list, default=None, **kwargs):
    """A choice among what the shown document offers, kept in the link; its first option by default."""
    forget_stale(key, options)
    return linked_widget(widget, label, key=key, url_key=url_key, default=options[0] if default is None else default,
                         options=options, parse=lambda raw: parse_choice(raw, options), **kwargs)


def panes(shown: Shown) -> tuple:
    """Where this text's chart and the corpus's go, and how wide they are drawn: side by side when both are shown,
    else one after the other."""
    if shown.document is not None and shown.summary is not None:
        return *st.columns(2), HALF_WIDTH
    container = st.container()
    return container, container, FULL_WIDTH


def drawn_lines(document, indices: list[int], with_best: bool) -> tuple[list, list, list]:
    """The results `indices` of a document as the lines of a chart by position: their results, labels and styles
    (styles of the whole document, so a result keeps its colour whatever else is drawn), with the best constant
    temperature per bucket after T = 1 when asked."""
    results = document.results
    styles = sweep_styles([result.temperature for result in results], schedule_names(results),
                          [result.recipe for result in results])
    chosen = [results[index] for index in indices]
    labels, shown = [result.label for result in chosen], [styles[index] for index in indices]
    if with_best:
        chosen.insert(1, None)
        labels.insert(1, BEST_LABEL)
        shown.insert(1, BEST_STYLE)
    return chosen, labels, shown


@dataclass(frozen=True, kw_only=True)
class Lines:
    """The lines of a chart of the loss by position: each one's values by bucket, label and style, and the result
    it draws (None for the best-T line, which is no pass)."""

    values: list[np.ndarray]
    labels: list[str]
    styles: list[dict]
    results: list


def loss_lines(document, group: str) -> Lines:
    """The NLL by bucket of the results in `group` (a name of line_groups, or HEADLINE_LINES; the model's own
    positions where the document has no such group), with the best constant temperature per bucket in the main
    comparison and the headline lines, and the cut-context reference in the headline lines where the document
    has it."""
    groups = line_groups(document)
    reference = list(document.results).index(reference_result(document))
    if group == HEADLINE_LINES:  # T = 1, the best T, the recipe the verdict names, the cut context
        indices = [reference] + ([] if (recipe := lead_recipe(document)) is None else [recipe])
    elif group == MAIN_LINES:  # a corpus without recipes still has T = 1 and its best T per bucket
        indices = groups.get(MAIN_LINES, [reference])
    else:
        indices = groups.get(group, groups[OWN_POSITIONS])
    chosen, labels, styles = drawn_lines(document, indices, group in (MAIN_LINES, HEADLINE_LINES))
    values = [best_nll_by_bucket(document) if result is None else nll_by_bucket(result) for result in chosen]
    cut = cut_context_by_bucket(document) if group == HEADLINE_LINES else None
    if cut is not None:
        chosen, labels, styles, values = [*chosen, None], [*labels, CUT_LABEL], [*styles, CUT_STYLE], [*values, cut]
    return Lines(values=values, labels=labels, styles=styles, results=chosen)


def lines_ui(groups: list[str]) -> str:
    """The lines of the loss by position: the four headline lines, or with the toggle on, a group chosen (kept in
    the link, which turns the toggle on)."""
    if "context_every_line" not in st.session_state:
        st.session_state["context_every_line"] = "lines" in st.query_params
    if not st.toggle("Every line", key="context_every_line",
                     help="Off: T = 1, the best T per bucket, the best recipe and T = 1 with the context cut to the "
                          "trained length. On: every temperature, schedule and recipe, by group."):
        publish_to_url({"lines": None})
        return HEADLINE_LINES
    return choice_ui(st.selectbox, "Lines", "context_lines", "lines", groups) if len(groups) > 1 else OWN_POSITIONS


def loss_ui(shown: Shown) -> None:
    """The loss by position of the shown sweep (the lines chosen) and of the corpus, with its intervals."""
    groups = shown.groups
    if shown.document is None and shown.summary is None:
        return
    group = lines_ui(groups)
    single, corpus, width = panes(shown)
    if (document := shown.document) is not None:
        lines = loss_lines(document, group)
        single.plotly_chart(position_lines(document.buckets, lines.values, lines.labels, lines.styles,
                                           document.trained_length, NLL_TITLE,
                                           title="Loss by position: this text", width=width),
                            key="context_nll")
        single.caption(plain(captions.lines_caption(group, groups, cut=CUT_LABEL in lines.labels))
                       + f" The {term_link('Loss', 'loss')} of a {term_link('Bucket', 'bucket')} is the mean over "
                         f"its positions; the {term_link('Cut context', 'cut context')} reads the same tokens with "
                         "at most the trained length before each.")
        passes = [result for result in lines.results if result is not None]  # the best-T and cut lines are no pass
        hidden = captions.identical_lines(identical_results(passes, "nll"))
        if hidden is not None:
            single.caption(plain(hidden))
    if (summary := shown.summary) is not None:
        lines = loss_lines(summary, group)
        intervals = [None if result is None or result.temperature is None else summary_intervals(result)
                     for result in lines.results]  # schedules: lines only
        corpus.plotly_chart(position_lines(
            summary.buckets, lines.values, lines.labels, lines.styles, shown.corpus_trained, NLL_TITLE,
            title="Corpus (bands: intervals over documents)", intervals=intervals, width=width),
            key="context_corpus_nll")
        corpus.caption(plain(captions.corpus_caption(summary, shown.corpus_trained)))


def best_ui(shown: Shown) -> None:
    """The best constant temperature per bucket: of the shown sweep (on its own positions or a recipe chosen) and
    of the corpus, side by side, folded."""
    if shown.document is not None or shown.summary is not None:
        with st.expander("Best temperature per bucket"):
            best_panes_ui(shown)


def best_panes_ui(shown: Shown) -> None:
    document, summary = shown.document, shown.summary
    best_on = OWN_POSITIONS
    if document is not None:
        on_recipes = best_recipes(document)
        if on_recipes:
            best_on = choice_ui(st.selectbox, "Temperatures on", "context_best_on", "best_on",
                                [OWN_POSITIONS, *on_recipes])
    single, corpus, width = panes(shown)
    if document is not None:
        best_chart(single, document, recipe=None if best_on == OWN_POSITIONS else best_on,
                   trained=document.trained_length, title=f"This text, on {best_on}", key="context_best", width=width)
    if summary is not None:
        best_chart(corpus, summary, recipe=None, trained=shown.corpus_trained, title=f"Corpus, on {OWN_POSITIONS}",
                   key="context_corpus_best", width=width)


def best_chart(pane, document, *, recipe: str | None, trained: int | None, title: str, key: str, width: int) -> None:
    """One document's best temperature per bucket (a sweep or a summary), on `recipe` or the model's own positions
    when None, with how it was found."""
    entries = best_entries(document, recipe)
    pane.plotly_chart(best_temperatures([entry.bucket for entry in entries], entries,
                                        constant_temperatures(document, recipe), trained, title=title,
                                        width=width), key=key)
    pane.caption(plain(captions.best_caption(document, recipe)))


def attention_ui(shown: Shown) -> None:
    """Attention by position in the shown sweep, folded: a statistic of a layer (or their mean) for the lines
    chosen, the untrained-distance mass of every pass, and the distance profile of T = 1 against a pass chosen."""
    if shown.document is not None:
        with st.expander("Attention by position: a statistic by layer, the untrained distances, the distance "
                         "profile"):
            attention_charts_ui(shown)


def attention_charts_ui(shown: Shown) -> None:
    document = shown.document
    groups = shown.groups
    layer_column, statistic_column, lines_column = st.columns(3)
    layer = choice_ui(layer_column.selectbox, "Layer", "context_layer", "layer",
                      [MEAN_OF_LAYERS, *range(n_layers(document))])
    statistic = choice_ui(statistic_column.selectbox, "Statistic", "context_statistic", "statistic",
                          statistics_of(document), default="normalized_entropy", format_func=STATISTIC_LABELS.get)
    group = (choice_ui(lines_column.selectbox, "Lines", "context_statistic_lines", "statistic_lines",
                       groups[1:] if groups[0] == MAIN_LINES else groups) if len(groups) > 1 else OWN_POSITIONS)
    chosen_layer = None if layer == MEAN_OF_LAYERS else int(layer)
    chosen, drawn, styles = drawn_lines(document, line_groups(document)[group], False)
    st.plotly_chart(position_lines(
        document.buckets, [statistic_by_bucket(result, statistic, chosen_layer) for result in chosen], drawn, styles,
        document.trained_length, STATISTIC_LABELS[statistic], log_y=statistic == "top_ratio",
        title="Attention by position"), key="context_statistic_chart")
    st.caption(captions.position_caption(chosen_layer, statistic) + " " + captions.lines_caption(group, groups))
    hidden = captions.identical_lines(identical_results(chosen, "heads"))
    if hidden is not None:
        st.caption(plain(hidden))
    if "untrained_mass" in statistics_of(document):
        untrained_ui(document, chosen_layer)
    distance_ui(document, chosen_layer)


def untrained_ui(document, layer: int | None) -> None:
    """The untrained-distance mass by position of every pass, as a heatmap."""
    trained = document.trained_length
    values, labels = untrained_rows(document, layer)
    st.plotly_chart(pass_heatmap(document.buckets, values, labels, trained, "untrained-distance mass",
                                 title="Attention on untrained distances, every pass"), key="context_untrained")
    st.caption(plain(captions.untrained_caption(layer, trained, remapped=remaps(document))))


def distance_ui(document, layer: int | None) -> None:
    """The distance profile by position of T = 1 next to another pass chosen (a recipe's first, by default)."""
    labels = [result.label for result in document.results]
    reference = reference_result(document)
    others = [label for label in labels if label != reference.label]
    if not others:
        return
    compare = choice_ui(st.selectbox, "Distance profile: compare T = 1 with", "context_compare", "compare", others,
                        default=default_comparison(document))
    compared = document.results[labels.index(compare)]
    st.plotly_chart(distance_heatmaps(
        [distance_by_bucket(reference, layer), distance_by_bucket(compared, layer)], document.distance_bins,
        document.buckets, [reference.label, compare], document.trained_length), key="context_distance")
    st.caption(captions.distance_caption(layer))
