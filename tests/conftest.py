"""Shared fixtures: the tiny random model (fast, built in code) and the bundled model (slow: converted once)."""

import pytest

from model_utils import load_model


@pytest.fixture(scope="session")
def tiny():
    return load_model("tiny-random")


@pytest.fixture(scope="session")
def bundled():
    return load_model("bundled")


SAMPLE_TEXT = (
    "Attention weights come from a softmax over scores. Dividing the scores by a temperature above one "
    "flattens the weights; dividing by a temperature below one sharpens them. The first token often collects "
    "a large share of the weight, whatever it says."
)
