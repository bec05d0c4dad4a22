"""The glossary as the app reads it: every term of docs/GLOSSARY.md with its definition, anchors as Streamlit makes
them, and every term a component links to is one the glossary defines."""

import ast
from pathlib import Path

from components.present import glossary

ROOT = Path(__file__).resolve().parents[2]


def test_every_term_of_the_file_is_read_with_its_definition():
    found = glossary.read()
    terms = [entry.term for entry in found]
    assert len(terms) >= 25 and terms == sorted(terms, key=str.lower), terms  # alphabetical, as the file says
    assert {"Loss", "Held out", "Cross-fit", "Bucket", "Sink", "Logit (score)", "Temperature (T)"} <= set(terms)
    assert all(entry.text and "\n" not in entry.text and "**" not in entry.text for entry in found)
    loss = next(entry for entry in found if entry.term == "Loss")
    assert loss.text.startswith("How surprised the model is") and "Lower is better" in loss.text


def test_an_anchor_is_the_heading_id_streamlit_gives_it():
    assert glossary.anchor("Logit (score)") == "logit-score"
    assert glossary.anchor("Head, layer") == "head-layer"
    assert glossary.anchor("Held out") == "held-out"
    assert glossary.term_link("Held out") == "[held out](glossary?term=held-out)"
    assert glossary.term_link("Loss", "nats") == "[nats](glossary?term=loss)"


def linked_terms() -> list[tuple[str, str]]:
    """Every term_link("Term", ...) call with a literal term in components/, as (file, term)."""
    found = []
    for path in (ROOT / "components").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in
                    ("term_link", "link") and node.args and isinstance(node.args[0], ast.Constant)):
                found.append((path.name, node.args[0].value))
    return found


def test_every_link_the_pages_make_goes_to_a_term_of_the_glossary():
    terms = {entry.term for entry in glossary.read()}
    linked = linked_terms()
    assert len(linked) >= 5, linked
    assert [(name, term) for name, term in linked if term not in terms] == []
