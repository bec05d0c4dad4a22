"""The pages' tests' fixtures: what runs the model while a page is open, and the Context length page opening on the
tiny model's sweep with recipes."""

import pytest

import components.serving.cache
import model_utils.experiments.sweep
from components.serving import settings
from components.serving.cache import cached_sweep


@pytest.fixture
def runs(tiny_env):
    """Counts what runs the model: sweeps started and model passes computed (model_utils.experiments.sweep calls
    analyze once per temperature or schedule it does not find in its pass cache)."""
    cached_sweep.clear()
    counted = {"sweeps": 0, "passes": 0}
    real_sweep, real_analyze = model_utils.experiments.sweep.sweep, model_utils.experiments.sweep.analyze

    def counting_sweep(*args, **kwargs):
        counted["sweeps"] += 1
        return real_sweep(*args, **kwargs)

    def counting_analyze(*args, **kwargs):
        counted["passes"] += 1
        return real_analyze(*args, **kwargs)

    tiny_env.setattr(model_utils.experiments.sweep, "sweep", counting_sweep)
    tiny_env.setattr(model_utils.experiments.sweep, "analyze", counting_analyze)
    tiny_env.setattr(components.serving.cache, "analyze", counting_analyze)
    return counted


@pytest.fixture
def recipe_env(tiny_env, tiny_recipe_sweep_file):
    """The page opening on the tiny model's sweep with recipes (conftest.tiny_recipe_sweep_file)."""
    tiny_env.setattr(settings, "CONTEXT_SWEEP", tiny_recipe_sweep_file)
    return tiny_env
