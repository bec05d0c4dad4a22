"""Page 5, Context length: what brings the loss back past the model's trained length, a softmax temperature, a
published schedule or a RoPE recipe? Opens on the answer (no model run): the lead verdict's one sentence, its
decomposition chart and its headline numbers, then the loss by position (four lines; the rest behind a toggle).
Everything else is folded: the answers in full and the tables, the best temperature per bucket, the fits, attention
by position, the method, the downloads, and the form that runs the same sweep on a text and model of your choice."""

import streamlit as st

from components.widgets.context_form import your_run_ui
from components.widgets.context_positions import attention_ui, best_ui, loss_ui
from components.widgets.context_sections import (
    answer_ui,
    answers_in_full_ui,
    downloads_section_ui,
    fits_ui,
    method_ui,
    shown_ui,
    tables_ui,
)

st.title("Context length")
# the answer first and the form last: the form runs first (the page shows its run), into the container at the foot
opening, choice, rest, form = st.container(), st.container(), st.container(), st.container()
with form:
    yours = your_run_ui()
with choice:
    shown = shown_ui(yours)
with opening:
    answer_ui(shown)
with rest:
    loss_ui(shown)
    answers_in_full_ui(shown)
    tables_ui(shown)
    best_ui(shown)
    fits_ui(shown)
    attention_ui(shown)
    method_ui(shown)
    downloads_section_ui(shown)
