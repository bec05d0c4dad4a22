"""How a figure's spread over documents or passages is given (core.bootstrap.spread_over decides): their range below
MIN_FOR_INTERVAL of them, a 95% bootstrap interval from there on. A record says which, so that the words never call a
range of 4 documents a 95% interval."""

from __future__ import annotations

from enum import Enum


class Spread(Enum):
    RANGE = "range"
    INTERVAL_95 = "95% interval"
