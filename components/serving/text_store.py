"""The texts too long for a link, held by the server under a short id (the start of their SHA-256), so that a link to
a long prompt opens that prompt. The store is one per server process, bounded in texts and in characters, and forgets
the least recently used text first; a link whose text it no longer holds is told so, never handed another text."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import streamlit as st

ID_LENGTH = 16  # hex digits of the SHA-256: 64 bits, so two texts of one server never share an id by chance
MAX_TEXTS = 256  # long texts one server keeps (each link's text, shared by every session)
MAX_CHARS = 20_000_000  # and their characters together: at most 100 texts of the largest size a text box accepts


def text_id(text: str) -> str:
    """The id a text travels under: the start of its SHA-256, so the same text always gets the same link."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:ID_LENGTH]


class TextStore:
    """A bounded, thread-safe map id -> text (every session of the server shares it), least recently used out first."""

    def __init__(self, max_texts: int = MAX_TEXTS, max_chars: int = MAX_CHARS):
        self.max_texts, self.max_chars = max_texts, max_chars
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def put(self, text: str) -> str:
        """Keep `text` (or mark it as just used) and return its id; older texts go once a bound is passed."""
        key = text_id(text)
        with self._lock:
            if key in self._texts:
                self._texts.move_to_end(key)
                return key
            self._texts[key] = text
            self._chars += len(text)
            while len(self._texts) > 1 and (len(self._texts) > self.max_texts or self._chars > self.max_chars):
                _, dropped = self._texts.popitem(last=False)
                self._chars -= len(dropped)
        return key

    def get(self, key: str) -> str | None:
        """The text kept under `key`, or None where it was never kept here or has been forgotten."""
        with self._lock:
            text = self._texts.get(key)
            if text is not None:
                self._texts.move_to_end(key)
            return text

    def __len__(self) -> int:
        return len(self._texts)


@st.cache_resource(show_spinner=False)
def text_store() -> TextStore:
    """The server's one store (st.cache_resource: shared by every session, created on first use)."""
    return TextStore()
