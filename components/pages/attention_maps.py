"""Page 2, Attention maps: the words each word attends to at each temperature (the token view), one heatmap per
temperature for a chosen layer and head, what the model says, and every head's statistics."""

import streamlit as st

from components.present import captions, guide
from components.present.figures.maps import attention_heatmaps, head_grids
from components.present.glossary import term_link
from components.present.parsing import parse_choice
from components.widgets.continuations import continuations_ui
from components.widgets.controls import layer_head_ui
from components.widgets.downloads import downloads_ui
from components.widgets.head_pick import head_pick_label, head_pick_ui
from components.widgets.model_page import MAPS_VIEW, ModelPage
from components.widgets.token_view import query_ui, token_view_ui
from components.widgets.url_state import linked_widget
from model_utils import attention_map
from model_utils.core.statistics import STATISTIC_LABELS, STATISTICS

MAX_MAP_TOKENS = MAPS_VIEW.limit  # beyond 256 a token-labelled n x n map is unreadable (and the kept q/k grow)

st.title("Attention maps")
st.markdown(f"**{guide.POINT['attention_maps']}**")
page = ModelPage("maps_text", MAPS_VIEW.example, f"Text (the first {MAX_MAP_TOKENS} tokens are drawn)", height=100)
# statistics over queries 1..n-1 (MAPS_VIEW.options): every row of the drawn map but row 0, so the numbers describe
# the map shown
report = page.report(MAPS_VIEW.fetch, MAX_MAP_TOKENS, None, **MAPS_VIEW.options,
                     cut_note="The text was cut to its first {n:,} tokens for the maps.")

# layer and head act on the token view and the heatmaps alike; the maps come from the report's kept queries and keys
pickers, query_column, log_column = st.columns([2, 1, 1], vertical_alignment="bottom")
query = query_ui(report, query_column, "maps_query")
pick = head_pick_ui(report, query, "maps")  # a new text or query: the head whose attention for it spreads most
with pickers:
    layer, head = layer_head_ui(report.n_layers, report.n_heads, "maps",
                                default=None if pick is None else (pick.layer, pick.head))
head_pick_label(pick, report, layer, head)
log_colour = linked_widget(log_column.toggle, "Log colour scale", key="maps_log", url_key="log", default=False,
                           parse=lambda raw: raw == "1", to_url=lambda on: 1,
                           help="Most weights are tiny: a log scale tells them apart.")
maps = [attention_map(report, layer, view, head=head) for view in range(len(report.results))]
token_view_ui(report, maps, layer=layer, head=head, query=query, log_colour=log_colour, pick=pick)

st.subheader(f"The whole map: layer {layer}, {'mean of heads' if head is None else f'head {head}'}")
st.caption("Rows are queries, columns the keys they attend to; a row sums to 1 and a query never sees later tokens "
           "(blank). Hover a cell for the tokens and the weight.")
span = page.windows[layer]  # the keys a query sees in this layer; None: every key
st.plotly_chart(attention_heatmaps(maps, report.tokens, captions.map_titles(report, layer, head),
                                   log_colour=log_colour, sliding_span=span), key="maps_heatmaps")
st.caption(captions.maps_caption(report, head, log_colour, span))

st.subheader("What the model says")
continuations_ui(page, report, "maps_said")

st.subheader("Every layer and head")
st.caption(f"The model reads the text in layers, and several heads attend in each: "
           f"{term_link('Head, layer', 'what a layer and a head are')}.")
statistic = linked_widget(st.selectbox, "Statistic", key="maps_statistic", url_key="statistic",
                          default="normalized_entropy", options=STATISTICS, format_func=STATISTIC_LABELS.get,
                          parse=lambda raw: parse_choice(raw, STATISTICS),
                          help=f"{term_link('Entropy', 'Normalized entropy')}: 0 means all weight on one key, 1 "
                               "uniform over the visible keys, so sharp and near-uniform heads stand out.")
st.plotly_chart(head_grids([result.heads[statistic] for result in report.results], report.labels,
                           statistic), key="maps_grid")
st.caption(captions.grid_caption(report, statistic))
nothing_distant = captions.nothing_distant_note(report)
if nothing_distant is not None and statistic in ("recent_mass", "distant_mass"):
    st.info(nothing_distant)

downloads_ui(report, "attention-maps")  # here, so that the token view opens on the first screen
st.markdown(guide.NEXT_STEP["attention_maps"])
carried = guide.temperatures_param(list(page.temperatures))
st.page_link("components/pages/collapse_inspector.py", label=f"Collapse inspector at T = {carried}",
             icon=":material/query_stats:", query_params={"t": carried})
