"""A path through the pages for a class: what to look at first on each page, in one line, and the sentence that
leads on to the next page with the same temperatures."""

from __future__ import annotations

LOOK_AT = {
    "softmax_lab": "Look at the bars as T moves: T > 1 flattens them towards uniform, T < 1 piles the weight onto "
                   "the top score, and the order of the keys never changes.",
    "attention_maps": "Look at the text: each token is shaded by the weight the chosen word gives it, one text per "
                      "temperature; pick another word (Query token) to follow what it attends to.",
    "collapse_inspector": "Look at where the mass goes as T grows: onto the first token (the sink), the recent "
                          "window, or the distant tokens, and what happens to the loss and the answer.",
}

NEXT_STEP = {
    "softmax_lab": "The same softmax runs inside every attention head of a language model: see the words each word "
                   "attends to at these temperatures.",
    "attention_maps": "On a long prompt, the same temperatures move attention onto the first token or spread it "
                      "over distant ones: follow the mass, layer by layer.",
}


def temperatures_param(temperatures: list[float]) -> str:
    """The temperatures as the link carries them (the sidebar's `t`)."""
    return ",".join(f"{t:g}" for t in temperatures)
