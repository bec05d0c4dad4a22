"""Page 3, Collapse inspector: where the attention mass goes on one long prompt, at each temperature. Opens on its
point, the verdicts in temperatures and the mass chart; the prompt, the other charts and what the model says below."""

import streamlit as st

from components.present import captions, guide
from components.present.figures.maps import distance_profile, layer_lines, mass_bars, outcome_bars
from components.present.glossary import term_link
from components.present.margins import HALF_WIDTH
from components.present.parsing import parse_choice
from components.present.text import plain
from components.serving.cache import cached_answer_token
from components.widgets.continuations import continuations_ui
from components.widgets.model_page import COLLAPSE_VIEW, ModelPage
from components.widgets.url_state import linked_widget
from model_utils.core.statistics import STATISTIC_LABELS, STATISTICS
from model_utils.verdicts.findings import NEAR_UNIFORM, findings
from model_utils.verdicts.words import mass_shift_lines, page_finding_sentence

TOKEN_LIMITS = (512, 1024, 2048, 4096)
DEFAULT_ANSWER = "Marigold"
ALL_LAYERS = "mean of all layers"

st.title("Collapse inspector")
st.markdown(f"**{guide.POINT['collapse_inspector']}**")
# the answer first: the limit line, the verdicts and the mass chart are filled in once the prompt below has run
limit_line, verdicts, masses = st.container(), st.container(), st.container()

st.subheader("The prompt")
st.markdown(
    "A long prompt states a fact early, then fills the context, then asks for the fact. The first token (the "
    f"{term_link('Sink', 'sink')}) is counted on its own, so a claim such as \"softening recovers distant attention\" "
    "can be checked here instead of assumed.")
page = ModelPage("collapse_text", COLLAPSE_VIEW.example, "Long prompt", height=180,
                 help_text="Paste your own; it is cut to the token limit below.")
answer_column, limit_column = st.columns([2, 1])
answer = linked_widget(answer_column.text_input, "Expected answer (the probability of its first token is shown)",
                       key="collapse_answer", url_key="answer", default=DEFAULT_ANSWER, max_chars=100)
limit = linked_widget(limit_column.selectbox, "Token limit", key="collapse_limit", url_key="limit",
                      default=COLLAPSE_VIEW.limit, options=TOKEN_LIMITS,
                      parse=lambda raw: parse_choice(raw, TOKEN_LIMITS),
                      help="Longer prompts take longer: about 10 s per 1,000 tokens for 4 temperatures "
                           "on the bundled model.")
report = page.report(COLLAPSE_VIEW.fetch, limit, "collapse",
                     cut_note="The prompt was cut to its first {n:,} tokens (the question at its end may be lost).")
token_id, token_text = (cached_answer_token(page.choices.model, page.text, answer) if answer.strip()
                        else (None, ""))

limit_line.caption(captions.collapse_limit_line(max(TOKEN_LIMITS), page.loaded.max_positions,
                                                page.loaded.name))
base, found = findings(report, token_id)  # model_utils.verdicts decides; words.py says it, in temperatures
with verdicts:
    nothing_distant = captions.nothing_distant_note(report)
    if nothing_distant is not None:
        st.info(nothing_distant)
    said = [said for finding in found if (said := page_finding_sentence(finding, found[base], token_text))]
    for level, box in (("warning", st.warning), ("info", st.info)):
        lines = [plain(text) for kind, text in said if kind == level]
        if lines:
            box("\n".join(f"- {line}" for line in lines) if len(lines) > 1 else lines[0])
with masses:
    st.subheader("Sink, distant and recent mass per layer")
    st.plotly_chart(mass_bars([result.masses_by_layer() for result in report.results], report.labels),
                    key="collapse_masses")
    shifts = mass_shift_lines(found, base)
    st.caption(f"Mean over heads and {captions.measured_queries(report)}. "
               f"{term_link('Recent and distant mass', 'What the masses are')}."
               + ("" if not shifts else " Where the mass moved (means over layers, heads and the measured queries): "
                  + "; ".join(plain(line) for line in shifts) + "."))

left, right = st.columns(2)
with left:
    st.subheader("How far back the last query looks")
    layer = st.selectbox("Layers", [ALL_LAYERS, *range(report.n_layers)], key="collapse_distance_layer")
    chosen = None if layer == ALL_LAYERS else int(layer)
    profiles = [result.last_distance_profile(report.distance_edges, chosen) for result in report.results]
    st.plotly_chart(distance_profile(profiles, report.distance_edges, report.labels, width=HALF_WIDTH),
                    key="collapse_distance")
    st.caption("The last query alone, mean over heads" + (" and layers." if chosen is None else "."))
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

st.subheader("What the model predicts")
st.plotly_chart(outcome_bars(report.labels, [result.loss for result in report.results],
                             None if token_id is None else [finding.answer_probability for finding in found],
                             answer=token_text), key="collapse_outcome")
st.caption(f"The {term_link('Loss', 'loss')} is the mean over the prompt's next tokens; lower is better.")
st.dataframe(captions.next_token_rows(report), hide_index=True)
if report.mode == "isolated":
    st.caption("Isolated mode: every layer's scores are re-softmaxed at T with the T = 1 inputs held fixed, so the "
               "loss and the predictions are those of T = 1 for every T. Switch to in-model to see them change.")

st.subheader("What the model says")
continuations_ui(page, report, "collapse_said")
