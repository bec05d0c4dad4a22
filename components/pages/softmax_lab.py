"""Page 1, Softmax lab: what dividing scores by T does to softmax weights, with no model in the way."""

import math

import streamlit as st

from components.present import captions, guide
from components.present.figures.softmax import entropy_curve_figure, ratio_curves, weight_bars
from components.present.glossary import term_link
from components.present.margins import HALF_WIDTH
from components.present.parsing import (
    MAX_SCORES,
    format_numbers,
    nearest_on_log_scale,
    parse_scores,
    slider_temperatures,
)
from components.present.text import plain
from components.widgets.controls import require_temperatures, sidebar_choices
from components.widgets.url_state import publish_to_url, seed

DEFAULT_SCORES = "5, 0, 0, 0, 0, 0, 0, 0"
GOOD_SCORES = "_lab_good_scores"  # the last scores that parsed: a refused input leaves the charts on them

st.title("Softmax lab")
st.markdown(f"**{guide.POINT['softmax_lab']}**")

temperatures = require_temperatures(sidebar_choices())
# the scores go into the link only once they parse, so both halves of the round trip are spelled out here
seed("lab_scores", DEFAULT_SCORES, lambda raw: format_numbers(parse_scores(raw)), url_key="scores")
slider_options = slider_temperatures(temperatures)  # the sidebar's temperatures among them, exactly
seed("lab_temperature", 1.0, lambda raw: nearest_on_log_scale(raw, slider_options), url_key="lab_t")
if st.session_state["lab_temperature"] not in slider_options:  # the sidebar's list changed: keep to the nearest
    st.session_state["lab_temperature"] = nearest_on_log_scale(st.session_state["lab_temperature"], slider_options)
left, right = st.columns([3, 2])
scores_text = left.text_input("Scores of the keys (before the softmax)", key="lab_scores", max_chars=800,
                              help=f"2 to {MAX_SCORES} numbers separated by commas, with a point for decimals "
                                   f"(0.5): the {term_link('Logit (score)', 'scores')} a query gives its keys.")
slider_t = right.select_slider("Temperature T (log scale)", options=slider_options, key="lab_temperature",
                               format_func=lambda t: f"{t:g}")
try:
    scores = parse_scores(scores_text)
    st.session_state[GOOD_SCORES] = scores_text
except ValueError as error:  # said under the box; the charts keep the last scores that were accepted
    scores_text = st.session_state.get(GOOD_SCORES, DEFAULT_SCORES)
    scores = parse_scores(scores_text)
    left.error(f"Scores: {plain(error)} The charts still show the last scores accepted: {plain(scores_text)}.")
publish_to_url({"scores": scores_text if scores_text != DEFAULT_SCORES else None, "lab_t": f"{slider_t:g}"})

st.plotly_chart(weight_bars(scores, temperatures, slider=slider_t), key="lab_bars")
st.markdown(
    f"Attention turns a query's {term_link('Logit (score)', 'scores')} into weights with a "
    f"{term_link('Softmax', 'softmax')}: "
    "**p = softmax(s / T)**. Dividing by **T > 1 softens** the weights (the gaps between scores shrink, "
    f"{term_link('Entropy', 'entropy')} rises); **T < 1 sharpens** them (the gaps grow, entropy falls). The order "
    "never changes: the top key stays on top at every T. Two keys whose scores differ by g get weights in the ratio "
    "exp(g / T), so a gap of 5 is a 148x ratio at T = 1 and 12x at T = 2. Soften far enough and the weights tend to "
    "uniform (entropy ln n): the head can no longer single anything out. Each panel gives its top weight and "
    f"**H**, the {term_link('Entropy', 'entropy')} of its weights: how spread they are."
)
shown = ([] if slider_t in temperatures else [slider_t]) + list(temperatures)  # as the bars are drawn
st.dataframe(captions.softmax_rows(scores, shown), hide_index=True)

ratio_column, entropy_column = st.columns(2)
ratio_column.plotly_chart(ratio_curves(scores, current=slider_t, width=HALF_WIDTH), key="lab_ratio")
entropy_column.plotly_chart(entropy_curve_figure(scores, temperatures, width=HALF_WIDTH),
                            key="lab_entropy")
st.caption(
    f"With these {len(scores)} scores the entropy can never exceed ln {len(scores)} = {math.log(len(scores)):.3f} "
    f"{term_link('Nats', 'nats')}, reached only by uniform weights; as T -> 0 the weights concentrate on the top "
    "score(s)."
)

st.markdown(guide.NEXT_STEP["softmax_lab"])
carried = guide.temperatures_param(temperatures)
st.page_link("components/pages/attention_maps.py", label=f"Attention maps at T = {carried}", icon=":material/grid_on:",
             query_params={"t": carried})
