"""Typed records of the result files (a sweep document, a corpus summary, a fit): each written and read only
through its record's to_dict / from_dict, with a format number, so a renamed or missing key fails at load with a
message that names the file's kind and the fix, never later in a page. Numpy and the standard library only."""

from __future__ import annotations

from model_utils.core.errors import AnalysisError


class RecordError(AnalysisError):
    """A result file that cannot be read as its record: a missing key or another format; the message says which."""


def check_format(data: dict, kind: str, expected: int, accepted: tuple[int, ...] = ()) -> int:
    """The file's format number, if it is `expected` or one of the older `accepted` ones this reader migrates;
    RecordError otherwise."""
    if not isinstance(data, dict):
        raise RecordError(f"a {kind} must be a JSON object, got {type(data).__name__}")
    found = data.get("format")
    if found != expected and found not in accepted:
        known = ", ".join(str(n) for n in (*accepted, expected))
        raise RecordError(f"this {kind} has format {found!r}; this version reads format {known}: "
                          "regenerate it with the command that made it")
    return found


def field(data: dict, key: str, kind: str):
    """data[key], or RecordError naming the missing key and the kind of file."""
    try:
        return data[key]
    except KeyError:
        raise RecordError(f"this {kind} has no {key!r}: it is damaged or not a {kind}; "
                          "regenerate it with the command that made it") from None
