"""Distance remappings as recipes (core.rope): what --rope reads, the label and the JSON record, the far positions
against each recipe's definition written out pair by pair (issue 36's), the largest distance a pass sees, and the
messages for what a user can mistype."""

import argparse

import numpy as np
import pytest

from model_utils.cli.parser import rope_arg
from model_utils.core.rope import REMAPS, Rope, parse_rope

REMAPPINGS = [
    ("self-extend:2,16", Rope("self-extend", group=2, window=16), "self-extend (G=2, W=16)"),
    ("rerope:12", Rope("rerope", window=12), "rerope (W=12)"),
    ("leaky-rerope:12,4", Rope("leaky-rerope", window=12, slope=4.0), "leaky-rerope (W=12, K=4)"),
    ("sink-window:4,16", Rope("sink-window", sinks=4, window=16), "sink-window (S=4, W=16)"),
    ("self-extend:3,7", Rope("self-extend", group=3, window=7), "self-extend (G=3, W=7)"),
]


@pytest.mark.parametrize(("text", "rope", "label"), REMAPPINGS)
def test_a_remapping_reads_labels_and_round_trips(text, rope, label):
    assert parse_rope(text) == rope and rope.remaps
    assert rope.label == label
    assert Rope.from_dict(rope.to_dict()) == rope
    assert Rope.from_dict(rope.applied()) == rope  # the form a report's result carries
    assert rope.applied()["attention_factor"] == 1.0 and rope.rope_type is None
    assert hash(rope) == hash(parse_rope(text))  # the engine groups views by recipe


def test_the_record_holds_exactly_the_recipes_parameters():
    assert Rope("self-extend", group=2, window=1024).to_dict() == {"recipe": "self-extend", "group": 2,
                                                                   "window": 1024}
    assert Rope("sink-window", sinks=4, window=8192).to_dict() == {"recipe": "sink-window", "sinks": 4,
                                                                   "window": 8192}
    assert Rope("yarn", 2).to_dict() == {"recipe": "yarn", "factor": 2.0}  # the frequency recipes' form is kept
    assert Rope("yarn", 2).label == "yarn (s=2)" and not Rope("yarn", 2).remaps
    assert Rope("yarn", 2).applied(1.07) == {"recipe": "yarn", "rope_type": "yarn", "factor": 2.0,
                                             "attention_factor": 1.07}
    assert Rope("self-extend", group=2, window=16) != Rope("self-extend", group=2, window=17)


def test_the_command_line_reads_a_remapping_with_its_temperatures():
    request = rope_arg("self-extend:2,16@0.9,1")
    assert request.rope == Rope("self-extend", group=2, window=16) and request.temperatures == (0.9, 1.0)
    assert rope_arg("sink-window:4,16").temperatures is None
    with pytest.raises(argparse.ArgumentTypeError, match="G must be a whole number >= 1"):
        rope_arg("self-extend:0,1024")


def remapped_distance(rope: Rope, i: int, j: int) -> float | None:
    """Issue 36's definitions, pair by pair: the distance the recipe gives query i and key j (None: hidden)."""
    d = i - j
    if d < rope.window:
        return d
    if rope.kind == "self-extend":
        return (i // rope.group + rope.window - rope.window // rope.group) - j // rope.group
    if rope.kind == "rerope":
        return rope.window
    if rope.kind == "leaky-rerope":
        return rope.window + (d - rope.window) / rope.slope
    return rope.sinks + rope.window - 1 - j if j < rope.sinks else None


@pytest.mark.parametrize(("text", "rope", "label"), REMAPPINGS)
def test_the_far_positions_give_each_recipes_distance(text, rope, label):
    n = 60
    query, key = rope.far_positions(n)
    largest = 0.0
    for i in range(n):
        for j in range(i + 1):
            expected = remapped_distance(rope, i, j)
            if expected is None:
                assert rope.hides is not None and j >= rope.hides and i - j >= rope.window
                continue
            got = i - j if i - j < rope.window else query[i] - key[j]
            assert got == pytest.approx(expected, abs=1e-12), (i, j)
            largest = max(largest, expected)
    assert rope.max_distance(n) == pytest.approx(largest)


def test_self_extends_largest_distance_is_about_w_plus_the_rest_over_g():
    rope = Rope("self-extend", group=2, window=1024)
    assert rope.max_distance(16_384) == 16_383 // 2 + 1024 - 512
    assert rope.max_distance(1000) == 999  # the whole text inside the window: nothing remapped
    assert Rope("rerope", window=8192).max_distance(16_384) == 8192
    assert Rope("sink-window", sinks=0, window=100).max_distance(1000) == 99  # no sink left to see far away


@pytest.mark.parametrize(("text", "message"), [
    ("self-extend:0,1024", "G must be a whole number >= 1"),
    ("self-extend:2,0", "W must be a whole number >= 1"),
    ("self-extend:-1,16", "G must be a whole number >= 1"),
    ("self-extend:2.5,16", "G '2.5' is not a whole number"),
    ("self-extend:2,16.0", "W '16.0' is not a whole number"),
    ("self-extend:2", "needs 2 number"),
    ("self-extend:2,16,3", "needs 2 number"),
    ("self-extend", "needs 2 number"),
    ("rerope:0", "W must be a whole number >= 1"),
    ("rerope:abc", "W 'abc' is not a whole number"),
    ("leaky-rerope:16,1", "K must be a number above 1"),
    ("leaky-rerope:16,nan", "K must be a number above 1"),
    ("sink-window:-1,16", "S must be a whole number >= 0"),
    ("sink-window:4,", "needs 2 number"),
    ("self-stretch:2,16", "unknown RoPE recipe 'self-stretch'"),
    ("yarn:2,3", "needs a scale factor"),
])
def test_a_mistyped_remapping_names_the_fix(text, message):
    with pytest.raises(ValueError, match=message):
        parse_rope(text)


def test_a_recipe_takes_only_its_own_parameters():
    with pytest.raises(ValueError, match="rerope takes rerope:W, not G"):
        Rope("rerope", window=16, group=2)
    with pytest.raises(ValueError, match="yarn takes yarn:s, not W"):
        Rope("yarn", 2, window=16)
    with pytest.raises(ValueError, match="self-extend takes self-extend:G,W, not s"):
        Rope("self-extend", 2.0, group=2, window=16)
    with pytest.raises(ValueError, match="G must be a whole number"):
        Rope("self-extend", group=True, window=16)
    with pytest.raises(ValueError, match="needs 'recipe' and its parameters"):
        Rope.from_dict({"recipe": "self-extend", "group": 2})


def test_a_window_past_the_trained_length_is_refused_with_the_rule():
    Rope("self-extend", group=2, window=1024).check_window(1024)  # W = L: every kept distance was trained
    for rope in (Rope(kind, **{name: 2 if name != "window" else 2048 for name in info.parameters})
                 for kind, info in REMAPS.items()):
        with pytest.raises(ValueError, match=r"W = 2,048 is longer than the trained length 1,024.*W <= 1,024"):
            rope.check_window(1024)
    Rope("yarn", 4).check_window(16)  # a frequency recipe has no window


def test_the_far_positions_are_numbers_for_any_length():
    for _, rope, _ in REMAPPINGS:
        query, key = rope.far_positions(5)
        assert query.shape == key.shape == (5,) and query.dtype == key.dtype == np.float64
