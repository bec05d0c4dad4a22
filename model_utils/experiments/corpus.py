"""A corpus for the tuner: a folder of .txt files, a .jsonl file with a "text" field per line, or the built-in
documents. What a user can get wrong about it is refused with one line naming the file or line, before any model is
loaded; a document is its text's sha256, so the same text under two names is one document."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from model_utils.experiments.texts import (
    CORPUS_CHARS,
    FILE_SOURCES,
    LONG_CORPUS_CHARS,
    LONG_FILE_SOURCES,
    SOURCE,
    BuiltinDocument,
    builtin_documents,
    long_builtin_documents,
    text_digest,
)

BUILTIN = "builtin"
LONG_BUILTIN = "builtin-long"  # documents of 49,152 tokens and more of Gemma 3 270M (texts.long_builtin_documents)


class CorpusError(ValueError):
    """A corpus the tuner refuses; the message names the file or line and what to change."""


@dataclass(frozen=True)
class Document:
    name: str  # where it came from, for messages and the summary: "notes/a.txt", "corpus.jsonl line 7"
    text: str
    domain: str | None = None  # the kind of text, where known (the built-in corpus labels each document)
    sha256: str = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "sha256", text_digest(self.text))


@dataclass(frozen=True)
class Corpus:
    source: str  # what the corpus is, in words: the folder, the file, or the built-in source and its licence
    documents: list[Document]
    duplicates: list[str]  # names of documents skipped because an earlier one has the same text


def _decode(data: bytes, where: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CorpusError(f"{where} is not UTF-8 text (byte {error.start} cannot be decoded); convert it to "
                          "UTF-8 or leave it out of the corpus") from None
    if "\x00" in text:
        raise CorpusError(f"{where} holds NUL bytes: it is a binary file, not text; leave it out of the corpus")
    return text


def _folder(path: Path) -> list[Document]:
    files = sorted(p for p in path.rglob("*.txt") if p.is_file())
    if not files:
        raise CorpusError(f"corpus folder {str(path)!r} holds no .txt files")
    return [Document(str(file), _decode(file.read_bytes(), f"corpus file {str(file)!r}")) for file in files]


def _jsonl(path: Path) -> list[Document]:
    documents = []
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        where = f"{path} line {number}"
        line = _decode(raw, where)
        if not line.strip():
            continue  # blank lines (a trailing newline, spacing) hold no document
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise CorpusError(f"{where} is not JSON ({error.msg}); write one JSON object per line") from None
        if not isinstance(record, dict) or not isinstance(record.get("text"), str):
            raise CorpusError(f'{where} has no string "text" field; write {{"text": "..."}} per line')
        documents.append(Document(where, record["text"]))
    if not documents:
        raise CorpusError(f"corpus file {str(path)!r} holds no documents (no non-blank lines)")
    return documents


def read_corpus(location: str, limit: int | None = None) -> Corpus:
    """The documents at `location` ('builtin', 'builtin-long', a folder of .txt files, or a .jsonl file), the first
    `limit` of them if given, duplicates (same text) skipped. Raises CorpusError."""
    if limit is not None and limit < 1:
        raise CorpusError(f"--documents must be at least 1, got {limit}")
    if location == BUILTIN:
        documents = _builtin(location, builtin_documents())
        source = (f"{SOURCE}: texts.builtin_corpus(), the paragraphs after the built-in long text (no text shared with "
                  f"it, none twice), consecutive paragraphs joined into documents of {CORPUS_CHARS:,}+ characters; "
                  f"then the first {CORPUS_CHARS:,} characters of "
                  + "; ".join(source.where for source in FILE_SOURCES))
    elif location == LONG_BUILTIN:
        documents = _builtin(location, long_builtin_documents())
        source = (f"{SOURCE}: texts.long_builtin_documents(), the paragraphs after the built-in long text in one "
                  f"document (none twice); then the first {LONG_CORPUS_CHARS:,} characters of "
                  + "; ".join(source.where for source in LONG_FILE_SOURCES))
    else:
        path = Path(location).expanduser()
        if not path.exists():
            raise CorpusError(f"corpus {location!r} does not exist; give a folder of .txt files, a .jsonl file, "
                              f"{BUILTIN} or {LONG_BUILTIN}")
        if path.is_dir():
            documents, source = _folder(path), f"folder {location} (.txt files, sorted by path)"
        elif path.suffix == ".jsonl":
            documents, source = _jsonl(path), f"file {location} (one JSON object with a text field per line)"
        else:
            raise CorpusError(f"corpus {location!r} is neither a folder nor a .jsonl file")
    seen: set[str] = set()
    unique, duplicates = [], []
    for document in documents:
        (duplicates if document.sha256 in seen else unique).append(document)
        seen.add(document.sha256)
    if limit is not None and limit > len(unique):
        raise CorpusError(f"--documents {limit} asks for more documents than the corpus holds ({len(unique)})")
    return Corpus(source, unique[:limit], [d.name for d in duplicates])


def _builtin(location: str, documents: list[BuiltinDocument]) -> list[Document]:
    return [Document(f"{location} {document.name}", document.text, document.domain) for document in documents]
