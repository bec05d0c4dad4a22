"""Page 1, Softmax lab: what dividing scores by T does to softmax weights, with no model in the way."""

import math

import numpy as np
import streamlit as st

from components import figures
from components.controls import current_settings, plain, publish_to_url, require_temperatures, seed
from model_utils.metrics import entropy, softmax_with_temperature, weight_ratio

DEFAULT_SCORES = "5, 0, 0, 0, 0, 0, 0, 0"
SLIDER_TEMPERATURES = [float(f"{t:.3g}") for t in np.geomspace(0.1, 10.0, 41)]  # log-spaced, 0.1 .. 10
MAX_SCORES = 64


def parse_scores(text: str) -> list[float]:
    parts = [part for part in text.replace(";", ",").replace(" ", ",").split(",") if part]
    try:
        scores = [float(part) for part in parts]
    except ValueError:
        raise ValueError("scores must be numbers separated by commas, e.g. 5, 0, 0, 0") from None
    if not 2 <= len(scores) <= MAX_SCORES:
        raise ValueError(f"give between 2 and {MAX_SCORES} scores; {len(scores)} were given")
    if not all(math.isfinite(score) and abs(score) <= 1e6 for score in scores):
        raise ValueError("every score must be a finite number between -1e6 and 1e6")
    return scores


def nearest_slider_value(raw: str) -> float:
    value = float(raw)
    return min(SLIDER_TEMPERATURES, key=lambda t: abs(math.log(t) - math.log(value)))


st.title("Softmax lab")
st.markdown(
    "Attention turns a query's scores into weights with a softmax: **p = softmax(s / T)**. "
    "Dividing by **T > 1 softens** the weights (the gaps between scores shrink, entropy rises); "
    "**T < 1 sharpens** them (the gaps grow, entropy falls). The order never changes: the top key stays on top "
    "at every T. Two keys whose scores differ by g get weights in the ratio exp(g / T), so a gap of 5 is a "
    "148x ratio at T = 1 and 12x at T = 2. Soften far enough and the weights tend to uniform (entropy ln n): "
    "the head can no longer single anything out."
)

temperatures = require_temperatures(current_settings())
seed("lab_scores", DEFAULT_SCORES, lambda raw: ", ".join(f"{s:g}" for s in parse_scores(raw)), url_key="scores")
seed("lab_temperature", 1.0, nearest_slider_value, url_key="lab_t")
left, right = st.columns([3, 2])
scores_text = left.text_input("Scores of the keys (before the softmax)", key="lab_scores", max_chars=800,
                              help=f"2 to {MAX_SCORES} numbers separated by commas.")
slider_t = right.select_slider("Temperature T (log scale)", options=SLIDER_TEMPERATURES, key="lab_temperature",
                               format_func=lambda t: f"{t:g}")
try:
    scores = parse_scores(scores_text)
except ValueError as error:
    st.error(f"Scores: {plain(error)}")
    st.stop()
publish_to_url({"scores": scores_text if scores_text != DEFAULT_SCORES else None, "lab_t": f"{slider_t:g}"})

shown = ([] if slider_t in temperatures else [slider_t]) + list(temperatures)  # as the bars are drawn
st.plotly_chart(figures.weight_bars(scores, temperatures, slider=slider_t), key="lab_bars")

gap = max(scores) - sorted(scores)[-2]
rows = []
for t in shown:
    weights = softmax_with_temperature(scores, t)
    rows.append({"T": f"{t:g}", "top weight": round(float(weights.max()), 4),
                 "entropy (nats)": round(float(entropy(weights)), 4),
                 "entropy / ln n": round(float(entropy(weights)) / math.log(len(scores)), 4),
                 f"top / runner-up (gap {gap:g})": f"{float(weight_ratio(gap, t)):.4g}x"})
st.dataframe(rows, hide_index=True)

ratio_column, entropy_column = st.columns(2)
ratio_column.plotly_chart(figures.ratio_curves(current=slider_t), key="lab_ratio")
entropy_column.plotly_chart(figures.entropy_curve_figure(scores, temperatures), key="lab_entropy")
st.caption(
    f"With these {len(scores)} scores the entropy can never exceed ln {len(scores)} = {math.log(len(scores)):.3f} "
    "nats, reached only by uniform weights; as T -> 0 the weights concentrate on the top score(s)."
)
