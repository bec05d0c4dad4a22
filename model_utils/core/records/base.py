"""What every record shares: to_dict by field name (nested records by their own to_dict, enums by their value, tuples
as JSON lists) and a reader that takes each field from the JSON object by the same name, so a record's fields are its
file's keys; and a document of a corpus, as a tune and a fit list it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import Enum

from model_utils.core.records import RecordError, field
from model_utils.core.rope import Rope


def to_plain(value):
    """`value` as JSON holds it: a record (or a Rope) by its to_dict, an enum by its value, tuples and lists as lists,
    mappings by key."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    return value


class Record:
    """A keyword-only dataclass whose fields are its JSON object's keys: to_dict writes them in field order."""

    def to_dict(self) -> dict:
        return {item.name: to_plain(getattr(self, item.name)) for item in fields(self)}


def read(cls: type, data: dict, kind: str, /, **convert: Callable) -> object:
    """An instance of the dataclass `cls` from `data`: each field from the key of its name (RecordError naming a
    missing one), passed through `convert[name]` where given (None stays None)."""
    if not isinstance(data, dict):
        raise RecordError(f"this {kind} holds {type(data).__name__} where an object belongs: it is damaged; "
                          "regenerate it with the command that made it")
    values = {}
    for item in fields(cls):
        value = field(data, item.name, kind)
        values[item.name] = value if value is None or item.name not in convert else convert[item.name](value)
    return cls(**values)


def numbers(values) -> tuple:
    """A JSON list of numbers (or of lists of numbers, such as intervals) as nested tuples."""
    return tuple(numbers(value) if isinstance(value, list) else value for value in values)


def records(reader: Callable) -> Callable:
    """A converter of a JSON list of objects into a tuple of records, each read by `reader`."""
    return lambda values: tuple(reader(value) for value in values)


def rope(kind: str) -> Callable[[dict], Rope]:
    """A converter of a recipe as Rope.to_dict writes it into a Rope, RecordError naming `kind` otherwise."""
    def read_rope(data: dict) -> Rope:
        try:
            return Rope.from_dict(data)
        except ValueError as error:
            raise RecordError(f"this {kind} holds a RoPE recipe it cannot read ({error}): regenerate it with the "
                              "command that made it") from None
    return read_rope


@dataclass(frozen=True, kw_only=True)
class DocumentEntry(Record):
    """A document of a corpus, as a tune or a fit lists it."""

    name: str
    sha256: str
    n_tokens: int
    domain: str | None = None  # what kind of text (a built-in document's); None for a user's folder

    @classmethod
    def from_dict(cls, data: dict, kind: str = "document entry") -> DocumentEntry:
        """Files written before documents had a domain read with none."""
        return read(cls, {"domain": None} | data if isinstance(data, dict) else data, kind)
