"""What the lm-eval bridge (experiments/lmeval.py) names, without importing lm-eval or torch, so the command line
can check a request and answer --help at once."""

import math

MODEL_NAME = "explorer"  # the bridge's name in lm-eval's model registry (--model explorer in lm-eval's terms)
# RULER's tasks whose haystack needs no download (the others read Paul Graham's essays or SQuAD from the internet)
OFFLINE_TASKS = ("niah_single_1",)
RULER_NEW_TOKENS = 128  # RULER sizes each sample to leave room for this many generated tokens within its length
MIN_LENGTH = 2 * RULER_NEW_TOKENS + 64  # and its prompt needs room beside them


def wilson_interval(successes: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval (95% by default) of a share of `successes` out of `n` samples: unlike the plain
    p +- z sqrt(p(1 - p) / n) it stays inside [0, 1] and is not zero wide at 0 or n out of n."""
    if n < 1:
        raise ValueError("an interval needs at least one sample")
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)
