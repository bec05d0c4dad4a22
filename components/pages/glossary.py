"""The Glossary: the words the pages use, in plain terms (docs/GLOSSARY.md), each term a heading whose anchor the
other pages' help texts link to (`?term=`: that term first). No model, no chart."""

import streamlit as st

from components.present import glossary

st.title("Glossary")
st.markdown("The words the pages use, in plain terms, alphabetical. The same list is docs/GLOSSARY.md in the "
            "repository.")
entries = glossary.read()
asked = glossary.chosen(entries, st.query_params.get(glossary.TERM_KEY))
if asked is not None:  # a page's link: its term first, on the first screen
    st.info(f"**{asked.term}.** {asked.text}")
for entry in entries:
    st.markdown(f"##### {entry.term}\n{entry.text}")
