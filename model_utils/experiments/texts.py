"""Long texts that ship with Python itself, for the sweep and the tuner: `pydoc_data.topics`, the language reference
topics every CPython carries for `help()` (PSF License). The topics can differ between Python versions, so every
result records the sha256 of the text it ran on."""

from __future__ import annotations

import hashlib

BUILTIN_TEXTS = ("long",)
SOURCE = "Python's pydoc_data.topics (Python documentation, PSF License)"


def _topics() -> list[tuple[str, str]]:
    from pydoc_data.topics import topics

    return sorted(topics.items())


def builtin_text(name: str) -> str:
    """'long': every topic, in sorted order, separated by blank lines (well over 20,000 tokens)."""
    if name not in BUILTIN_TEXTS:
        raise ValueError(f"unknown built-in text {name!r}; choose one of {', '.join(BUILTIN_TEXTS)}")
    return "\n\n".join(text.strip() for _, text in _topics())


def builtin_corpus(min_chars: int = 60_000) -> list[tuple[str, str]]:
    """(name, text) documents cut from the topics in sorted order: consecutive topics joined until a document
    holds at least `min_chars` characters (about 13,000 tokens of this text for the bundled tokenizer); the
    remainder too short for a document of its own joins the last one."""
    documents: list[tuple[str, str]] = []
    names, parts, size = [], [], 0
    for name, text in _topics():
        names.append(name)
        parts.append(text.strip())
        size += len(parts[-1])
        if size >= min_chars:
            documents.append((f"{names[0]}..{names[-1]}", "\n\n".join(parts)))
            names, parts, size = [], [], 0
    if parts and documents:
        last_name, last_text = documents.pop()
        documents.append((f"{last_name.split('..')[0]}..{names[-1]}", last_text + "\n\n" + "\n\n".join(parts)))
    return documents


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
