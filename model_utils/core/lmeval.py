"""What the lm-eval bridge (experiments/lmeval.py) names, without importing lm-eval or torch, so the command line
can check a request and answer --help at once."""

MODEL_NAME = "explorer"  # the bridge's name in lm-eval's model registry (--model explorer in lm-eval's terms)
# RULER's tasks whose haystack needs no download (the others read Paul Graham's essays or SQuAD from the internet)
OFFLINE_TASKS = ("niah_single_1",)
RULER_NEW_TOKENS = 128  # RULER sizes each sample to leave room for this many generated tokens within its length
MIN_LENGTH = 2 * RULER_NEW_TOKENS + 64  # and its prompt needs room beside them
