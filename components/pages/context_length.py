"""Page 5, Context length: what brings the loss back past the model's trained length, a softmax temperature, a
published schedule or a RoPE recipe? Opens on the answer (no model run): each verdict's sentence and its
decomposition chart, the corpus's first when one is committed, then the headline numbers and the loss by position;
the method, the best temperature per bucket, the fits and attention by position below. A form runs the same sweep
on a text and model of your choice."""

import streamlit as st

from components.widgets.context_form import your_run_ui
from components.widgets.context_positions import attention_ui, best_ui, loss_ui
from components.widgets.context_sections import (
    answer_ui,
    decomposition_table_ui,
    domains_ui,
    downloads_section_ui,
    fits_ui,
    method_ui,
    shown_ui,
    side_by_side_ui,
)

st.title("Context length")
st.markdown(
    "How does a model do past the context length it was trained on (the dashed line), and what brings it back: a "
    "softmax temperature, a published schedule, or a RoPE recipe? The answer first, from committed results (no model "
    "run); the loss by position and how it was measured, under it."
)

shown = shown_ui(your_run_ui())
answer_ui(shown)
loss_ui(shown)
decomposition_table_ui(shown)
side_by_side_ui(shown)
domains_ui(shown)
method_ui(shown)
best_ui(shown)
fits_ui(shown)
attention_ui(shown)
downloads_section_ui(shown)
