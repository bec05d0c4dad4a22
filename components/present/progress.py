"""The pages' words for the engine's progress events (model_utils.core.progress): the text of a progress bar, and
of the board that visitors following the same computation see. The engine only reports numbers; this is the one
place in the UI that turns them into a sentence."""

from __future__ import annotations

from model_utils.core.progress import EVALUATION, LAYER, PASS, TOKEN, Progress

LAST_STEP = "Every layer done; now the loss and the predictions at every position (the last step)"


def progress_text(event: Progress) -> str:
    """'Layer 3 of 30 (pass 1 of 2, 4 temperature(s) at once, 2,048 tokens), about 20 s left'; after the last
    layer of the last pass, what is left (the estimate covers the layers only); 'Token 5 of 40'; or what a model
    load is doing."""
    if event.stage == LAYER:
        if event.fraction >= 1.0:
            return LAST_STEP
        which = "" if event.parts == 1 else f"pass {event.part} of {event.parts}, "
        return (f"Layer {event.step} of {event.steps} ({which}{event.detail}), "
                f"about {event.seconds_left or 0:.0f} s left")
    if event.stage == TOKEN:
        return f"Token {event.step} of {event.steps}"
    if event.stage == EVALUATION:
        return f"Fold {event.part} of {event.parts}: evaluation {event.step} of at most {event.steps}"
    if event.stage == PASS:
        return f"Pass {min(event.step, event.steps)} of {event.steps}: {event.detail}"
    return event.detail


def sweep_progress_text(*, number: int, passes: int, label: str, event: Progress | None = None,
                        seconds_left: float = 0.0) -> str:
    """A sweep's bar: 'Pass 2 of 4: T=0.8' when the pass starts, then ', layer 3 of 30; about 40 s left for the
    sweep' (`seconds_left` for the whole sweep: the engine's estimate is for its pass only)."""
    text = f"Pass {number} of {passes}: {label}"
    if event is None:
        return text
    return f"{text}, layer {event.step} of {event.steps}; about {seconds_left:.0f} s left for the sweep"
