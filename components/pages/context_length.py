"""Page 5, Context length: loss and attention by query position, past the model's trained length, at several
temperatures and schedules. Opens on the committed sweep (no model run) with a corpus summary next to it when there
is one, and runs the same sweep on a text and model of your choice."""

import json
from pathlib import Path

import streamlit as st

from components.present import captions, figures
from components.present.parsing import parse_choice
from components.present.sweep_data import (
    constant_temperatures,
    corpus_trained_length,
    default_comparison,
    distance_by_bucket,
    identical_results,
    n_layers,
    nll_by_bucket,
    past_bucket_without_loss,
    reference_result,
    statistic_by_bucket,
    summary_intervals,
)
from components.present.text import plain
from components.serving import settings
from components.serving.cache import cached_json_file, cached_model, cached_sweep
from components.widgets.controls import sidebar_choices
from components.widgets.downloads import sweep_downloads_ui
from components.widgets.url_state import linked_widget
from model_utils import AnalysisError, ModelLoadError
from model_utils.core.schedules import SCHEDULES, ScheduleRequest
from model_utils.core.statistics import STATISTIC_LABELS, STATISTICS
from model_utils.experiments.texts import SOURCE, builtin_text
from model_utils.verdicts.context import context_verdict

MEAN_OF_LAYERS = "mean of layers"
COMMITTED, YOURS = "the committed sweep", "your run"
BUILTIN_SOURCE = f"{SOURCE}, built-in text 'long'"  # as the command line's --builtin long records it
NLL_TITLE = "mean next-token NLL (nats)"


def read_committed(path: Path) -> dict | None:
    """A committed result file, parsed (cached by path and modification time); None when there is none."""
    if not path.is_file():
        return None
    try:
        return cached_json_file(str(path), path.stat().st_mtime)
    except (OSError, ValueError) as error:
        st.error(f"Cannot read {plain(path)}: {plain(error)}")
        return None


def checked_request(text: str, source: str, max_tokens: int, bucket_size: int, names: list[str],
                    beyond: bool) -> tuple | None:
    """The sweep to run, as the arguments of cached_sweep, or None after an error line: the checks that need no
    model run (T = 1 present, the schedules resolved at the trained length, the work budget) come first."""
    choices = sidebar_choices()
    temperatures = choices.temperatures
    if temperatures is None:
        st.error(f"Fix the temperatures in the sidebar: {plain(choices.error)}")
        return None
    if 1.0 not in temperatures:
        st.error(plain(captions.needs_reference(temperatures)))
        return None

    from model_utils import tokenize  # imports the engine: only when a sweep is asked for

    try:
        loaded = cached_model(choices.model)
        n_tokens = len(tokenize(loaded, text, max_tokens)[0])
        schedules = [schedule for name in names
                     for schedule in ScheduleRequest(name, "trained").resolve(loaded.max_positions, n_tokens)]
    except (AnalysisError, ModelLoadError) as error:
        st.error(plain(error))
        return None
    refusal = captions.sweep_over_budget(n_tokens, len(temperatures), len(schedules), settings.MAX_WORK,
                                         loaded.max_positions)
    if refusal is not None:
        st.error(plain(refusal))
        return None
    keys = (*temperatures, *((schedule.name, schedule.resolved_parameter) for schedule in schedules))
    return choices.model, text, keys, max_tokens, bucket_size, choices.window, beyond, source


def form_ui() -> dict | None:
    """The form's widgets; once submitted, what was asked for (the arguments of checked_request), else None."""
    choices = sidebar_choices()
    shown = ", ".join(f"{t:g}" for t in choices.temperatures) if choices.temperatures else "not valid"
    with st.form("context_form"):
        st.caption(f"Model {plain(choices.model)} and temperatures {shown} from the sidebar (1 must be among them), "
                   f"recent window {choices.window}. Each temperature and schedule runs as its own in-model pass with "
                   "T in every layer (the sidebar's mode does not apply). This server runs at most "
                   f"{settings.MAX_WORK:,} tokens x passes per request.")
        builtin = st.checkbox("Use the built-in long text (Python's own documentation)", value=True,
                              key="context_builtin")
        text = st.text_area("Your text (used when the box above is not ticked)", key="context_text",
                            max_chars=settings.MAX_TEXT_CHARS, height=110)
        tokens_column, bucket_column = st.columns(2)
        max_tokens = tokens_column.number_input("Tokens (a longer text is cut)", min_value=2,
                                                max_value=settings.MAX_WORK, value=2048, step=256,
                                                key="context_tokens")
        bucket_size = bucket_column.number_input("Bucket size (query positions)", min_value=0, value=256, step=64,
                                                 key="context_bucket", help="Boundaries at multiples of it, so a "
                                                 "trained length it divides falls on a boundary.")
        names = st.multiselect("Schedules, anchored at the model's trained length", list(SCHEDULES),
                               key="context_schedules", help="Each published schedule with its knob at the trained "
                               "length (YaRN: the scale tokens / trained length); see the Length schedules page.")
        beyond = st.checkbox("Run past the trained length", key="context_beyond",
                             help="The model is refused a text longer than its trained length unless this is "
                                  "ticked: past it, the model runs on positions it was not trained on.")
        if not st.form_submit_button("Run the sweep", key="context_run", type="primary"):
            return None
    return {"text": builtin_text("long") if builtin else text, "source": BUILTIN_SOURCE if builtin else "your text",
            "max_tokens": int(max_tokens), "bucket_size": int(bucket_size), "names": list(names),
            "beyond": bool(beyond)}


def your_run() -> dict | None:
    """The form, and the document of the last sweep it ran that succeeded (from the cache on a re-draw), if any."""
    with st.expander("Run the sweep on your own text and model", expanded="context_request" in st.session_state):
        submission = form_ui()
        if submission is not None:
            st.session_state.pop("context_request", None)  # a refused request shows its error, not an older run
            request = checked_request(**submission)
            if request is None:
                return None
            st.session_state["context_request"] = request
            st.session_state["context_view"] = YOURS
        request = st.session_state.get("context_request")
        if request is None:
            return None
        try:
            return cached_sweep(*request)
        except (AnalysisError, ModelLoadError) as error:
            st.error(plain(error))
            del st.session_state["context_request"]
            return None


def forget_stale(key: str, options: list) -> None:
    """Drop a widget's value that the shown document no longer offers (another model, another sweep)."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]


def verdict_ui(document: dict) -> None:
    """model_utils.findings' verdict in plain words, or why there is none."""
    verdict = context_verdict(document)  # leaves out a last bucket that holds only the last token (no loss)
    if verdict is not None:
        st.markdown("**What this sweep measured past the trained length** (computed from its numbers):\n"
                    + "\n".join(f"- {plain(sentence)}" for sentence in verdict.sentences()))
    elif (blocked := past_bucket_without_loss(document)) is not None:
        st.info(captions.past_bucket_without_loss(blocked))
    else:
        st.info(captions.no_context_verdict(document))


def panes(both: bool) -> tuple:
    """Where this text's chart and the corpus's go, and how wide they are drawn: side by side when both are shown,
    else one after the other."""
    if both:
        return *st.columns(2), figures.HALF_WIDTH
    container = st.container()
    return container, container, figures.FULL_WIDTH


st.title("Context length")
st.markdown(
    "How does a model do past the context length it was trained on, and what does a softmax temperature change "
    "there? One long text runs through the model once per temperature and once per published schedule; the loss "
    "and the attention statistics are averaged over buckets of query positions (causality makes one pass hold every "
    "shorter context: the query at position p sees the same p + 1 tokens whatever follows). The dashed line on "
    "every chart is the trained length. Past the length they are anchored to (here the trained length), the "
    "published schedules all **multiply the logits by m > 1: they sharpen**. The verdict is computed from the "
    "numbers and may contradict popular explanations: it says what was measured. The page opens on a committed "
    "sweep, with no model run; the form below runs one on your text."
)

yours = your_run()
committed = read_committed(settings.CONTEXT_SWEEP)
summary = read_committed(settings.CORPUS_SUMMARY)
views = [view for view, document in ((COMMITTED, committed), (YOURS, yours)) if document is not None]
if len(views) > 1:
    forget_stale("context_view", views)
    view = st.radio("Show", views, key="context_view", horizontal=True)
else:
    view = views[0] if views else None
document = yours if view == YOURS else committed

if document is None:
    st.info(f"There is no committed sweep at {plain(settings.CONTEXT_SWEEP)}: `make sweep` writes it (most of an "
            "hour on 2 cores). Run one with the form above.")
else:
    st.caption(plain(captions.sweep_caption(document)))
    verdict_ui(document)
    if view == COMMITTED:
        committed_path = settings.CONTEXT_SWEEP
        sweep_downloads_ui(document, lambda: committed_path.read_text(encoding="utf-8"), "context-sweep")
    else:
        sweep_downloads_ui(document, lambda: json.dumps(document, allow_nan=False), "context-sweep-run")

if document is not None:
    results, buckets, trained = document["results"], document["buckets"], document["trained_length"]
    labels = [result["label"] for result in results]
    styles = figures.sweep_styles([result["temperature"] for result in results], labels)
if summary is not None:
    trained_corpus = corpus_trained_length(summary, (committed, yours))
    corpus_labels = [result["label"] for result in summary["results"]]
    corpus_styles = figures.sweep_styles([result["temperature"] for result in summary["results"]], corpus_labels)

st.subheader("Loss by position")
single, corpus, width = panes(document is not None and summary is not None)
if document is not None:
    single.plotly_chart(figures.position_lines(buckets, [nll_by_bucket(result) for result in results], labels,
                                               styles, trained, NLL_TITLE, title="This text", width=width),
                        key="context_nll")
    hidden = captions.identical_lines(identical_results(results, "nll"))
    if hidden is not None:
        single.caption(plain(hidden))
if summary is not None:
    corpus.plotly_chart(figures.position_lines(
        summary["buckets"], [nll_by_bucket(result) for result in summary["results"]], corpus_labels, corpus_styles,
        trained_corpus, NLL_TITLE, title="Corpus (bands: intervals over documents)",
        intervals=[None if result["temperature"] is None else summary_intervals(result)  # schedules: lines only
                   for result in summary["results"]], width=width), key="context_corpus_nll")
    corpus.caption(plain(captions.corpus_caption(summary, trained_corpus)))

st.subheader("Best temperature per bucket")
single, corpus, width = panes(document is not None and summary is not None)
best_panes = ([(single, document, trained, "This text", "context_best")] if document is not None else []) + (
    [(corpus, summary, trained_corpus, "Corpus", "context_corpus_best")] if summary is not None else [])
for pane, result, trained_for, title, key in best_panes:
    pane.plotly_chart(figures.best_temperatures([entry["bucket"] for entry in result["best"]], result["best"],
                                                constant_temperatures(result), trained_for, title=title, width=width),
                      key=key)
    pane.caption(plain(captions.best_caption(result)))

if document is not None:
    st.subheader("Attention by position")
    layers = [MEAN_OF_LAYERS, *range(n_layers(document))]
    forget_stale("context_layer", layers)
    layer_column, statistic_column = st.columns(2)
    layer = linked_widget(layer_column.selectbox, "Layer", key="context_layer", url_key="layer",
                          default=MEAN_OF_LAYERS, options=layers, parse=lambda raw: parse_choice(raw, layers))
    statistic = linked_widget(statistic_column.selectbox, "Statistic", key="context_statistic", url_key="statistic",
                              default="normalized_entropy", options=STATISTICS, format_func=STATISTIC_LABELS.get,
                              parse=lambda raw: parse_choice(raw, STATISTICS))
    chosen_layer = None if layer == MEAN_OF_LAYERS else int(layer)
    st.plotly_chart(figures.position_lines(
        buckets, [statistic_by_bucket(result, statistic, chosen_layer) for result in results], labels, styles,
        trained, STATISTIC_LABELS[statistic], log_y=statistic == "top_ratio"), key="context_statistic_chart")
    st.caption(captions.position_caption(chosen_layer, statistic))
    hidden = captions.identical_lines(identical_results(results, "heads"))
    if hidden is not None:
        st.caption(plain(hidden))

    reference = reference_result(document)
    others = [label for label in labels if label != reference["label"]]
    if others:
        forget_stale("context_compare", others)
        compare = linked_widget(st.selectbox, "Distance profile: compare T = 1 with", key="context_compare",
                                url_key="compare", default=default_comparison(document), options=others,
                                parse=lambda raw: parse_choice(raw, others))
        compared = results[labels.index(compare)]
        st.plotly_chart(figures.distance_heatmaps(
            [distance_by_bucket(reference, chosen_layer), distance_by_bucket(compared, chosen_layer)],
            document["distance_bins"], buckets, [reference["label"], compare], trained), key="context_distance")
        st.caption(captions.distance_caption(chosen_layer))
