"""The Context length page's form: a sweep of your own text and model, checked by the sweep's own checks
(model_utils.check_sweep; a recipe's parameters by core.rope's, as on the command line) and the server's work budget
before any pass, then run through the cache. The request is a frozen record (serving.cache.SweepRequest) kept in the
session, so a re-draw reads the run from the cache."""

from __future__ import annotations

from dataclasses import dataclass, replace

import streamlit as st

from components.present import captions
from components.present.text import plain
from components.serving import settings
from components.serving.cache import SweepRequest, cached_model, cached_sweep
from components.widgets.controls import sidebar_choices
from model_utils import AnalysisError, ModelLoadError
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.rope import MAX_FACTOR, RECIPES, REMAPS, Rope, recipe_info
from model_utils.core.schedules import SCHEDULES, ScheduleRequest
from model_utils.experiments.texts import SOURCE, builtin_text

BUILTIN_SOURCE = f"{SOURCE}, built-in text 'long'"  # as the command line's --builtin long records it
NO_RECIPE = "none"
COMMITTED, YOURS = "the committed sweep", "your run"  # the page's two views
REQUEST = "context_request"  # the session's last accepted SweepRequest


@dataclass(frozen=True, kw_only=True)
class SweepForm:
    """What the form asked for, before any check: the schedules by name (their knob depends on the text's length)
    and the recipe as chosen (NO_RECIPE for none)."""

    text: str
    source: str
    max_tokens: int
    bucket_size: int
    schedules: tuple[str, ...]
    beyond_trained: bool
    recipe: str
    factor: float  # s of a frequency recipe
    group: int  # G, W, K and S of a distance remapping, each taking its own (core.rope.REMAPS)
    window: int
    slope: float
    sinks: int

    def rope(self) -> Rope | None:
        """The recipe asked for with the parameters it takes, checked as --rope checks them (ValueError naming the
        fix); None for none."""
        if self.recipe == NO_RECIPE:
            return None
        return Rope(self.recipe, **{name: getattr(self, name) for name in recipe_info(self.recipe).parameters})


def recipe_name(kind: str) -> str:
    return kind if kind == NO_RECIPE else f"{kind}: {recipe_info(kind).name}"


def remap_parameters_ui() -> dict[str, int | float]:
    """The distance remappings' parameters, each saying which remapping takes it. No bounds here: the recipe's
    own checks (core.rope) refuse a bad value with a message, as on the command line."""
    group, window, slope, sinks = st.columns(4)
    return {"group": group.number_input("Group size G (self-extend)", value=2, step=1, key="context_group"),
            "window": window.number_input("Window W (the remappings)", value=1024, step=256, key="context_window",
                                          help="Keys within W of the query keep their distance; at most the "
                                               "model's trained length."),
            "slope": slope.number_input("Slope K (leaky-rerope)", value=16.0, step=1.0, key="context_slope"),
            "sinks": sinks.number_input("Sinks S (sink-window)", value=4, step=1, key="context_sinks")}


def form_ui() -> SweepForm | None:
    """The form's widgets; once submitted, what was asked for, else None."""
    choices = sidebar_choices()
    shown = ", ".join(f"{t:g}" for t in choices.temperatures) if choices.temperatures else "not valid"
    with st.form("context_form"):
        st.caption(f"Model {plain(choices.model)} and temperatures {shown} from the sidebar (1 must be among them), "
                   f"recent window {choices.window}. Each temperature and schedule runs as its own in-model pass with "
                   "T in every layer (the sidebar's mode does not apply); with a RoPE recipe, each temperature runs "
                   f"on it too. This server runs at most {settings.MAX_WORK:,} tokens x passes per request.")
        builtin = st.checkbox("Use the built-in long text (Python's own documentation)", value=True,
                              key="context_builtin")
        text = st.text_area("Your text (used when the box above is not ticked)", key="context_text",
                            max_chars=settings.MAX_TEXT_CHARS, height=110)
        tokens_column, bucket_column = st.columns(2)
        max_tokens = tokens_column.number_input("Tokens (a longer text is cut)", min_value=2,
                                                max_value=settings.MAX_WORK, value=2048, step=256,
                                                key="context_tokens")
        bucket_size = bucket_column.number_input("Bucket size (query positions)", min_value=0, value=256, step=64,
                                                 key="context_bucket", help="Boundaries at multiples of it, so a "
                                                 "trained length it divides falls on a boundary.")
        names = st.multiselect("Schedules, anchored at the model's trained length", list(SCHEDULES),
                               key="context_schedules", help="Each published schedule with its knob at the trained "
                               "length (YaRN: the scale tokens / trained length); see the Length schedules page.")
        recipe_column, factor_column = st.columns(2)
        kind = recipe_column.selectbox("RoPE recipe (every temperature also runs on it)",
                                       [NO_RECIPE, *RECIPES, *REMAPS], key="context_recipe", format_func=recipe_name,
                                       help="A change of the rotary frequencies, as transformers implements it, or "
                                            "a distance remapping (the frequencies kept, a far key given another "
                                            "distance); the Length schedules page says what each one does.")
        factor = factor_column.number_input("Its scale factor s (the length you run at / the trained length)",
                                            min_value=1.01, max_value=MAX_FACTOR, value=2.0, step=0.5,
                                            key="context_factor", help="For the frequency recipes.")
        remap = remap_parameters_ui()
        beyond = st.checkbox("Run past the trained length", key="context_beyond",
                             help="The model is refused a text longer than its trained length unless this is "
                                  "ticked: past it, the model runs on positions it was not trained on.")
        if not st.form_submit_button("Run the sweep", key="context_run", type="primary"):
            return None
    return SweepForm(text=builtin_text("long") if builtin else text, source=BUILTIN_SOURCE if builtin else "your text",
                     max_tokens=int(max_tokens), bucket_size=int(bucket_size), schedules=tuple(names),
                     beyond_trained=bool(beyond), recipe=kind, factor=float(factor), **remap)


def checked_request(form: SweepForm) -> SweepRequest:
    """The sweep to run, checked before any pass: by the sweep's own checks (T = 1 present, the text, the bucket
    size, the trained length, a recipe the model cannot take), then the schedules resolved at the text's length
    (which those checks measure), then the server's work budget. Raises a ValueError whose message says what to
    change (AnalysisError, ModelLoadError, a recipe's own)."""
    from model_utils import check_sweep  # imports the engine: only when a sweep is asked for

    choices = sidebar_choices()
    if choices.temperatures is None:
        raise AnalysisError(f"Fix the temperatures in the sidebar: {choices.error}")
    request = SweepRequest(model=choices.model, text=form.text, source=form.source,
                           temperatures=choices.temperatures,
                           rope=form.rope(),
                           max_tokens=form.max_tokens, bucket_size=form.bucket_size, window=choices.window,
                           beyond_trained=form.beyond_trained)
    loaded = cached_model(request.model)
    n_tokens = check_sweep(loaded, request.text, request.specs, request.settings)
    schedules = tuple(schedule for name in form.schedules
                      for schedule in ScheduleRequest(name, "trained").resolve(loaded.max_positions, n_tokens))
    refusal = captions.sweep_over_budget(n_tokens, len(request.temperatures), len(schedules), settings.MAX_WORK,
                                         loaded.max_positions, None if request.rope is None else request.rope.label)
    if refusal is not None:
        raise AnalysisError(refusal)
    return replace(request, schedules=schedules)


def your_run_ui() -> SweepDocument | None:
    """The form, folded away, and the document of the last sweep it ran that succeeded (from the cache on a
    re-draw), if any; a refused request is an error line, and the committed view stays."""
    with st.expander("Run the sweep on your own text and model", expanded=REQUEST in st.session_state):
        form = form_ui()
        if form is not None:
            st.session_state.pop(REQUEST, None)  # a refused request shows its error, not an older run
            try:
                st.session_state[REQUEST] = checked_request(form)
            except ValueError as error:  # what the user can change: AnalysisError, ModelLoadError, a bad recipe
                st.error(plain(error))
                return None
            st.session_state["context_view"] = YOURS
        request = st.session_state.get(REQUEST)
        if request is None:
            return None
        try:
            return cached_sweep(request)
        except (AnalysisError, ModelLoadError) as error:
            st.error(plain(error))
            del st.session_state[REQUEST]
            return None
