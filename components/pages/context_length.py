"""Page 5, Context length: loss and attention by query position, past the model's trained length, at several
temperatures, schedules and RoPE recipes. Opens on the committed sweep (no model run): its headline numbers and the
loss by position first, the verdict and the method below them, a corpus summary next to it when there is one; a form
runs the same sweep on a text and model of your choice."""

import json

import numpy as np
import streamlit as st

from components.present import captions, figures
from components.present.parsing import parse_choice
from components.present.sweep_data import (
    MAIN_LINES,
    OWN_POSITIONS,
    best_entries,
    best_nll_by_bucket,
    best_recipes,
    constant_temperatures,
    corpus_trained_length,
    default_comparison,
    distance_by_bucket,
    identical_results,
    line_groups,
    n_layers,
    nll_by_bucket,
    past_bucket_without_loss,
    reference_result,
    statistic_by_bucket,
    statistics_of,
    summary_intervals,
)
from components.present.text import plain
from components.serving import settings
from components.serving.cache import cached_model, cached_sweep, read_committed, read_committed_sweep
from components.widgets.controls import sidebar_choices
from components.widgets.downloads import sweep_downloads_ui
from components.widgets.url_state import linked_widget
from model_utils import AnalysisError, ModelLoadError
from model_utils.core.records.fit import FitSummary
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.core.rope import MAX_FACTOR, RECIPES, Rope
from model_utils.core.schedules import SCHEDULES, ScheduleRequest
from model_utils.core.statistics import STATISTIC_LABELS
from model_utils.experiments.texts import SOURCE, builtin_text
from model_utils.verdicts.context import ContextVerdict, context_verdict
from model_utils.verdicts.corpus import corpus_verdict
from model_utils.verdicts.fit import FitVerdict, fit_verdicts

MEAN_OF_LAYERS = "mean of layers"
COMMITTED, YOURS = "the committed sweep", "your run"
BUILTIN_SOURCE = f"{SOURCE}, built-in text 'long'"  # as the command line's --builtin long records it
NLL_TITLE = "mean next-token NLL (nats)"
NO_RECIPE = "none"
BEST_LABEL = "best constant T per bucket"
# st.metric cuts a value or label that does not fit its column: four in a row leave 225 px each at 1,400 px, where
# "+0.174 nats/token" (36 px type) and "Held-out gain past the trained length" do not fit; two do
HEADLINES_PER_ROW = 2
METHOD = (
    "How it was measured: one long text runs through the model once per temperature, published schedule and RoPE "
    "recipe, each an in-model pass with the temperature in every layer; the loss and the attention statistics are "
    "averaged over buckets of query positions (causality makes one pass hold every shorter context: the query at "
    "position p sees the same p + 1 tokens whatever follows). The dashed line on every chart is the trained length. "
    "Past the length they are anchored to (here the trained length), the published schedules all **multiply the "
    "logits by m > 1: they sharpen**. A RoPE recipe changes the rotary positions instead (see the Length schedules "
    "page); YaRN adds its own attention factor, which yarn-rope leaves out. The verdict is computed from the numbers "
    "and may contradict popular explanations: it says what was measured, on one model and one text."
)


def fits_ui(verdicts: list[FitVerdict]) -> None:
    """The committed fits: one table row each (held-out gains with intervals), the fitted logit multipliers on
    YaRN's interpolation against YaRN's law, and each fit's verdict."""
    st.subheader("Fitted temperature, held out, against YaRN's law")
    st.table([verdict.row() for verdict in verdicts], hide_index=True)  # a table: its cells wrap
    points = [{"scale": m.scale, "multiplier": m.fitted, "range": list(m.interval),
               "label": f"{verdict.name}, {verdict.summary.settings.max_tokens:,} tokens"}
              for verdict in verdicts if (m := verdict.law) is not None]
    if points:
        st.plotly_chart(figures.fitted_against_law(points), key="context_fit_law")
    st.caption(plain(captions.fit_caption()))
    with st.expander("What the fits measured"):
        for verdict in verdicts:
            st.markdown(f"**{plain(verdict.name)}, {verdict.summary.settings.max_tokens:,} tokens**\n"
                        + "\n".join(f"- {plain(sentence)}" for sentence in verdict.sentences()))


def checked_request(text: str, source: str, max_tokens: int, bucket_size: int, names: list[str],
                    beyond: bool, recipe: tuple[str, float] | None) -> tuple | None:
    """The sweep to run, as the arguments of cached_sweep, or None after an error line: the checks that need no
    model run (T = 1 present, the recipe, the schedules resolved at the trained length, the work budget) come
    first. A recipe the model cannot take is refused by the engine when the sweep starts."""
    choices = sidebar_choices()
    temperatures = choices.temperatures
    if temperatures is None:
        st.error(f"Fix the temperatures in the sidebar: {plain(choices.error)}")
        return None
    if 1.0 not in temperatures:
        st.error(plain(captions.needs_reference(temperatures)))
        return None
    try:
        rope = None if recipe is None else Rope(*recipe)
    except ValueError as error:
        st.error(plain(error))
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
                                         loaded.max_positions, None if rope is None else rope.label)
    if refusal is not None:
        st.error(plain(refusal))
        return None
    keys = (*temperatures, *((schedule.name, schedule.resolved_parameter) for schedule in schedules))
    on_recipe = () if rope is None else tuple((rope.kind, rope.factor, t) for t in temperatures)
    return choices.model, text, keys, max_tokens, bucket_size, choices.window, beyond, source, on_recipe


def recipe_name(kind: str) -> str:
    return kind if kind == NO_RECIPE else f"{kind}: {RECIPES[kind].name}"


def form_ui() -> dict | None:
    """The form's widgets; once submitted, what was asked for (the arguments of checked_request), else None."""
    choices = sidebar_choices()
    shown = ", ".join(f"{t:g}" for t in choices.temperatures) if choices.temperatures else "not valid"
    with st.form("context_form"):
        st.caption(f"Model {plain(choices.model)} and temperatures {shown} from the sidebar (1 must be among them), "
                   f"recent window {choices.window}. Each temperature and schedule runs as its own in-model pass with "
                   "T in every layer (the sidebar's mode does not apply); with a RoPE recipe, each temperature runs "
                   "on it too. This server runs at most "
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
        recipe_column, factor_column = st.columns(2)
        kind = recipe_column.selectbox("RoPE recipe (every temperature also runs on it)", [NO_RECIPE, *RECIPES],
                                       key="context_recipe", format_func=recipe_name,
                                       help="A change of the rotary positions, as transformers implements it; "
                                            "the Length schedules page says what each one does.")
        factor = factor_column.number_input("Its scale factor s (the length you run at / the trained length)",
                                            min_value=1.01, max_value=MAX_FACTOR, value=2.0, step=0.5,
                                            key="context_factor")
        beyond = st.checkbox("Run past the trained length", key="context_beyond",
                             help="The model is refused a text longer than its trained length unless this is "
                                  "ticked: past it, the model runs on positions it was not trained on.")
        if not st.form_submit_button("Run the sweep", key="context_run", type="primary"):
            return None
    return {"text": builtin_text("long") if builtin else text, "source": BUILTIN_SOURCE if builtin else "your text",
            "max_tokens": int(max_tokens), "bucket_size": int(bucket_size), "names": list(names),
            "beyond": bool(beyond), "recipe": None if kind == NO_RECIPE else (kind, float(factor))}


def your_run() -> SweepDocument | None:
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


def choice_ui(widget, label: str, key: str, url_key: str, options: list, default=None, **kwargs):
    """A choice among what the shown document offers, kept in the link; its first option by default."""
    forget_stale(key, options)
    return linked_widget(widget, label, key=key, url_key=url_key, default=options[0] if default is None else default,
                         options=options, parse=lambda raw: parse_choice(raw, options), **kwargs)


def headline_ui(verdict: ContextVerdict | None) -> None:
    """The verdict's few big numbers, two to a row, each with how it was measured in its tooltip."""
    said = [] if verdict is None else verdict.headline()
    for row in range(0, len(said), HEADLINES_PER_ROW):
        for column, item in zip(st.columns(HEADLINES_PER_ROW), said[row : row + HEADLINES_PER_ROW], strict=False):
            number, qualifier = captions.metric_parts(item.value)
            # the qualifier (an interval, a ratio) as a grey note under the number: no arrow, no colour, no judgement
            column.metric(plain(item.label), plain(number), None if qualifier is None else plain(qualifier),
                          delta_color="off", delta_arrow="off", help=plain(item.help))


def verdict_ui(document: SweepDocument, verdict: ContextVerdict | None) -> None:
    """The verdict (model_utils.verdicts) in plain words, or why there is none."""
    if verdict is not None:
        st.markdown("**What this sweep measured past the trained length** (computed from its numbers):\n"
                    + "\n".join(f"- {plain(sentence)}" for sentence in verdict.sentences()))
    elif (blocked := past_bucket_without_loss(document)) is not None:
        st.info(captions.no_verdict_without_loss(blocked))
    else:
        st.info(captions.no_context_verdict(document))


def panes(both: bool) -> tuple:
    """Where this text's chart and the corpus's go, and how wide they are drawn: side by side when both are shown,
    else one after the other."""
    if both:
        return *st.columns(2), figures.HALF_WIDTH
    container = st.container()
    return container, container, figures.FULL_WIDTH


def drawn_lines(document, indices: list[int], with_best: bool) -> tuple[list, list, list]:
    """The results `indices` of a document as the lines of a chart by position: their results, labels and styles
    (styles of the whole document, so a result keeps its colour whatever else is drawn), with the best constant
    temperature per bucket after T = 1 when asked."""
    results = document.results
    styles = figures.sweep_styles([result.temperature for result in results], [result.label for result in results],
                                  [result.recipe for result in results])
    chosen = [results[index] for index in indices]
    labels, shown = [result.label for result in chosen], [styles[index] for index in indices]
    if with_best:
        chosen.insert(1, None)
        labels.insert(1, BEST_LABEL)
        shown.insert(1, figures.BEST_STYLE)
    return chosen, labels, shown


def loss_lines(document, group: str) -> tuple[list[np.ndarray], list[str], list[dict], list]:
    """The NLL by bucket of the results in `group` (a name of line_groups; the model's own positions where the
    document has no such group), with the best constant temperature per bucket in the main comparison: values,
    labels, styles, and the results drawn (None for the best-T line, which is no pass)."""
    groups = line_groups(document)
    if group == MAIN_LINES:  # a corpus without recipes still has T = 1 and its best T per bucket
        indices = groups.get(MAIN_LINES, [list(document.results).index(reference_result(document))])
    else:
        indices = groups.get(group, groups[OWN_POSITIONS])
    chosen, labels, styles = drawn_lines(document, indices, group == MAIN_LINES)
    values = [best_nll_by_bucket(document) if result is None else nll_by_bucket(result) for result in chosen]
    return values, labels, styles, chosen


st.title("Context length")
st.markdown(
    "How does a model do past the context length it was trained on (the dashed line), and what brings it back: a "
    "softmax temperature, a published schedule, or a RoPE recipe? Drawn from a committed sweep, no model run; what "
    "it measured and how, under the loss chart."
)

yours = your_run()
committed = read_committed_sweep(settings.CONTEXT_SWEEP)
summary = read_committed(settings.CORPUS_SUMMARY, TuneSummary)
views = [view for view, document in ((COMMITTED, committed), (YOURS, yours)) if document is not None]
if len(views) > 1:
    forget_stale("context_view", views)
    view = st.radio("Show", views, key="context_view", horizontal=True)
else:
    view = views[0] if views else None
document = yours if view == YOURS else committed

if document is None:
    st.info(f"There is no committed sweep at {plain(settings.CONTEXT_SWEEP)}: `make sweep` writes it. Run one with "
            "the form above.")
else:
    results, buckets, trained = document.results, document.buckets, document.trained_length
    labels = [result.label for result in results]
    groups = list(line_groups(document))
if summary is not None:
    trained_corpus = corpus_trained_length(summary, (committed, yours))
# the shown sweep's verdict (a bucket holding only the last token, which has no loss, is left out); the corpus's
# when there is no sweep to show
verdict = context_verdict(document) if document is not None else None
corpus_said = corpus_verdict(summary) if summary is not None else None
headline_ui(verdict if document is not None else corpus_said)

group = (choice_ui(st.selectbox, "Lines", "context_lines", "lines", groups) if document is not None
         and len(groups) > 1 else OWN_POSITIONS)
single, corpus, width = panes(document is not None and summary is not None)
if document is not None:
    values, drawn, styles, chosen = loss_lines(document, group)
    single.plotly_chart(figures.position_lines(buckets, values, drawn, styles, trained, NLL_TITLE,
                                               title="Loss by position: this text", width=width), key="context_nll")
    single.caption(plain(captions.lines_caption(group, groups)))
    hidden = captions.identical_lines(identical_results([result for result in chosen if result is not None], "nll"))
    if hidden is not None:
        single.caption(plain(hidden))
if summary is not None:
    values, drawn, styles, chosen = loss_lines(summary, group)
    corpus.plotly_chart(figures.position_lines(
        summary.buckets, values, drawn, styles, trained_corpus, NLL_TITLE,
        title="Corpus (bands: intervals over documents)",
        intervals=[None if result is None or result.temperature is None else summary_intervals(result)
                   for result in chosen], width=width), key="context_corpus_nll")  # schedules: lines only
    corpus.caption(plain(captions.corpus_caption(summary, trained_corpus)))

if verdict is not None and (rows := verdict.decomposition_rows()):
    st.subheader("What brings the loss back past the trained length")
    st.table(rows, hide_index=True)  # a table: its cells wrap
    st.caption(plain(captions.decomposition_caption()))

if document is not None:
    with st.expander("What this sweep measured, and how"):
        verdict_ui(document, verdict)
        if corpus_said is not None:
            st.markdown("**What the corpus measured past the trained length**:\n"
                        + "\n".join(f"- {plain(sentence)}" for sentence in corpus_said.sentences()))
        st.caption(plain(captions.sweep_caption(document)))
        st.markdown(METHOD)

    st.subheader("Best temperature per bucket")
    on_recipes = best_recipes(document)
    best_on = (choice_ui(st.selectbox, "Temperatures on", "context_best_on", "best_on", [OWN_POSITIONS, *on_recipes])
               if on_recipes else OWN_POSITIONS)
    recipe = None if best_on == OWN_POSITIONS else best_on
single, corpus, width = panes(document is not None and summary is not None)
best_panes = ([(single, document, recipe, trained, f"This text, on {best_on}", "context_best")]
              if document is not None else []) + (
    [(corpus, summary, None, trained_corpus, f"Corpus, on {OWN_POSITIONS}", "context_corpus_best")]
    if summary is not None else [])
for pane, result, on, trained_for, title, key in best_panes:
    entries = best_entries(result, on)
    pane.plotly_chart(figures.best_temperatures([entry.bucket for entry in entries], entries,
                                                constant_temperatures(result, on), trained_for, title=title,
                                                width=width), key=key)
    pane.caption(plain(captions.best_caption(result, on)))

fits = [fit for path in sorted(settings.FIT_DIR.glob("*/fit.json"))
        if (fit := read_committed(path, FitSummary)) is not None]
if fits:
    fits_ui(fit_verdicts(fits))

if document is not None:
    st.subheader("Attention by position")
    layers = [MEAN_OF_LAYERS, *range(n_layers(document))]
    statistics = statistics_of(document)
    layer_column, statistic_column, lines_column = st.columns(3)
    layer = choice_ui(layer_column.selectbox, "Layer", "context_layer", "layer", layers)
    statistic = choice_ui(statistic_column.selectbox, "Statistic", "context_statistic", "statistic", statistics,
                          default="normalized_entropy", format_func=STATISTIC_LABELS.get)
    statistic_group = (choice_ui(lines_column.selectbox, "Lines", "context_statistic_lines", "statistic_lines",
                                 groups[1:] if groups[0] == MAIN_LINES else groups) if len(groups) > 1
                       else OWN_POSITIONS)
    chosen_layer = None if layer == MEAN_OF_LAYERS else int(layer)
    chosen, drawn, styles = drawn_lines(document, line_groups(document)[statistic_group], False)
    st.plotly_chart(figures.position_lines(
        buckets, [statistic_by_bucket(result, statistic, chosen_layer) for result in chosen], drawn, styles,
        trained, STATISTIC_LABELS[statistic], log_y=statistic == "top_ratio", title="Attention by position"),
        key="context_statistic_chart")
    st.caption(captions.position_caption(chosen_layer, statistic) + " " + captions.lines_caption(statistic_group,
                                                                                                 groups))
    hidden = captions.identical_lines(identical_results(chosen, "heads"))
    if hidden is not None:
        st.caption(plain(hidden))

    if "untrained_mass" in statistics:
        st.plotly_chart(figures.pass_heatmap(
            buckets, np.array([statistic_by_bucket(result, "untrained_mass", chosen_layer) for result in results]),
            labels, trained, "untrained-distance mass", title="Attention on untrained distances, every pass"),
            key="context_untrained")
        st.caption(plain(captions.untrained_caption(chosen_layer, trained)))

    reference = reference_result(document)
    others = [label for label in labels if label != reference.label]
    if others:
        compare = choice_ui(st.selectbox, "Distance profile: compare T = 1 with", "context_compare", "compare",
                            others, default=default_comparison(document))
        compared = results[labels.index(compare)]
        st.plotly_chart(figures.distance_heatmaps(
            [distance_by_bucket(reference, chosen_layer), distance_by_bucket(compared, chosen_layer)],
            document.distance_bins, buckets, [reference.label, compare], trained), key="context_distance")
        st.caption(captions.distance_caption(chosen_layer))

    st.subheader("Downloads")
    if view == COMMITTED:
        committed_path = settings.CONTEXT_SWEEP
        sweep_downloads_ui(document, lambda: committed_path.read_text(encoding="utf-8"), "context-sweep")
    else:
        sweep_downloads_ui(document, lambda: json.dumps(document.to_dict(), allow_nan=False), "context-sweep-run")
