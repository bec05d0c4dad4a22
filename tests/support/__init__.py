"""What the tests share (and bench/ may use): the app driver, the tiny architectures, independent references, the
browser's helpers. Not a test module."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository
SAMPLE_TEXT = (
    "Attention weights come from a softmax over scores. Dividing the scores by a temperature above one "
    "flattens the weights; dividing by a temperature below one sharpens them. The first token often collects "
    "a large share of the weight, whatever it says."
)
SHORT_TEXT = "The code is Marigold. Recall"  # 28 tokens of the bundled tokenizer, within the recent window of 32
