"""Page 3, Collapse inspector: does attention collapse on one long prompt, and does a temperature help? Opens on the
answer, one sentence from the data (at T = 1, the last token's attention on its recent window, on the fact and on
the sink, and which temperatures make the model say the expected answer), what the model says at each temperature,
and the chart of those masses; a prompt that had to be cut says so first. The prompt, its boxes, where the last
query looks and the per-layer views follow, the entropy verdicts folded."""

import streamlit as st

from components.present import captions
from components.present.figures.maps import distance_profile, last_query_bars, layer_lines, mass_bars, outcome_bars
from components.present.glossary import term_link
from components.present.margins import HALF_WIDTH
from components.present.text import plain
from components.widgets.collapse import TOKEN_LIMITS, answer_probe_ui, collapse_inputs_ui, said_ui
from components.widgets.model_page import COLLAPSE_VIEW, ModelPage
from model_utils.core.collapse import find_fact
from model_utils.core.statistics import STATISTIC_LABELS, STATISTICS
from model_utils.verdicts.collapse import collapse_verdict
from model_utils.verdicts.findings import NEAR_UNIFORM, findings
from model_utils.verdicts.words import (
    collapse_more_sentences,
    collapse_sentence,
    cut_sentence,
    fact_sentences,
    mass_shift_lines,
    page_finding_sentence,
)

ALL_LAYERS = "mean of all layers"

st.title("Collapse inspector")
opening = st.container()  # the answer first: filled once the prompt below has run

st.subheader("The prompt")
st.markdown(
    "A long prompt states a fact early, then fills the context, then asks for the fact. The first token (the "
    f"{term_link('Sink', 'sink')}) is counted on its own, so a claim such as \"softening recovers distant attention\" "
    "can be checked here instead of assumed.")
page = ModelPage("collapse_text", COLLAPSE_VIEW.example, "Long prompt", height=180,
                 help_text="Paste your own; past the token limit it keeps its first tokens and its question.")
inputs = collapse_inputs_ui()
report = page.report(COLLAPSE_VIEW.fetch, inputs.limit, "collapse", cut_note=None, answer=inputs.answer)
probe = answer_probe_ui(page, inputs)
verdict = collapse_verdict(report, find_fact(page.text, report.offsets, marked=inputs.fact, answer=inputs.answer),
                           probe)  # model_utils decides; verdicts/words says it
said_about_fact = fact_sentences(verdict)
if verdict.marked_missing is not None:
    inputs.notes.warning(plain(said_about_fact.pop(0)))
if said_about_fact:
    inputs.notes.caption(" ".join(plain(line) for line in said_about_fact))
st.caption(captions.collapse_limit_line(max(TOKEN_LIMITS), page.loaded.max_positions, page.loaded.name))

with opening:
    if verdict.cut is not None:
        st.info(plain(cut_sentence(verdict.cut)))
    st.markdown(" ".join(plain(line) for line in [collapse_sentence(verdict), *collapse_more_sentences(verdict)]))
    said_ui(verdict, probe)
    masses = [view.masses for view in verdict.views]
    st.plotly_chart(last_query_bars(report.labels, [m.recent for m in masses], [m.fact for m in masses],
                                    [m.sink for m in masses], report.window), key="collapse_where")
    st.caption("The last token's attention, mean over heads and layers: on its last "
               f"{report.window} tokens (the recent window), on the fact's tokens before that window, and on the "
               "first token, which many heads use as a resting place (the sink); the rest lies elsewhere in the "
               "prompt.")

left, right = st.columns(2)
with left:
    st.subheader("How far back the last query looks")
    layer = st.selectbox("Layers", [ALL_LAYERS, *range(report.n_layers)], key="collapse_distance_layer")
    chosen = None if layer == ALL_LAYERS else int(layer)
    profiles = [result.last_distance_profile(report.distance_edges, chosen, sink=False) for result in report.results]
    sinks = [result.last_sink_mass(chosen) for result in report.results]
    st.plotly_chart(distance_profile(profiles, report.distance_edges, report.labels, sinks=sinks, width=HALF_WIDTH),
                    key="collapse_distance")
    st.caption("The last query alone, mean over heads" + (" and layers" if chosen is None else "")
               + "; the first token (the sink) is drawn apart, not in the farthest bin.")
with right:
    st.subheader("Per layer")
    statistic = st.selectbox("Statistic", STATISTICS, index=STATISTICS.index("normalized_entropy"),
                             format_func=STATISTIC_LABELS.get, key="collapse_statistic",
                             help=f"{term_link('Entropy', 'Normalized entropy')}: 0 when all the weight is on one "
                                  "key, 1 when it is spread evenly.")
    near_uniform = statistic == "normalized_entropy"
    st.plotly_chart(layer_lines([result.layer_mean(statistic) for result in report.results], report.labels,
                                statistic, reference=NEAR_UNIFORM if near_uniform else None,
                                reference_text="near uniform", width=HALF_WIDTH),
                    key="collapse_layers")
    st.caption(f"Over {captions.measured_queries(report)}.")

base, found = findings(report, None if probe is None else probe.answer_probabilities)
with st.expander("Entropy verdicts, and the mass per layer over all queries"):
    nothing_distant = captions.nothing_distant_note(report)
    if nothing_distant is not None:
        st.info(nothing_distant)
    said = [said for finding in found
            if (said := page_finding_sentence(finding, found[base], "" if probe is None else probe.answer))]
    for level, box in (("warning", st.warning), ("info", st.info)):
        lines = [plain(text) for kind, text in said if kind == level]
        if lines:
            box("\n".join(f"- {line}" for line in lines) if len(lines) > 1 else lines[0])
    st.plotly_chart(mass_bars([result.masses_by_layer() for result in report.results], report.labels),
                    key="collapse_masses")
    shifts = mass_shift_lines(found, base)
    st.caption(f"Mean over heads and {captions.measured_queries(report)}. "
               f"{term_link('Recent and distant mass', 'What the masses are')}."
               + ("" if not shifts else " Where the mass moved (means over layers, heads and the measured queries): "
                  + "; ".join(plain(line) for line in shifts) + "."))

st.subheader("What the model predicts")
st.plotly_chart(outcome_bars(report.labels, [result.loss for result in report.results],
                             None if probe is None else [said.answer_log_prob for said in probe.views],
                             answer="" if probe is None else probe.answer), key="collapse_outcome")
st.caption(f"The {term_link('Loss', 'loss')} is the mean over the prompt's next tokens; lower is better.")
st.dataframe(captions.next_token_rows(report), hide_index=True)
if report.mode == "isolated":
    st.caption("Isolated mode: every layer's scores are re-softmaxed at T with the T = 1 inputs held fixed, so the "
               "loss and the predictions are those of T = 1 for every T. Switch to in-model to see them change.")
