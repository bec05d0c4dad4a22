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
    if value < 1_000:
        return f"{value:.{digits}g}x"
    if value < 1e9:
        return f"{value:,.0f}x"
    exponent = math.floor(math.log10(value))
    return f"{value / 10 ** exponent:.{digits - 1}f} × 10{str(exponent).translate(_SUPERSCRIPT)}x"
