"""The answer first: what brings the loss back past the trained length. From the length verdict's numbers
(verdicts/past.py: the loss rise and what each lever saves, with its interval), one lever per way of going past the
trained length, each saving put on the scale of the rise, and the lever that does the recovery, chosen by the
numbers: a RoPE recipe, a temperature, or neither. A recipe belongs to a family (FAMILIES): a change of the rotary
frequencies, a distance remapping, or a sink + window; where a sweep ran more than the first, the sentence names the
family that recovers the most. Savings in nats per token past the trained length against T = 1 on the model's own
positions (positive = better); the share of the rise divides by the rise's point value."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from dataclasses import field as dataclass_field

from model_utils.core.records import field
from model_utils.core.rope import Rope

# A lever "does the recovery" when its interval clears 0 and its point value recovers at least this share of the
# rise: below half, the rise is mostly still there, whatever the lever.
RECOVERS = 0.5
TEMPERATURE_KINDS = ("temperature", "on_top", "schedule")  # levers that only multiply the logits
KIND = "decomposition verdict"
# The recipe families, in the order the sentence and the chart take them: what each is called as a family, and as
# the subject of the verdict's last sentence.
FAMILIES = {"frequency": "frequency change (interpolation)", "remap": "distance remapping",
            "sink_window": "sink + window"}
SUBJECTS = {"frequency": "a change of the rotary frequencies (interpolation)", "remap": "a distance remapping",
            "sink_window": "the sink + window"}


def family_of(rope: Rope | None) -> str | None:
    """A recipe's family: "frequency" (core.rope.RECIPES), "sink_window" (a remapping that hides the far keys),
    "remap" (the other remappings); None without a recipe."""
    if rope is None:
        return None
    if not rope.remaps:
        return "frequency"
    return "sink_window" if rope.hides is not None else "remap"


@dataclass(frozen=True, kw_only=True)
class Lever:
    """One way of going past the trained length and what it saves there."""

    label: str
    kind: str  # "temperature" (best constant T alone), "recipe" (at T = 1), "on_top" (a T on a recipe), "schedule"
    what: str  # in words, how it was chosen
    saved: float | None  # nats per token against `against`
    interval: list[float] | None  # 95%, None without resamples
    share_of_rise: float | None  # saved / rise, None where the loss does not rise
    against: str  # "T=1", or the recipe at T = 1 for a temperature on top of it
    own_temperature: bool = False  # a recipe that carries a temperature of its own (YaRN's attention factor)
    family: str | None = None  # of a recipe and a temperature on top of one (FAMILIES); None for the others

    @property
    def clears_zero(self) -> bool:
        return self.interval is not None and self.interval[0] > 0


LEVER_FIELDS = [item.name for item in fields(Lever)]


@dataclass(frozen=True, kw_only=True)
class Decomposition:
    """The loss rise past the trained length, every lever's share of it, and the dominant lever's family."""

    rise: float  # NLL at T = 1 past the trained length minus in the second half of the trained context
    levers: list[Lever]
    dominant: str  # "recipe", "temperature", "neither" or "no_rise"
    scope: str  # "one model, one text" or "N documents"
    rows: list[dict] = dataclass_field(default_factory=list)  # past.decomposition's table, in-sample rows included

    def to_dict(self) -> dict:
        return {"rise": self.rise, "dominant": self.dominant, "scope": self.scope,
                "levers": [asdict(lever) for lever in self.levers], "rows": self.rows}

    @classmethod
    def from_dict(cls, data: dict) -> Decomposition:
        """The decomposition as to_dict wrote it; a lever written before the families (frequency recipes only)
        gets its family from its kind."""
        optional = ("own_temperature", "family")
        levers = [Lever(**{name: field(lever, name, KIND) for name in LEVER_FIELDS if name not in optional},
                        own_temperature=lever.get("own_temperature", False),
                        family=lever.get("family", "frequency" if lever.get("kind") in ("recipe", "on_top") else None))
                  for lever in field(data, "levers", KIND)]
        return cls(rise=field(data, "rise", KIND), dominant=field(data, "dominant", KIND),
                   scope=field(data, "scope", KIND), levers=levers, rows=field(data, "rows", KIND))

    def families(self) -> list[str]:
        """The recipe families with a saving here, in FAMILIES' order."""
        ran = {lever.family for lever in self.levers if lever.kind == "recipe" and lever.saved is not None}
        return [family for family in FAMILIES if family in ran]

    def family_lever(self, family: str) -> Lever | None:
        """The lever that stands for a recipe family: its best recipe at T = 1 without a temperature of its own
        where one ran (the interpolation alone, not YaRN with its attention factor), else its best recipe."""
        chosen = [lever for lever in self.levers if lever.kind == "recipe" and lever.family == family
                  and lever.saved is not None]
        alone = [lever for lever in chosen if not lever.own_temperature]
        return max(alone or chosen, key=lambda lever: lever.saved, default=None)

    def lever(self, family: str) -> Lever | None:
        """The lever that stands for a family, as the sentence names it: for "recipe" the family_lever of the
        recipe family that saves the most; for "temperature" the best temperature or schedule; None for "neither"
        and "no_rise"."""
        if family == "recipe":
            chosen = [self.family_lever(name) for name in self.families()]
            return max(chosen, key=lambda lever: lever.saved, default=None)
        return self.best(("temperature", "schedule")) if family == "temperature" else None

    def best(self, kinds: Sequence[str]) -> Lever | None:
        """The lever of these kinds that saves the most (point value), None if there is none."""
        chosen = [lever for lever in self.levers if lever.kind in kinds and lever.saved is not None]
        return max(chosen, key=lambda lever: lever.saved, default=None)

    def sentence(self) -> str:
        """The answer in one sentence, chosen by `dominant`, with the numbers it rests on."""
        if self.dominant == "no_rise":
            return self._no_rise_sentence()
        if self.families() not in ([], ["frequency"]):
            return self._families_sentence()
        recipe, temperature = self.lever("recipe"), self.best(("temperature",))
        parts = [_share(lever) for lever in (recipe, temperature) if lever is not None]
        said = self._rise() + ", ".join(parts) + self._on_top("the interpolation")
        if self.dominant == "recipe":
            return said + ". The interpolation does the recovery, not the temperature."
        if self.dominant == "temperature":
            return said + ". The temperature does the recovery: no recipe here recovers as much."
        return said + ". No lever recovers half of the rise: most of it remains."

    def _no_rise_sentence(self) -> str:
        """Where the loss does not rise across positions, what the levers still do on the same positions: the
        lever that saves the most (a recipe as `lever` picks it: the interpolation alone where it ran) and the
        temperature alone, each with its interval, and which of them lowers the
        loss there (its interval clears 0), if any."""
        said = (f"The loss does not rise past the trained length ({self.rise:+.2f} nats per token against the "
                f"second half of the trained context; {self.scope})")
        temperature = self.best(("temperature",))
        ran = [lever for lever in (self.lever("recipe"), self.lever("temperature")) if lever is not None]
        top = max(ran, key=lambda lever: lever.saved, default=None)
        if top is None:
            return said + "; no lever ran past it."
        named = [_saving(top)] + ([_saving(temperature)] if temperature not in (None, top) else [])
        if not top.clears_zero:
            return said + ", and no lever lowers it there: " + "; ".join(named) + "."
        who = {"recipe": "a recipe, not the temperature,", "temperature": "a temperature, not a recipe,",
               "schedule": "a published schedule"}[top.kind]
        return (said + ", yet on the same positions " + "; ".join(named) + f": {who} lowers the loss past the "
                "trained length all the same.")

    def _families_sentence(self) -> str:
        """The sentence where more than one family of recipes ran: each family's lever, the temperature alone,
        what a temperature adds on top, and the family that recovers the most, all from the numbers."""
        ranked = sorted((self.family_lever(name) for name in self.families()), key=lambda lever: -lever.saved)
        parts = [f"{FAMILIES[lever.family]}: {_share(lever)}" for lever in ranked]
        temperature = self.best(("temperature",))
        if temperature is not None:
            parts.append(f"temperature alone: {_share(temperature)}")
        said = self._rise() + "; ".join(parts) + self._on_top("a recipe")
        most = self._lead(ranked[0])
        if self.dominant == "recipe":
            return said + f". {most[0].upper()}{most[1:]}, and a recipe, not the temperature, does the recovery."
        if self.dominant == "temperature":
            return said + f". The temperature does the recovery: no recipe here recovers as much; {most}."
        return said + f". No lever recovers half of the rise: most of it remains; {most}."

    def family_gap(self) -> dict | None:
        """The leading recipe family against the next, paired (past.family_gap_rows); None in older files."""
        return next((row for row in self.rows if row["kind"] == "family_gap"), None)

    def _lead(self, lead: Lever) -> str:
        """Which family recovers the most, if its lead over the next family clears 0; else that they recover about
        the same, with the lead and its interval."""
        most = (f"{SUBJECTS[lead.family]} recovers the most of the recipe families ({lead.label}, "
                f"{percent_of_rise(lead)}")
        gap = self.family_gap()
        if gap is None or gap["interval"] is None:
            return most + ")"
        low, high = gap["interval"]
        by = (f"{gap['saved']:+.3f} nats per token more than {gap['against']}, 95% interval {low:+.3f} to "
              f"{high:+.3f}")
        if low > 0:
            return f"{most}; {by})"
        return f"the recipe families recover about the same ({lead.label} saves {by}, which does not clear 0)"

    def _rise(self) -> str:
        return f"Past the trained length the loss rises {self.rise:.2f} nats per token ({self.scope}); "

    def _on_top(self, what: str) -> str:
        """'; a temperature on top of `what`: ...', every temperature on a recipe against the recipe at T = 1."""
        on_top = [lever for lever in self.levers if lever.kind == "on_top" and lever.saved is not None]
        if not on_top:
            return ""
        return f"; a temperature on top of {what}: " + ", ".join(
            f"{lever.label} saves {lever.saved:+.3f} more ({_with_interval(lever, 3, percent_of_rise(lever))})"
            for lever in on_top)


def percent_of_rise(lever: Lever) -> str:
    if lever.share_of_rise is None:
        return "share of the rise unknown"
    share = lever.share_of_rise  # a share that rounds to 0% keeps a decimal, and its sign
    return f"{share:.0%} of the rise" if abs(share) >= 0.005 else f"{share:.1%} of the rise"


def _saving(lever: Lever) -> str:
    """'label saves +0.344 nats per token (95% interval ...)', for a lever without a share of a rise."""
    interval = _with_interval(lever, 3)
    return f"{lever.label} saves {lever.saved:+.3f} nats per token" + (f" ({interval})" if interval else "")


def _share(lever: Lever) -> str:
    """'label saves +2.27 nats per token (95% interval +2.10 to +2.45; 101% of the rise)': the figure with its
    interval first, then its share of the rise; a saving under 0.1 keeps a third decimal, so that a small one is
    not rounded into its interval's neighbour."""
    digits = 2 if abs(lever.saved) >= 0.1 else 3
    return (f"{lever.label} saves {lever.saved:+.{digits}f} nats per token "
            f"({_with_interval(lever, digits, percent_of_rise(lever))})")


def _with_interval(lever: Lever, digits: int, then: str = "") -> str:
    """'95% interval +2.10 to +2.45', followed by '; `then`' where there is more to say; `then` alone (or '') for
    a lever without resamples. The one writer of a lever's interval in a sentence."""
    said = [] if lever.interval is None else [f"95% interval {lever.interval[0]:+.{digits}f} to "
                                              f"{lever.interval[1]:+.{digits}f}"]
    return "; ".join(said + ([then] if then else []))


def decompose(*, rise: float, scope: str, rows: Sequence[dict], schedules: Sequence[dict]) -> Decomposition:
    """The decomposition from the verdict's numbers: `rows` its decomposition rows (past.decomposition: kinds
    reference, recipe, oracle, held_out, on_top, own_temperature) and `schedules` its schedule entries. In-sample
    (oracle) rows are left out: a lever is scored on what it was not chosen on."""
    levers = []
    for row in rows:
        kind = _lever_kind(row)
        if kind is not None:
            levers.append(_lever(row, kind, rise))
    for entry in schedules:
        levers.append(_lever({**entry, "what": _schedule_words(entry), "against": "T=1"}, "schedule", rise))
    return Decomposition(rise=rise, levers=sorted(levers, key=group_of), dominant=_dominant(levers, rise),
                         scope=scope, rows=list(rows))


def group_of(lever: Lever) -> int:
    """Where a lever goes in the list (a stable sort): the temperature alone, each recipe family with the
    temperatures on top of its recipes, then the schedules."""
    if lever.family is not None:
        return 1 + list(FAMILIES).index(lever.family)
    return 0 if lever.kind == "temperature" else 1 + len(FAMILIES)


def _lever_kind(row: dict) -> str | None:
    if row["kind"] == "held_out":
        return "temperature" if row["against"] == "T=1" and not row.get("recipe") else None
    return {"recipe": "recipe", "on_top": "on_top", "own_temperature": "on_top"}.get(row["kind"])


def _lever(row: dict, kind: str, rise: float) -> Lever:
    saved = row.get("saved")
    share = None if saved is None or rise <= 0 else saved / rise
    return Lever(label=row["label"], kind=kind, what=row.get("what", ""), saved=saved, interval=row.get("interval"),
                 share_of_rise=share, against=row.get("against", "T=1"),
                 own_temperature=bool(row.get("own_temperature", False)),
                 family=row.get("family", "frequency") if kind in ("recipe", "on_top") else None)


def _schedule_words(entry: dict) -> str:
    """What a schedule does to the logits inside the trained context and past it, from its multiplier ranges."""
    inside, past = entry.get("m_trained_context"), entry.get("m_past")
    words = []
    if inside is not None and min(inside) < 1:
        words.append(f"softens before the trained length (m down to {min(inside):.3g})")
    if past is not None and max(past) > 1:
        words.append(f"sharpens past it (m up to {max(past):.3g})")
    return "a published schedule that " + " and ".join(words) if words else "a published schedule"


def _dominant(levers: Sequence[Lever], rise: float) -> str:
    """The family of the lever that saves the most, if it clears 0 and recovers at least RECOVERS of the rise."""
    if rise <= 0:
        return "no_rise"
    alone = [lever for lever in levers if lever.kind != "on_top" and lever.saved is not None]
    top = max(alone, key=lambda lever: lever.saved, default=None)
    if top is None or not top.clears_zero or top.saved < RECOVERS * rise:
        return "neither"
    return "recipe" if top.kind == "recipe" else "temperature"
