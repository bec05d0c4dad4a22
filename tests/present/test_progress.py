"""The pages' words for the engine's progress events: each stage reads as a sentence, the last layer says what is
left, and a sweep's bar names its pass and the sweep's own estimate."""

from components.present.progress import LAST_STEP, progress_text, sweep_progress_text
from model_utils.core.progress import LAYER, LOAD, TOKEN, Progress


def layer(step: int, fraction: float, part: int = 1, parts: int = 1) -> Progress:
    return Progress(stage=LAYER, fraction=fraction, step=step, steps=30, part=part, parts=parts, seconds_left=19.6,
                    detail="4 temperature(s) at once, 2,048 tokens")


def test_a_layer_names_its_pass_only_when_there_are_several():
    assert progress_text(layer(3, 0.1)) == "Layer 3 of 30 (4 temperature(s) at once, 2,048 tokens), about 20 s left"
    assert progress_text(layer(3, 0.05, part=1, parts=2)) == (
        "Layer 3 of 30 (pass 1 of 2, 4 temperature(s) at once, 2,048 tokens), about 20 s left")


def test_after_the_last_layer_the_bar_says_what_is_left():
    assert progress_text(layer(30, 0.5, part=1, parts=2)).startswith("Layer 30 of 30 (pass 1 of 2")
    assert progress_text(layer(30, 1.0, part=2, parts=2)) == LAST_STEP


def test_tokens_and_loading():
    assert progress_text(Progress(stage=TOKEN, fraction=0.5, step=2, steps=4)) == "Token 2 of 4"
    assert progress_text(Progress(stage=LOAD, fraction=0.2, detail="Loading the converted weights")) == (
        "Loading the converted weights")


def test_a_sweeps_bar_names_the_pass_then_the_layer_and_the_sweeps_estimate():
    assert sweep_progress_text(number=2, passes=4, label="T=0.8") == "Pass 2 of 4: T=0.8"
    assert sweep_progress_text(number=2, passes=4, label="T=0.8", event=layer(3, 0.1), seconds_left=41.2) == (
        "Pass 2 of 4: T=0.8, layer 3 of 30; about 41 s left for the sweep")
