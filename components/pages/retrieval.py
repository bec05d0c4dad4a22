"""Page 6, Retrieval: how far back a model still uses a passage it read, and whether a temperature, a schedule or a
RoPE recipe moves that reach. Opens on the committed probe's answer (no model run): its sentence, the gain by distance
per view and the reaches; then the choice of probe where several models' are committed, one passage token by token,
the method, and a probe of your own passage."""

import streamlit as st

from components.widgets.retrieval import QUESTION, answer_ui, committed_ui, method_ui, passage_ui, your_probe_ui

st.title("Retrieval at a distance")
answer = st.container()  # the answer first, above the choice of probe that decides it
document = committed_ui()
if document is None:
    answer.markdown(QUESTION)
else:
    with answer:
        answer_ui(document)
    passage_ui(document)
    method_ui(document)
your_probe_ui()
