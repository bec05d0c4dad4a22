"""What every record shares: to_dict by field name (nested records by their own to_dict, enums by their value, tuples
and arrays as JSON lists) and one reader, driven by the type hints, that takes each field from the JSON object by the
same name, so a record's fields are its file's keys; and a document of a corpus, as a tune and a fit list it."""

from __future__ import annotations

import functools
import sys
import types
import typing
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, fields
from enum import Enum

import numpy as np

from model_utils.core.records import RecordError, field
from model_utils.core.rope import Rope
from model_utils.core.schedules import SCHEDULES, Schedule
from model_utils.core.views import View


def to_plain(value):
    """`value` as JSON holds it: a record (or a Rope, a View) by its to_dict, an enum by its value, tuples, lists and
    arrays as lists, mappings by key."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    return value


class Record:
    """A keyword-only dataclass whose fields are its JSON object's keys: to_dict writes them in field order, from_dict
    reads them by their type hints (`read`)."""

    def to_dict(self) -> dict:
        return {item.name: to_plain(getattr(self, item.name)) for item in fields(self)}

    @classmethod
    def from_dict(cls, data: dict, kind: str | None = None):
        """The record of `data`; a RecordError names its module's KIND (the file or part it belongs to: "run
        record"), else `kind` (the file that holds it)."""
        return read(cls, data, getattr(sys.modules[cls.__module__], "KIND", None) or kind or cls.__name__)


OWN_READERS = (Rope, View, Schedule)  # read by their own from_dict, which raises ValueError


def read(cls: type, data: dict, kind: str, /, **given) -> object:
    """An instance of the dataclass `cls` from the JSON object `data`: each field from the key of its name, read as
    its type hint says (`read_value`); a field with a default may be missing (a file written before it existed reads
    with the default); `given` fields are taken as they are. RecordError naming `kind` and the key otherwise."""
    if not isinstance(data, dict):
        raise RecordError(f"this {kind} holds {type(data).__name__} where an object belongs: it is damaged; "
                          "regenerate it with the command that made it")
    values = dict(given)
    for item, hint in _hints(cls):
        if item.name in values:
            continue
        if item.name in data:
            values[item.name] = read_value(hint, data[item.name], kind)
        elif item.default is MISSING and item.default_factory is MISSING:
            field(data, item.name, kind)  # raises, naming the key
    return cls(**values)


def read_value(hint, value, kind: str):
    """`value` from JSON as the type `hint` holds it: None stays None; a tuple (of one type, or of one per place), a
    dict, an enum, a float64 array, a record (by its own from_dict where it has one), a Rope or a View."""
    if value is None:
        return None
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        chosen = [argument for argument in arguments if argument is not type(None)]
        return read_value(chosen[0], value, kind) if len(chosen) == 1 else value  # several: plain JSON values
    if origin is tuple:
        _list(value, kind)
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            return tuple(read_value(arguments[0], item, kind) for item in value)
        return tuple(read_value(argument, item, kind) for argument, item in zip(arguments, value, strict=False))
    if origin is dict:
        return {key: read_value(arguments[1], item, kind) for key, item in value.items()}
    if hint is np.ndarray:
        return np.asarray(value, dtype=np.float64)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _enum(hint, value, kind)
    if hint in OWN_READERS:
        return _own(hint, value, kind)
    if isinstance(hint, type) and issubclass(hint, Record):
        return hint.from_dict(value, kind)
    return value


@functools.cache
def _hints(cls: type) -> tuple:
    """(field, resolved type hint) of each field of `cls`, once per class."""
    hints = typing.get_type_hints(cls)
    return tuple((item, hints[item.name]) for item in fields(cls))


def _list(value, kind: str) -> None:
    if not isinstance(value, list):
        raise RecordError(f"this {kind} holds {type(value).__name__} where a list belongs: it is damaged; "
                          "regenerate it with the command that made it")


def _enum(hint: type[Enum], value, kind: str) -> Enum:
    try:
        return hint(value)
    except ValueError:
        raise RecordError(f"this {kind} holds {value!r}, which is not a {hint.__name__}: regenerate it with the "
                          "command that made it") from None


def _own(hint: type, value, kind: str):
    try:
        return hint.from_dict(value)
    except ValueError as error:
        what = {Rope: "RoPE recipe", Schedule: "schedule"}.get(hint, "view")
        raise RecordError(f"this {kind} holds a {what} it cannot read ({error}): regenerate it with the command "
                          "that made it") from None


OLD_VIEW_KEYS = ("label", "temperature", "schedule", "rope")  # how files before views were stored whole held one


def old_view(entry: dict, lengths: Sequence[int], trained_length: int, kind: str) -> dict:
    """A view as View.to_dict writes it, from a file written before views were stored whole (its label, temperature,
    schedule label and recipe): a schedule's label is matched to the schedules such a run made (anchored at the
    trained length, yarn's scale a length over it, or the default), never parsed."""
    rope = read_value(Rope | None, field(entry, "rope", kind), kind)
    if field(entry, "temperature", kind) is not None:
        return View(entry["temperature"], rope).to_dict()
    label = field(entry, "label", kind)
    for name in SCHEDULES:
        for parameter in (float(trained_length), *(length / trained_length for length in lengths), None):
            if (parameter is None or parameter > 1) and View(Schedule(name, parameter), rope).label == label:
                return View(Schedule(name, parameter), rope).to_dict()
    raise RecordError(f"this {kind} holds the view {label!r}, a schedule this version cannot match to its "
                      "parameter: regenerate it with the command that made it")


@dataclass(frozen=True, kw_only=True)
class DocumentEntry(Record):
    """A document of a corpus, as a tune or a fit lists it."""

    name: str
    sha256: str
    n_tokens: int
    domain: str | None = None  # what kind of text (a built-in document's); None for a user's folder
