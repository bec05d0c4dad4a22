"""The one reader of every record (core.records.base.read): each field read as its type hint says, a field with a
default may be missing, and anything else it cannot read is a RecordError naming the file's kind and the key."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
import pytest

from model_utils.core.records import RecordError
from model_utils.core.records.base import Record, read
from model_utils.core.rope import Rope
from model_utils.core.views import View


class Colour(Enum):
    RED = "red"


@dataclass(frozen=True, kw_only=True)
class Inner(Record):
    bucket: tuple[int, int]
    colour: Colour | None


@dataclass(frozen=True, kw_only=True, eq=False)
class Outer(Record):
    inner: tuple[Inner, ...]
    by_name: dict[str, tuple[float, ...]]
    values: np.ndarray
    rope: Rope | None
    view: View
    late: int = 7  # written after the first files


def test_every_field_is_read_as_its_hint_says():
    data = {"inner": [{"bucket": [0, 4], "colour": "red"}, {"bucket": [4, 8], "colour": None}],
            "by_name": {"a": [1.0, 2.0]}, "values": [[1, 2], [3, 4]], "rope": {"recipe": "yarn", "factor": 2.0},
            "view": View(1.25).to_dict()}
    outer = read(Outer, data, "test file")
    assert outer.inner == (Inner(bucket=(0, 4), colour=Colour.RED), Inner(bucket=(4, 8), colour=None))
    assert outer.by_name == {"a": (1.0, 2.0)}
    assert outer.values.dtype == np.float64 and outer.values.shape == (2, 2)
    assert outer.rope == Rope("yarn", 2.0) and outer.view == View(1.25) and outer.late == 7
    assert Outer.from_dict(outer.to_dict()).to_dict() == outer.to_dict() | {"late": 7}


@pytest.mark.parametrize(("change", "message"), [
    ({"inner": None, "by_name": {}}, "this test file has no 'values'"),
    ({"inner": {"bucket": [0, 1]}}, "holds dict where a list belongs"),
    ({"inner": [{"bucket": [0, 1], "colour": "blue"}]}, "'blue', which is not a Colour"),
    ({"rope": {"recipe": "yarn"}}, "holds a RoPE recipe it cannot read"),
    ({"view": {"kind": "temperature"}}, "holds a view it cannot read"),
    ({"inner": ["x"]}, "holds str where an object belongs"),
])
def test_what_it_cannot_read_is_refused_naming_the_file(change, message):
    data = {"inner": [], "by_name": {}, "values": [], "rope": None, "view": View(1.0).to_dict()} | change
    if "values" in message:
        del data["values"]
    with pytest.raises(RecordError, match=message):
        read(Outer, data, "test file")
