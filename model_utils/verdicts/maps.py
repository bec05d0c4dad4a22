"""Whether the mean of a layer's heads hides what a temperature does to one query's attention: the top / runner-up
ratio of the averaged row rises with T (against the lesson: T > 1 softens each head) or falls far less than the
picked head's (core.report.HeadPick). Averaging heads that look at different words mixes their weights, so the
averaged row's top and runner-up may be two heads' favourites, and their ratio says little about any one softmax."""

from __future__ import annotations

import math
from dataclasses import dataclass

from model_utils.core.report import HeadPick

# the mean shows the effect while its ratio falls by at least this power of the picked head's factor: half of it on
# a log scale (a head whose ratio falls 16-fold against a mean whose ratio falls 4-fold still shows it)
SHOWN_POWER = 0.5


@dataclass(frozen=True, kw_only=True)
class HiddenByMean:
    """The mean of heads of `layer` hides the effect: its ratios at the sharpest and softest T, and the pick's."""

    layer: int
    ratios: tuple[float, float]  # the mean of heads' top / runner-up at (sharpest T, softest T)
    pick: HeadPick

    @property
    def against(self) -> bool:
        """The mean's ratio rises with T, the other way from one softmax's."""
        return self.ratios[1] > self.ratios[0]


def hidden_by_mean(layer: int, ratios: tuple[float, float], pick: HeadPick | None) -> HiddenByMean | None:
    """The verdict where the mean of heads of `layer` (its query row's top / runner-up ratios at the pick's two
    temperatures) rises with T or falls by less than the pick's factor ** SHOWN_POWER; None where it shows the
    effect, or there is no pick (or no ratio) to compare, or the pick's own ratio does not fall."""
    if pick is None or pick.ratio_factor <= 1 or not all(math.isfinite(r) and r > 0 for r in (*ratios, *pick.ratios)):
        return None
    falls = ratios[0] / ratios[1]
    if falls >= 1 and falls >= pick.ratio_factor ** SHOWN_POWER:
        return None
    return HiddenByMean(layer=layer, ratios=ratios, pick=pick)
