"""The cut-context reference: the loss a model gives each position past its trained length L when it reads only its
last L tokens or fewer, as the loss of fixed-length models is measured (strided windows of L tokens). The loss at
T = 1 on the whole text minus this, on the same positions, is the rise that running past L costs; comparing with
earlier positions of the text instead mixes the text's difficulty with the position."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model_utils.core.records import check_format
from model_utils.core.records.base import Record, read

FORMAT = 1
KIND = "cut-context reference"


@dataclass(frozen=True, kw_only=True, eq=False)
class CutContextPass(Record):
    """Next-token NLL of positions trained_length .. n_tokens - 2 (as a pass's position_nll[trained_length:]),
    each predicted from a window of `trained_length` tokens that ends `stride` positions or fewer after it: the
    `lead` tokens the tokenizer puts before a text (Gemma's BOS), then the text's last ones, so a position reads
    between min_context and trained_length tokens, as a fresh read of them would."""

    trained_length: int
    stride: int
    n_tokens: int
    min_context: int  # trained_length - stride + 1: the fewest tokens a scored position reads
    windows: int  # passes of trained_length tokens
    position_nll: np.ndarray  # [n_tokens - 1 - trained_length]
    seconds: float  # compute time of the windows (cached ones count what they cost when computed)
    lead: int = 0  # tokens read before the text's in every window; 0 in files written before windows had one
    format: int = FORMAT

    def __eq__(self, other: object) -> bool:
        """Equal fields, the losses compared as arrays (a dataclass's == would compare them element-wise)."""
        if not isinstance(other, CutContextPass):
            return NotImplemented
        mine, theirs = self.to_dict(), other.to_dict()
        return mine == theirs

    __hash__ = None

    @property
    def first_position(self) -> int:
        return self.trained_length

    @classmethod
    def from_dict(cls, data: dict, kind: str | None = None) -> CutContextPass:
        """A reference of this format (its own kind named in a message, whatever file holds it)."""
        check_format(data, KIND, FORMAT)
        return read(cls, data, KIND)

    def to_dict(self) -> dict:
        return super().to_dict() | {"position_nll": [round(float(v), 5) for v in self.position_nll]}
