"""A path through the pages for a class: each page's point in one sentence (the first thing it says, above its main
chart), and the sentence that leads on to the next page with the same temperatures. The pages whose point is a
measured result (Context length, Retrieval) open on model_utils.verdicts.words' sentence instead."""

from __future__ import annotations

POINT = {
    "softmax_lab": "Dividing the scores by a temperature T before the softmax flattens the weights when T > 1 and "
                   "piles them onto the top score when T < 1; the order of the keys never changes.",
    "attention_maps": "Each word of the text is shaded by the weight the chosen word gives it, one text per "
                      "temperature: pick another word (Query token) to follow what it attends to.",
    "collapse_inspector": "On one long prompt, where each temperature sends attention: to the first token (the "
                          "sink), the last few tokens (recent) or the tokens between (distant), layer by layer, and "
                          "what that does to the loss and the answer.",
    "length_schedules": "Past the length it is anchored to, every published length schedule runs attention at a "
                        "temperature below 1: it sharpens, more the longer the text, where a popular explanation "
                        "says it softens.",
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
