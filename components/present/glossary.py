"""The glossary (docs/GLOSSARY.md) as the app shows it: its terms, each a heading with an anchor, and the links the
pages' help texts and captions make to a term (`term_link`). Pure: text in, text out."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

GLOSSARY = Path(__file__).resolve().parents[2] / "docs" / "GLOSSARY.md"
URL_PATH = "glossary"  # the Glossary page's (components.pages.PAGES)
TERM_KEY = "term"  # the query parameter a link names its term in: the page shows that entry first
_ENTRY = re.compile(r"^\*\*(?P<term>[^*]+?)\.\*\* ", re.MULTILINE)


@dataclass(frozen=True, kw_only=True)
class Entry:
    term: str  # "Held out"
    text: str  # its definition, markdown

    @property
    def anchor(self) -> str:
        return anchor(self.term)


def anchor(term: str) -> str:
    """The id Streamlit gives a markdown heading: lower case, runs of other characters as one '-' ('Logit (score)'
    -> 'logit-score')."""
    return "-".join(part for part in re.split(r"[^a-z0-9]+", term.lower()) if part)


def entries(text: str) -> list[Entry]:
    """The glossary's terms in order, each with its definition on one line (the paragraph above the first term, for
    the readers of the file, is left out)."""
    starts = list(_ENTRY.finditer(text))
    return [Entry(term=match["term"], text=" ".join(text[match.end() : stop].split()))
            for match, stop in zip(starts, [*(s.start() for s in starts[1:]), len(text)], strict=True)]


def read() -> list[Entry]:
    return entries(GLOSSARY.read_text(encoding="utf-8"))


def term_link(term: str, label: str | None = None) -> str:
    """A markdown link to `term` on the Glossary page ('[held out](glossary?term=held-out)'), relative, so that it
    works under any base URL; the page shows that entry first (a query parameter the page reads: a '#' fragment
    left the entry far down the page, tests/browser). The term must be one of the glossary's
    (tests/present/test_glossary.py checks every one the components use)."""
    return f"[{label or term.lower()}]({URL_PATH}?{TERM_KEY}={anchor(term)})"


def chosen(entries: list[Entry], key: str | None) -> Entry | None:
    """The entry a link asked for (its anchor in the `term` query parameter), None for none or an unknown one."""
    return next((entry for entry in entries if entry.anchor == key), None)
