"""The Glossary: the words the pages use, in plain terms (docs/GLOSSARY.md), each term a heading whose anchor the
other pages' help texts link to. No model, no chart."""

import streamlit as st

from components.present import glossary

st.title("Glossary")
st.markdown("The words the pages use, in plain terms, alphabetical. The same list is docs/GLOSSARY.md in the "
            "repository.")
for entry in glossary.read():
    st.markdown(f"##### {entry.term}\n{entry.text}")
