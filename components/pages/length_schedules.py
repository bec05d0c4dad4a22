"""Page 4, Length schedules: the published length-dependent multipliers, and one of them applied to a prompt."""

import streamlit as st

from components.present import captions
from components.present.figures.maps import layer_lines, mass_bars, outcome_bars
from components.present.figures.schedules import remapped_distances, schedule_figure
from components.present.margins import HALF_WIDTH
from components.present.parsing import parse_choice
from components.present.text import plain
from components.serving.cache import committed_results
from components.widgets.model_page import DEFAULT_SCHEDULE, SCHEDULES_VIEW, ModelPage, schedule_key
from components.widgets.url_state import linked_widget, seed
from model_utils.core.schedules import SCHEDULES, Schedule


def remapped(remaps: list) -> dict:
    """Each remapping's effective distances for the last query of the example length, by the engine's own rule."""
    from model_utils import effective_distances  # imports the engine: the page runs a model below anyway

    return {rope.label: effective_distances(rope, captions.REMAP_EXAMPLE_TOKENS) for rope in remaps}


def entropy_sentences() -> list[str]:
    """The published entropy argument, and next to it what each committed sweep of the Context length page
    measured, one line per model; the argument alone when there is no such sweep."""
    return captions.entropy_lines(list(committed_results().sweeps.values()))


st.title("Length schedules")
st.markdown(
    "Several models change the attention temperature with the context length. Past the length each one is "
    "anchored to, every published schedule below **multiplies the logits by m > 1**, i.e. runs at "
    "**T = 1 / m < 1: it sharpens**, more the longer the context. (A popular explanation says these schedules "
    "soften attention at long context; their formulas say the opposite.)"
)
st.markdown("**The argument behind them, and what a model measured**:\n"
            + "\n".join(f"- {plain(sentence)}" for sentence in entropy_sentences()))

schedules = {}
for column, (name, info) in zip(st.columns(len(SCHEDULES)), SCHEDULES.items(), strict=True):
    seed(f"schedule_knob_{name}", float(info.default))
    value = column.number_input(f"{name}: {info.knob}", min_value=1.01, max_value=1e6, key=f"schedule_knob_{name}",
                                format="%g")
    schedules[name] = Schedule(name, value)
as_temperature = linked_widget(st.toggle, "Show as temperature T = 1 / m", key="schedule_as_t", url_key="as_t",
                               default=False, parse=lambda raw: raw == "1", to_url=lambda on: 1)
st.plotly_chart(schedule_figure(list(schedules.values()), as_temperature=as_temperature),
                key="schedule_curves")
st.caption(captions.curves_caption(schedules))
st.table(captions.schedule_rows(schedules), hide_index=True)  # a table, not a grid: its sentences wrap

st.subheader("Length extension by the rotary positions: the RoPE recipes")
st.markdown(
    "The schedules above change only the temperature. The recipes used in practice to run a model past its trained "
    "length, YaRN and NTK-aware scaling among them, are first of all changes to the rotary position encoding "
    "(RoPE). RoPE rotates each 2-d slice i of the queries and keys by the angle p θ^(−2i/d) at position p, so a "
    "query and a key meet at the angle of their distance. Past the trained length L the model meets distances, and "
    "so angles, that it never saw in training; a recipe changes the angles so that they stay in the trained range. "
    "**Linear interpolation** divides every position by the scale factor s. **NTK-aware scaling** raises the base "
    "instead, θ → θ s^(d / (d − 2)): the fast-turning slices (short distances) keep their angles and the slow ones "
    "are interpolated; its dynamic form, the one offered here, computes s from the current length. **YaRN** "
    "interpolates by parts (slices that turn many times within L keep their frequency, slices that turn less than "
    "once are divided by s, a ramp in between) and adds a temperature of its own: its attention factor "
    "0.1 ln s + 1 multiplies cos and sin, so every logit is multiplied by (0.1 ln s + 1)², which is the yarn "
    "schedule above.\n\n"
    "**What the explorer applies**: YaRN's attention factor alone, on the model's own positions, is the yarn "
    "schedule; each whole recipe runs with transformers' own rotary code as a RoPE recipe, on the Context length "
    "page (the form's recipe) and with `--rope TYPE:S` on the command line; yarn-rope is YaRN's interpolation "
    "without its factor, so that the share of the interpolation and of the temperature can each be measured."
)
st.table(captions.recipe_rows(), hide_index=True)

st.subheader("Length extension inside attention: the distance remappings")
st.markdown(
    "A second family leaves the rotary frequencies as they are and gives a far query-key pair another distance, "
    "with no training: a key within the window W of the query keeps its distance, a farther one is seen at a "
    "distance the model was trained on. RoPE scores depend on the distance alone, so the engine rotates such a "
    "query and key to positions whose difference is the new distance. A **sink + window** goes further and gives "
    "the keys between the first few and the last W no weight at all. The Context length page measures each one "
    "against the frequency changes above."
)
remaps = captions.remap_examples()
st.plotly_chart(remapped_distances(remapped(remaps), captions.REMAP_EXAMPLE_TRAINED), key="remap_distances")
st.caption(captions.remapped_caption(remaps))
st.table(captions.remap_rows(), hide_index=True)

st.subheader("Apply a schedule to a prompt")
st.markdown("The schedule's multiplier for each query position replaces 1 / T (in every layer), next to the "
            "constant temperatures of the sidebar.")
choice = linked_widget(st.selectbox, "Schedule", key="schedule_choice", url_key="schedule", default=DEFAULT_SCHEDULE,
                       options=list(SCHEDULES), parse=lambda raw: parse_choice(raw, SCHEDULES))
page = ModelPage("schedule_text", SCHEDULES_VIEW.example, "Prompt", height=120)
chosen = schedules[choice]
# the constant temperatures first, so they keep their colours across pages; the schedule last
report = page.report(SCHEDULES_VIEW.fetch, SCHEDULES_VIEW.limit, "schedules", extra=(schedule_key(chosen),),
                     cut_note="The prompt was cut to its first {n:,} tokens.")
st.caption(captions.applied_caption(report, len(report.results) - 1, chosen))
left, right = st.columns(2)
with left:
    st.plotly_chart(layer_lines([result.layer_mean("normalized_entropy") for result in report.results],
                                report.labels, "normalized_entropy", width=HALF_WIDTH),
                    key="schedule_entropy")
with right:
    st.plotly_chart(outcome_bars(report.labels, [result.loss for result in report.results], None,
                                 width=HALF_WIDTH),
                    key="schedule_loss")
st.plotly_chart(mass_bars([result.masses_by_layer() for result in report.results], report.labels),
                key="schedule_masses")
nothing_distant = captions.nothing_distant_note(report)
if nothing_distant is not None:
    st.info(nothing_distant)
