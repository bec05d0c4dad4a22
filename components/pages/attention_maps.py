"""Page 2, Attention maps: one heatmap per temperature for a chosen layer and head, and every head's entropy."""

import streamlit as st

from components import figures
from components.cache import cached_report_with_maps
from components.controls import (
    current_settings,
    downloads_ui,
    layer_head_ui,
    publish_to_url,
    report_or_stop,
    require_temperatures,
    seed,
    text_ui,
    within_budget,
)

MAX_MAP_TOKENS = 256  # beyond this a token-labelled n x n map is unreadable (and the kept q/k grow)

st.title("Attention maps")
st.markdown(
    "Your text through the model at each temperature. Rows are queries, columns the keys they attend to; "
    "a row sums to 1 and a query never sees later tokens (blank). Hover a cell for the tokens and the weight."
)
settings = current_settings()
temperatures = require_temperatures(settings)
text = text_ui("maps_text", "short.txt", f"Text (the first {MAX_MAP_TOKENS} tokens are drawn)", height=100)
report = report_or_stop(cached_report_with_maps, settings.model, text, temperatures, settings.mode, settings.window,
                        within_budget(MAX_MAP_TOKENS, len(temperatures)))
if report.truncated:
    st.info(f"The text was cut to its first {report.n_tokens} tokens for the maps.")

n_layers, n_heads = report.results[0].heads["entropy"].shape
layer, head = layer_head_ui(n_layers, n_heads, "maps")
seed("maps_log", False, lambda raw: raw == "1", url_key="log")
log_colour = st.toggle("Log colour scale (most weights are tiny)", key="maps_log")
publish_to_url({"log": 1 if log_colour else None})

maps = [report.attention_map(layer, head, view) for view in range(len(report.results))]
which = "mean of heads" if head is None else f"head {head}"
titles = []
for result in report.results:
    entropy = result.heads["normalized_entropy"][layer]
    titles.append(f"{result.label} · H/ln(q+1) {entropy.mean() if head is None else entropy[head]:.2f}")
st.markdown(f"**Layer {layer}, {which}**")
st.plotly_chart(figures.attention_heatmaps(maps, report.tokens, titles, log_colour=log_colour), key="maps_heatmaps")
st.caption(f"Mode: {settings.mode}. {report.n_tokens} tokens, computed in {report.seconds:.1f} s. One colour scale "
           f"for all panels{' (log10 of the weight)' if log_colour else ''}.")

st.subheader("Which heads are sharp, which are near uniform")
st.markdown("Normalized entropy of every layer and head (mean over queries): 0 means all weight on one key, "
            "1 means uniform over the visible keys.")
grids = [result.heads["normalized_entropy"] for result in report.results]
st.plotly_chart(figures.entropy_grids(grids, report.labels), key="maps_grid")
downloads_ui(report, "attention-maps")
