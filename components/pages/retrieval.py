"""Page 6, Retrieval: how far back a model still uses a passage it read, and whether a temperature, a schedule or a
RoPE recipe moves that reach. Opens on the committed probe's answer (no model run): its sentence, the gain by distance
per view and the reaches; then one passage token by token, the method, and a probe of your own passage."""

import streamlit as st

from components.widgets.retrieval import answer_ui, committed_ui, method_ui, passage_ui, your_probe_ui

st.title("Retrieval at a distance")
st.markdown("Plant a passage early in a long text and repeat it later: a model that can still reach the first copy "
            "predicts the repeat almost perfectly. How far back does that work, and does a temperature move it?")

document = committed_ui()
if document is not None:
    answer_ui(document)
    passage_ui(document)
    method_ui(document)
your_probe_ui()
