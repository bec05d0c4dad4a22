"""Shared fixtures: the tiny random model (fast, built in code) and the bundled model (slow: converted once)."""

import pytest
from hypothesis import HealthCheck, settings

from model_utils import load_model

# Deterministic examples: CI must not turn red on a new random draw; the space is still searched widely.
settings.register_profile("explorer", derandomize=True, deadline=None, max_examples=200,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.load_profile("explorer")


@pytest.fixture(scope="session")
def tiny():
    return load_model("tiny-random")


@pytest.fixture
def tiny_env(monkeypatch):
    """The app's environment for AppTest: the tiny model, and no operator model list."""
    monkeypatch.setenv("ATTN_MODEL", "tiny-random")
    monkeypatch.delenv("ATTN_MODELS", raising=False)
    return monkeypatch


@pytest.fixture(scope="session")
def bundled():
    return load_model("bundled")


SAMPLE_TEXT = (
    "Attention weights come from a softmax over scores. Dividing the scores by a temperature above one "
    "flattens the weights; dividing by a temperature below one sharpens them. The first token often collects "
    "a large share of the weight, whatever it says."
)
