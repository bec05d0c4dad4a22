"""Page 7, Lesson: a 10-minute walk through the explorer for a class (components/present/lesson.py), each step one
sentence and a link that opens its page in the state the step needs; large type for a projector is the sidebar's
switch. No model runs here."""

import streamlit as st

from components.present.lesson import STEPS

st.title("10-minute lesson")
st.markdown("**Seven steps from softmax on a few scores to what a temperature does on long texts; each link opens its "
            "page ready for the step.** For a projector, switch on *Large type* in the sidebar.")
for number, step in enumerate(STEPS, start=1):
    st.markdown(f"#### {number}. {step.title}\n{step.sentence}")
    st.page_link(f"components/pages/{step.page}.py", label=step.label, icon=":material/arrow_forward:",
                 query_params=step.query or None)
st.page_link("components/pages/glossary.py", label="Glossary: every word the pages use, in plain terms",
             icon=":material/menu_book:")
