"""Text that may hold user input, made safe for Streamlit markdown (st.error, st.info, st.caption, ...)."""

from __future__ import annotations

import math
import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def plain(text: str) -> str:
    """`text` with every markdown, HTML or Streamlit directive character (links, emphasis, :colour[...])
    backslash-escaped, so it shows as is."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def ratio_text(value: float, digits: int = 3) -> str:
    """A weight ratio as a reader says it: '148x' and '12.2x' to `digits` significant digits, '22,026x' in whole
    numbers up to a billion, '4.85 × 10⁸x'-style beyond ('2.2e+04x' is not for a classroom), 'unbounded' for an
    infinite one (a runner-up of weight 0)."""
    if math.isinf(value):
        return "unbounded"
    if float(f"{value:.{digits}g}") < 1_000:  # 999.7 to 3 digits would read '1e+03'
        return f"{value:.{digits}g}x"
    if value < 1e9:
        return f"{value:,.0f}x"
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")  # the rounding carries into the exponent
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}x"


_CONTROL = {"\n": "↵", "\r": "␍", "\t": "⇥", " ": "␣"}


def visible_token(token: str) -> str:
    """A token with nothing invisible left: a whitespace-only token as ␣ / ↵ / ⇥ marks (∅ when empty), a newline,
    return or tab inside it as its mark, and any other control character (NUL, BEL, ...) as \\xNN, so that a widget
    label or a chart label shows it and never carries the raw byte."""
    if token.strip() == "":
        shown = "".join(_CONTROL.get(ch, "␣") for ch in token) or "∅"
    else:
        shown = "".join(_CONTROL.get(ch, ch) if ch in "\n\r\t" else ch for ch in token)
    return "".join(f"\\x{ord(ch):02x}" if ord(ch) < 32 or 127 <= ord(ch) < 160 else ch for ch in shown)
