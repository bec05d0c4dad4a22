"""Long texts that ship with Python itself or with our pinned packages, for the sweep and the tuner: the sweep's long
text and four corpus documents from `pydoc_data.topics` (the language reference topics every CPython carries for
`help()`), corpus documents of other kinds (IDLE's release notes, stdlib source code, numpy's docstrings), each with
a domain and its licence, and a longer sweep text (the pure-Python decimal module) and a long corpus (documents of
49,152 tokens and more) for a model whose sweep and tune run past what the long text and the corpus hold. Files can
differ between versions, so every result records the sha256 of the text it ran on."""

from __future__ import annotations

import hashlib
import importlib.util
import sysconfig
from dataclasses import dataclass
from pathlib import Path

BUILTIN_TEXTS = ("long", "decimal-source")  # the sweep's texts: `--builtin NAME`
SOURCE_NAME = "Python's pydoc_data.topics"
SOURCE = f"{SOURCE_NAME} (Python documentation, PSF License)"
# The topics in sorted order, their paragraphs (blank-line separated) one after another, are cut in two by characters
# (so the cut does not depend on a tokenizer): the long text is the first LONG_CHARS characters' worth of paragraphs
# (about 17,300 tokens of the bundled tokenizer: the sweep runs 16,384 of them), and the corpus the paragraphs after
# them, cut into documents of CORPUS_CHARS characters or more. Topics repeat one another (the "compound" topic holds
# the "if", "for" and "with" topics whole), so a paragraph seen before is left out: no paragraph is in two places,
# and the long text and the corpus share no text.
LONG_CHARS = 70_000
CORPUS_CHARS = 74_000  # per corpus document: 4 documents of 18,200-18,800 tokens of the bundled tokenizer


def _paragraphs() -> list[tuple[str, str]]:
    """(topic, paragraph) of every topic in sorted order, each paragraph kept only where it first appears."""
    from pydoc_data.topics import topics

    seen: set[str] = set()
    unique = []
    for name, text in sorted(topics.items()):
        for paragraph in text.strip().split("\n\n"):
            if paragraph.strip() and paragraph not in seen:
                seen.add(paragraph)
                unique.append((name, paragraph))
    return unique


def _cut(paragraphs: list[tuple[str, str]], min_chars: int) -> list[tuple[str, str]]:
    """Consecutive paragraphs joined until a piece holds at least `min_chars` characters, named by its first and
    last topic; a remainder too short for a piece of its own joins the last one."""
    pieces: list[list[tuple[str, str]]] = [[]]
    size = 0
    for topic, paragraph in paragraphs:
        pieces[-1].append((topic, paragraph))
        size += len(paragraph)
        if size >= min_chars:
            pieces.append([])
            size = 0
    if len(pieces) > 1 and (not pieces[-1] or size < min_chars):
        last = pieces.pop()
        pieces[-1] += last
    return [(f"{piece[0][0]}..{piece[-1][0]}", "\n\n".join(paragraph for _, paragraph in piece))
            for piece in pieces if piece]


def _split() -> tuple[str, list[tuple[str, str]]]:
    """(the long text, the paragraphs after it, for the corpus)."""
    paragraphs, size = _paragraphs(), 0
    for index, (_, paragraph) in enumerate(paragraphs):
        size += len(paragraph)
        if size >= LONG_CHARS:
            return "\n\n".join(p for _, p in paragraphs[: index + 1]), paragraphs[index + 1 :]
    return "\n\n".join(p for _, p in paragraphs), []


def builtin_corpus(min_chars: int = CORPUS_CHARS) -> list[tuple[str, str]]:
    """(name, text) documents of the paragraphs after the long text's, each at least `min_chars` characters."""
    return _cut(_split()[1], min_chars)


@dataclass(frozen=True, kw_only=True)
class BuiltinDocument:
    """One document of the built-in corpus, with what it is and where it comes from."""

    name: str
    domain: str  # the kind of text: the tuner's summary reports savings per domain
    source: str  # the file it is cut from and its licence
    text: str


@dataclass(frozen=True, kw_only=True)
class FileSource:
    """A document cut from the start of a file that ships with Python or a pinned package: its first `chars`
    characters, ended at a line break (a line is never cut in two)."""

    name: str
    domain: str
    package: str | None  # None: the standard library's folder
    paths: tuple[str, ...]  # read one after another, inside the package's (or stdlib's) folder
    licence: str
    chars: int = CORPUS_CHARS

    def folder(self) -> Path:
        if self.package is None:
            return Path(sysconfig.get_paths()["stdlib"])
        spec = importlib.util.find_spec(self.package)
        return Path(next(iter(spec.submodule_search_locations)))

    @property
    def files(self) -> str:
        """The files, in words: 'Lib/typing.py'."""
        return " + ".join(f"{self.package or 'Lib'}/{path}" for path in self.paths)

    @property
    def where(self) -> str:
        """The files and their licence, in words: 'Lib/typing.py (PSF License)'."""
        return f"{self.files} ({self.licence})"

    def read(self) -> BuiltinDocument:
        folder = self.folder()
        whole = "\n".join((folder / path).read_text(encoding="utf-8") for path in self.paths)
        cut = whole.rfind("\n", 0, self.chars)
        return BuiltinDocument(name=self.name, domain=self.domain, source=self.where,
                               text=whole[: cut if cut > 0 else self.chars])


REFERENCE_DOMAIN = "reference documentation"
# Kinds of text other than the topics, each at least 16,384 tokens of the bundled tokenizer (tests/experiments/
# test_texts.py checks it, and that none shares text with the sweep's long text)
FILE_SOURCES = (
    FileSource(name="idle-news", domain="release notes", package=None,
               paths=("idlelib/NEWS.txt", "idlelib/NEWS2x.txt"), licence="PSF License"),
    FileSource(name="typing-source", domain="Python source code", package=None, paths=("typing.py",),
               licence="PSF License"),
    FileSource(name="argparse-source", domain="Python source code", package=None, paths=("argparse.py",),
               licence="PSF License"),
    FileSource(name="numpy-docstrings", domain="API docstrings", package="numpy", paths=("_core/_add_newdocs.py",),
               licence="BSD-3-Clause"),
)


# The sweep text for a model whose sweep runs past the long text (Gemma 3 270M: 49,152 tokens, 1.5x its trained
# length): the start of the standard library's decimal module in pure Python, a file no corpus document is cut from,
# about 55,000 tokens of Gemma 3's tokenizer and 52,000 of the bundled model's (tests/experiments/test_texts.py checks
# 49,152, and that it shares no text with the long text or any corpus document).
DECIMAL_SOURCE = FileSource(name="decimal-source", domain="Python source code", package=None,
                            paths=("_pydecimal.py",), licence="PSF License", chars=200_000)


def builtin_text(name: str) -> str:
    """'long': the first LONG_CHARS characters' worth of the topics' paragraphs, separated by blank lines;
    'decimal-source': the first 200,000 characters of Lib/_pydecimal.py, ended at a line break."""
    if name not in BUILTIN_TEXTS:
        raise ValueError(f"unknown built-in text {name!r}; choose one of {', '.join(BUILTIN_TEXTS)}")
    return _split()[0] if name == "long" else DECIMAL_SOURCE.read().text


def builtin_source(name: str) -> str:
    """Where the built-in text `name` comes from, with its licence, in words."""
    return SOURCE if name == "long" else DECIMAL_SOURCE.where


def builtin_name(name: str) -> str:
    """What the built-in text `name` is, in a few words: "Python's pydoc_data.topics"."""
    return SOURCE_NAME if name == "long" else DECIMAL_SOURCE.files


def builtin_documents() -> list[BuiltinDocument]:
    """The built-in corpus: the four topic documents first (so the first four are those of earlier tunes), then one
    document per FileSource."""
    topics = [BuiltinDocument(name=name, domain=REFERENCE_DOMAIN, source=SOURCE, text=text)
              for name, text in builtin_corpus()]
    return topics + [source.read() for source in FILE_SOURCES]


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# The long corpus (`tune --corpus builtin-long`), for a model whose tune runs past what the corpus documents hold
# (Gemma 3 270M: 49,152 tokens, 1.5x its trained length): 4 documents of 3 kinds, the first three of different kinds,
# each 59,000-74,000 tokens of Gemma 3's tokenizer (tests/experiments/test_texts.py checks 49,152, and that none
# shares text with decimal-source, Gemma's sweep text, nor with another). Files longer than LONG_CORPUS_CHARS are cut
# there, at a line break.
LONG_CORPUS_CHARS = 240_000
LONG_FILE_SOURCES = (
    FileSource(name="inspect-pydoc-source", domain="Python source code", package=None,
               paths=("inspect.py", "pydoc.py"), licence="PSF License", chars=LONG_CORPUS_CHARS),
    FileSource(name="numpy-docstrings-whole", domain="API docstrings", package="numpy",
               paths=("_core/_add_newdocs.py",), licence="BSD-3-Clause", chars=LONG_CORPUS_CHARS),
    FileSource(name="turtle-tarfile-source", domain="Python source code", package=None,
               paths=("turtle.py", "tarfile.py"), licence="PSF License", chars=LONG_CORPUS_CHARS),
)
LONG_TOPICS = "topics-after-long"  # every paragraph of the topics after the long text's, in one document


def long_builtin_documents() -> list[BuiltinDocument]:
    """The long corpus: the topics' paragraphs after the long text in one document (the built-in corpus's topic
    documents joined), then one document per LONG_FILE_SOURCES."""
    topics = BuiltinDocument(name=LONG_TOPICS, domain=REFERENCE_DOMAIN, source=SOURCE,
                             text="\n\n".join(paragraph for _, paragraph in _split()[1]))
    return [topics] + [source.read() for source in LONG_FILE_SOURCES]
