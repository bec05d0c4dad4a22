"""The texts a retrieval probe plants and the fillers it plants them in, as token ids of the model's tokenizer. The
built-in passages come from four kinds of text (an essay, release notes, API docstrings, source code), none of which
is in a built-in filler; each is its text's first `tokens` tokens from a fixed starting line."""

from __future__ import annotations

import hashlib
import importlib.util
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model_utils.core.errors import AnalysisError
from model_utils.engine.analyze import tokenize
from model_utils.experiments.texts import builtin_source, builtin_text
from model_utils.models import LoadedModel

ASSETS = Path(__file__).resolve().parents[3] / "assets"


@dataclass(frozen=True, kw_only=True)
class PassageSource:
    """A built-in passage: a file that ships with Python, numpy or this repository, read from the first line that
    starts with `start` (the file's start when empty)."""

    name: str
    kind: str
    package: str | None  # None: the standard library; "assets": this repository's assets folder
    path: str
    licence: str
    start: str = ""

    def read(self) -> str:
        text = (self._folder() / self.path).read_text(encoding="utf-8")
        at = text.find("\n" + self.start) + 1 if self.start else 0
        return text[at : at + 20_000]

    def _folder(self) -> Path:
        if self.package == "assets":
            return ASSETS
        if self.package is None:
            return Path(sysconfig.get_paths()["stdlib"])
        return Path(next(iter(importlib.util.find_spec(self.package).submodule_search_locations)))

    @property
    def where(self) -> str:
        return f"{self.package or 'Lib'}/{self.path} ({self.kind}, {self.licence})"


BUILTIN_PASSAGES = (
    PassageSource(name="essay", kind="an essay", package="assets", path="essay.txt", licence="this repository's"),
    PassageSource(name="release-notes", kind="release notes", package=None, path="idlelib/NEWS.txt",
                  licence="PSF License"),
    PassageSource(name="docstrings", kind="API docstrings", package="numpy", path="_core/_add_newdocs.py",
                  licence="BSD-3-Clause", start="add_newdoc("),
    PassageSource(name="source-code", kind="Python source code", package=None, path="textwrap.py",
                  licence="PSF License"),
)
PASSAGE_NAMES = tuple(source.name for source in BUILTIN_PASSAGES)


@dataclass(frozen=True, kw_only=True)
class Tokens:
    """A passage or a filler as the model reads it: its name, where it comes from, its token ids and their labels."""

    name: str
    source: str
    ids: tuple[int, ...]
    labels: tuple[str, ...]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(np.asarray(self.ids, dtype=np.int64).tobytes()).hexdigest()


def passage_tokens(loaded: LoadedModel, name: str, text: str, source: str, tokens: int) -> Tokens:
    """The first `tokens` tokens of `text` (no special tokens: it sits inside another text)."""
    if not isinstance(text, str) or not text.strip():
        raise AnalysisError(f"the passage {name!r} is empty; give a passage of some text")
    ids = loaded.tokenizer(text[: tokens * 16], add_special_tokens=False)["input_ids"][:tokens]
    labels = tuple(loaded.tokenizer.decode([i], clean_up_tokenization_spaces=False) for i in ids)
    return Tokens(name=name, source=source, ids=tuple(int(i) for i in ids), labels=labels)


def builtin_passages(loaded: LoadedModel, names: tuple[str, ...], tokens: int) -> list[Tokens]:
    by_name = {source.name: source for source in BUILTIN_PASSAGES}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise AnalysisError(f"unknown passage {unknown[0]!r}; choose from {', '.join(PASSAGE_NAMES)}")
    return [passage_tokens(loaded, name, by_name[name].read(), by_name[name].where, tokens) for name in names]


def filler_tokens(loaded: LoadedModel, text: str, source: str, max_tokens: int) -> Tokens:
    """The filler as analyze would read it (the tokenizer's special tokens first), cut to `max_tokens`."""
    ids, _ = tokenize(loaded, text, max_tokens)
    return Tokens(name="filler", source=source, ids=tuple(int(i) for i in ids), labels=())


def builtin_filler(loaded: LoadedModel, name: str, max_tokens: int) -> Tokens:
    return filler_tokens(loaded, builtin_text(name), filler_source(name), max_tokens)


def filler_source(name: str) -> str:
    """Where the built-in filler `name` comes from, as a probe records it."""
    return f"{builtin_source(name)}, built-in text {name!r}"


def retrieval_texts(loaded: LoadedModel, passage: str, filler: str, distance: int, tokens: int, lead: int
                    ) -> tuple[Tokens, list[Tokens]]:
    """A page's probe: the built-in filler `filler` cut to what `distance` needs, and the typed `passage`'s first
    `tokens` tokens (a page reaches the engine only through model_utils' lazy API, which names this)."""
    return (builtin_filler(loaded, filler, lead + distance),
            [passage_tokens(loaded, "your passage", passage, "typed on the page", tokens)])
