"""How a figure's spread over documents or passages is given (core.bootstrap.spread_over decides): their range below
MIN_FOR_INTERVAL of them, a 95% bootstrap interval from there on; and how a result's intervals were made, as a fact
the file stores and the words say. A record says which, so that the words never call a range of 4 documents a 95%
interval."""

from __future__ import annotations

from enum import Enum

from model_utils.core.records import RecordError, field


class Spread(Enum):
    RANGE = "range"
    INTERVAL_95 = "95% interval"


class SpreadMethod(Enum):
    """How a result's intervals were made (the words say it: verdicts.words.spread_method)."""

    BLOCK_BOOTSTRAP = "block-bootstrap"  # moving blocks of positions within each bucket: a sweep of one text
    DOCUMENT_BOOTSTRAP = "document-bootstrap"  # documents resampled with replacement: a corpus
    RANGE = "range"  # too few documents for a bootstrap: the range of the documents, each alone

    @property
    def spread(self) -> Spread:
        return Spread.RANGE if self is SpreadMethod.RANGE else Spread.INTERVAL_95


# Files written before the method was stored as a fact held its sentence, as those versions wrote it:
OLD_METHODS = {
    "moving-block bootstrap over the positions of each bucket": SpreadMethod.BLOCK_BOOTSTRAP,
    "documents resampled with replacement; the NLL of a bucket is pooled over the positions of the documents drawn "
    "(sum / count)": SpreadMethod.DOCUMENT_BOOTSTRAP,
    "too few documents for a bootstrap: the range of the documents, each alone (its NLL of a bucket over its own "
    "positions)": SpreadMethod.RANGE}


def method_from_sentence(bootstrap: dict, kind: str) -> dict:
    """A bootstrap's JSON with its method as the fact, from a file that stored the method's sentence (and, for a
    corpus, its spread, which the method now says)."""
    sentence = field(bootstrap, "method", kind)
    if sentence not in OLD_METHODS:
        raise RecordError(f"this {kind} made its intervals by {sentence!r}, a method this version does not know: "
                          "regenerate it with the command that made it")
    kept = {key: value for key, value in bootstrap.items() if key != "spread"}
    return kept | {"method": OLD_METHODS[sentence].value}
