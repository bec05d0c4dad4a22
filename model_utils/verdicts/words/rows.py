"""The decomposition's rows: a row's code name in tables, sentences and FINDINGS (`row_label`: 'yarn-rope (s=2) +
T=1'), its plain name on a chart (`chart_label`: "YaRN's stretch, s = 2"), what it is (`row_what`), and the
decomposition table; a layer type's name."""

from __future__ import annotations

from model_utils.core.names import model_name
from model_utils.core.records.verdict import (
    ContextVerdict,
    Decomposition,
    DecompositionRow,
    Family,
    LayerTypeMass,
    Multipliers,
    RowKind,
    Scoring,
    family_of,
)
from model_utils.core.rope import Rope, recipe_info
from model_utils.core.schedules import Schedule, yarn_multiplier
from model_utils.core.views import View
from model_utils.verdicts.words.common import (
    FAMILIES,
    MOVES,
    NO_VALUE,
    interval_name,
    scoring_method,
    scoring_short,
    signed,
)

__all__ = ["BY_LAYER_TYPE", "CHART_RECIPES", "CHART_SCHEDULES", "chart_label", "chart_title",
           "decomposition_columns", "decomposition_table", "layer_type_name", "layer_type_short", "plain_view_name",
           "recipe_name", "recipe_words", "row_label", "row_what", "schedule_name", "schedule_words"]


def layer_type_name(kind: LayerTypeMass) -> str:
    """'sliding-window layers of 512 keys' or 'global (full-attention) layers'."""
    return "global (full-attention) layers" if kind.sliding_span is None else \
        f"sliding-window layers of {kind.sliding_span:,} keys"


def layer_type_short(kind: LayerTypeMass) -> str:
    """A layer type in a table cell: 'sliding 512' or 'global'."""
    return "global" if kind.sliding_span is None else f"sliding {kind.sliding_span:,}"


def has_recipes(decomposition: Decomposition) -> bool:
    return any(row.kind in (RowKind.RECIPE, RowKind.OWN_TEMPERATURE) for row in decomposition.rows)


def schedule_words(multipliers: Multipliers | None) -> str:
    """What a schedule does inside the trained context and past it, as the temperatures it amounts to."""
    inside, past = (None, None) if multipliers is None else (multipliers.trained_context, multipliers.past)
    words = []
    if inside is not None and min(inside) < 1:
        words.append(f"softens before the trained length (up to T = {1 / min(inside):.3g})")
    if past is not None and max(past) > 1:
        words.append(f"sharpens past it (down to T = {1 / max(past):.3g})")
    return "a published schedule that " + " and ".join(words) if words else "a published schedule"


def _prefix(rope: Rope | None) -> str:
    return "" if rope is None else f"{rope.label} + "


def row_label(row: DecompositionRow) -> str:
    """A row's code name in a table, a sentence and a chart's hover text: the pass it is ('yarn-rope (s=2) + T=1'),
    a choice of temperature ('best T per bucket (held out over documents)'), a comparison ('A vs B') or a fitted
    value."""
    kind = row.kind
    if kind in (RowKind.REFERENCE, RowKind.RECIPE, RowKind.SCHEDULE):
        return row.view.label
    if kind in (RowKind.ORACLE, RowKind.HELD_OUT):
        return f"{_prefix(row.rope)}best T per bucket ({scoring_short(row.scoring)})"
    if kind is RowKind.ON_TOP:
        return f"{row.rope.label} + best T per bucket vs T=1 on it ({scoring_short(row.scoring)})"
    if kind is RowKind.FITTED:
        return f"{row.fitted.knob} fitted on {row.rope.label} (held out)"
    return f"{row.view.label} vs {row.against.label}"  # OWN_TEMPERATURE, FAMILY_GAP


# A recipe as a chart names it: a frequency recipe by what it does to the positions, with its scale s; a distance
# remapping by its name, with its settings in words.
CHART_RECIPES = {"yarn-rope": "YaRN's stretch", "yarn": "YaRN in full", "dynamic": "dynamic NTK stretch",
                 "linear": "linear stretch", "llama3": "Llama 3.1's stretch", "self-extend": "Self-Extend",
                 "rerope": "ReRoPE", "leaky-rerope": "leaky ReRoPE", "sink-window": "sink + window"}
SETTINGS = {"group": "groups of {:,}", "window": "window {:,}", "slope": "slope {:g}", "sinks": "first {:,} tokens"}
CHOSEN = {Scoring.HELD_OUT_DOCUMENTS: "chosen on other documents",
          Scoring.CROSS_FIT_ONE_TEXT: "chosen on other parts of the text"}
FITTED = {"constant": "the fitted temperature", "logn": "the fitted temperature growing with ln(position)"}


def recipe_name(rope: Rope) -> str:
    """"YaRN's stretch, s = 2", 'Self-Extend (groups of 4, window 2,048)': a recipe as a chart names it."""
    name = CHART_RECIPES.get(rope.kind, recipe_info(rope.kind).name)
    if not rope.remaps:
        return f"{name}, s = {rope.factor:g}"
    settings = ", ".join(SETTINGS[field].format(getattr(rope, field)) for field in recipe_info(rope.kind).parameters)
    return f"{name} ({settings})"


def plain_view_name(view: View) -> str:
    """"T = 0.8", "YaRN's stretch (s = 2)", "Self-Extend (groups of 4, window 2,048) at T = 0.9": a view in a
    teacher's words; a schedule keeps its code label."""
    if view.temperature is None:
        return view.label
    temperature = f"T = {view.temperature:g}"
    if view.rope is None:
        return temperature
    rope = view.rope
    name = (recipe_name(rope) if rope.remaps else
            f"{CHART_RECIPES.get(rope.kind, recipe_info(rope.kind).name)} (s = {rope.factor:g})")
    return name + ("" if view.temperature == 1 else f" at {temperature}")


CHART_SCHEDULES = {"qwen-logn": "Qwen's log-n schedule", "llama4": "Llama 4's schedule", "ssmax": "SSMax",
                   "logn": "log-n", "yarn": "YaRN's sharpening alone"}  # a published schedule as a chart names it


def schedule_name(schedule: Schedule) -> str:
    """"Qwen's log-n schedule", "YaRN's sharpening alone, s = 2": a published schedule as a chart names it, YaRN's
    with its scale (the others' knob is the trained length they are anchored at)."""
    name = CHART_SCHEDULES.get(schedule.name, schedule.name)
    return f"{name}, s = {schedule.resolved_parameter:g}" if schedule.name == "yarn" else name


def chart_title(model: str, verdict: ContextVerdict, text: str | None = None) -> str:
    """What a decomposition chart was measured on, over it: 'SmolLM2-135M, 8 documents', 'SmolLM2-135M, one text
    (Python's pydoc_data.topics)' (`text`, a sweep's text name)."""
    on = f"{verdict.documents} documents" if verdict.documents else "one text" + (f" ({text})" if text else "")
    return f"{model_name(model)}, {on}"


def chart_label(row: DecompositionRow) -> str:
    """A lever as a chart names it, in a teacher's words ("a temperature on top of YaRN's stretch, s = 2", "Qwen's
    log-n schedule"); its code name (row_label) goes in the hover text. A row that is no lever keeps its code name,
    and so does a schedule that is no published one (the fitter's log-length family)."""
    kind, rope = row.kind, row.rope
    if kind is RowKind.SCHEDULE and row.schedule is not None:
        return schedule_name(row.schedule) + ("" if rope is None else f" on {recipe_name(rope)}")
    if kind is RowKind.RECIPE:
        return recipe_name(rope)
    if kind is RowKind.OWN_TEMPERATURE:
        return f"{recipe_info(rope.kind).name}'s own sharpening on top of its stretch, s = {rope.factor:g}"
    if kind is RowKind.ON_TOP:
        return f"a temperature on top of {recipe_name(rope)}"
    if kind is RowKind.FITTED:
        return f"{FITTED.get(row.fitted.family, f'the fitted {row.fitted.knob}')} on top of {recipe_name(rope)}"
    if kind is RowKind.HELD_OUT and rope is None and row.scoring in CHOSEN:
        return f"best T per block of positions ({CHOSEN[row.scoring]})"
    return row_label(row)


def recipe_words(rope: Rope) -> str:
    """What a recipe is: its name, and a remapping's frequencies or YaRN's own temperature."""
    info = recipe_info(rope.kind)
    if family_of(rope) is Family.REMAP:
        return f"a distance remapping: {info.name}, the rotary frequencies kept"
    if info.temperature:
        return f"{info.name}: its interpolation and its own temperature (logits x {yarn_multiplier(rope.factor):.3g})"
    return info.name


def row_what(row: DecompositionRow, verdict: ContextVerdict) -> str:
    """What a row is, in words: how its temperature was chosen, what its recipe changes."""
    kind, rope = row.kind, row.rope
    alone = "alone" if rope is None else f"on {rope.label}"
    if kind is RowKind.REFERENCE:
        return "the model as trained"
    if kind is RowKind.RECIPE:
        return recipe_words(rope)
    if kind in (RowKind.ORACLE, RowKind.HELD_OUT):
        return f"the best constant temperature {alone}, {scoring_method(row.scoring, verdict.block)}"
    if kind is RowKind.ON_TOP:
        return (f"the best constant temperature on {rope.label} against {rope.label} at T = 1, "
                f"{scoring_method(row.scoring, verdict.block)}")
    if kind is RowKind.OWN_TEMPERATURE:
        return (f"{recipe_info(rope.kind).name}'s own temperature on top of its interpolation "
                f"(logits x {yarn_multiplier(rope.factor):.3g})")
    if kind is RowKind.FAMILY_GAP:
        second = verdict.decomposition.row_of(row.against)
        return (f"the {FAMILIES[row.family]} that saves the most against the {FAMILIES[second.family]} that saves the "
                "most, both at T = 1")
    if kind is RowKind.SCHEDULE:
        return schedule_words(row.multipliers)
    fitted = row.fitted
    low, high = fitted.interval
    return (f"a {fitted.family} {fitted.knob} on top of the recipe at T = 1, each document scored with the "
            f"{fitted.knob} fitted on the other fold's documents (`make fit`); fitted on all the documents it is "
            f"{fitted.value:.3f} (95% interval {low:.3f}-{high:.3f})")


def decomposition_columns(verdict: ContextVerdict) -> tuple[str, ...]:
    """The decomposition table's columns, its saving's spread named as the verdict's (interval_name)."""
    return ("view", "what it is", f"saves past the trained length ({interval_name(verdict)})",
            "untrained-distance mass past it")



BY_LAYER_TYPE = "untrained-distance mass past it, by layer type"


def decomposition_table(verdict: ContextVerdict) -> list[dict[str, str]]:
    """The decomposition past the trained length as table rows, each view with what it is, what it saves
    against T = 1 on the model's own positions (with its spread) and where it leaves the untrained-distance mass;
    empty without a RoPE recipe (then it only repeats the in-sample sentence)."""
    if not has_recipes(verdict.decomposition):
        return []

    def mass(row: DecompositionRow) -> str:
        raw, effective = row.untrained_mass_past, row.effective_untrained_mass_past
        moved = f" ({MOVES[row.untrained]})" if row.untrained and row.kind is not RowKind.REFERENCE else ""
        if raw is None:
            return NO_VALUE
        if not row.remaps:
            return f"{raw:.3f}{moved}"
        said = "not measured" if effective is None else f"{effective:.3f}{moved}"
        return f"{said} on the remapped distances; {raw:.3f} in the text"

    def by_type(row: DecompositionRow) -> dict[str, str]:
        if not verdict.layer_types:
            return {}
        masses = row.untrained_mass_by_layer_type
        return {BY_LAYER_TYPE: NO_VALUE if masses is None else "; ".join(
            f"{layer_type_short(kind)}: {value:.3f}"
            for kind, value in zip(verdict.layer_types, masses, strict=True))}

    columns = decomposition_columns(verdict)
    return [dict(zip(columns, (row_label(row), row_what(row, verdict), signed(row.saved, row.interval), mass(row)),
                     strict=True)) | by_type(row)
            for row in verdict.decomposition.table if row.saved is not None]

