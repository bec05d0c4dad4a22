"""Text that may hold user input, made safe for Streamlit markdown (st.error, st.info, st.caption, ...)."""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def plain(text: str) -> str:
    """`text` with every markdown, HTML or Streamlit directive character (links, emphasis, :colour[...])
    backslash-escaped, so it shows as is."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))
