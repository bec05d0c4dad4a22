"""Page 4, Length schedules: the published length-dependent temperatures (as T = 1 / m), the RoPE recipes and the
distance remappings that extend a model's length, and one schedule applied to a prompt. Opens on its point and the
schedules' chart; every long text is one click away, in an expander."""

import streamlit as st

from components.present import captions, guide
from components.present.figures.maps import layer_lines, mass_bars, outcome_bars
from components.present.figures.schedules import remapped_distances, schedule_figure
from components.present.glossary import term_link
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


def bullets(lines: list[str]) -> str:
    return "\n".join(f"- {plain(line)}" for line in lines)


def details(entries: list[tuple[str, str]]) -> str:
    """(name, text) pairs as bullets, the name in bold; both shown as they are."""
    return "\n".join(f"- **{plain(name)}**: {plain(text)}" for name, text in entries)


st.title("Length schedules")
st.markdown(f"**{guide.POINT['length_schedules']}**")
curves = st.container()  # the chart above its knobs, drawn once they are read
schedules = {}
for column, (name, info) in zip(st.columns(len(SCHEDULES)), SCHEDULES.items(), strict=True):
    seed(f"schedule_knob_{name}", float(info.default))
    value = column.number_input(f"{name}: {info.knob}", min_value=1.01, max_value=1e6, key=f"schedule_knob_{name}",
                                format="%g")
    schedules[name] = Schedule(name, value)
curves.plotly_chart(schedule_figure(list(schedules.values())), key="schedule_curves")
st.caption(captions.curves_caption(schedules) + f" What a {term_link('Schedule', 'schedule')} and its "
           f"{term_link('Multiplier (m)', 'multiplier')} are.")
st.table(captions.schedule_rows(schedules), hide_index=True)
with st.expander("Each schedule in full: its formula as published, its source, what the explorer applies"):
    st.markdown(details(captions.schedule_details(schedules)))
with st.expander("The argument behind them, and what a model measured"):
    st.markdown(bullets(captions.entropy_lines(list(committed_results().sweeps.values()))))

with st.expander("Length extension by the rotary positions: the RoPE recipes"):
    st.markdown(
        "The schedules above change only the temperature. The recipes used in practice to run a model past its "
        f"{term_link('Trained length', 'trained length')}, YaRN and NTK-aware scaling among them, are first of all "
        f"changes to the rotary position encoding ({term_link('RoPE, recipe', 'RoPE')}). RoPE rotates each 2-d slice "
        "i of the queries and keys by the angle p θ^(−2i/d) at position p, so a query and a key meet at the angle of "
        "their distance. Past the trained length L the model meets distances, and so angles, that it never saw in "
        "training; a recipe changes the angles so that they stay in the trained range. **Linear interpolation** "
        "divides every position by the scale factor s. **NTK-aware scaling** raises the base instead, "
        "θ → θ s^(d / (d − 2)): the fast-turning slices (short distances) keep their angles and the slow ones are "
        "interpolated; its dynamic form, the one offered here, computes s from the current length. **YaRN** "
        "interpolates by parts (slices that turn many times within L keep their frequency, slices that turn less "
        "than once are divided by s, a ramp in between) and adds a temperature of its own: its attention factor "
        "0.1 ln s + 1 multiplies cos and sin, so the scores are divided by T = 1 / (0.1 ln s + 1)², which is the "
        "yarn schedule above.\n\n"
        "**What the explorer applies**: YaRN's attention factor alone, on the model's own positions, is the yarn "
        "schedule; each whole recipe runs with transformers' own rotary code as a RoPE recipe, on the Context length "
        "page (the form's recipe) and with `--rope TYPE:S` on the command line; yarn-rope is YaRN's interpolation "
        "without its factor, so that the share of the interpolation and of the temperature can each be measured.")
    st.table(captions.recipe_rows(), hide_index=True)
    st.markdown(details(captions.recipe_details()))

with st.expander("Length extension inside attention: the distance remappings"):
    st.markdown(
        "A second family leaves the rotary frequencies as they are and gives a far query-key pair another "
        f"{term_link('Distance', 'distance')}, with no training: a key within the window W of the query keeps its "
        "distance, a farther one is seen at a distance the model was trained on. RoPE scores depend on the distance "
        "alone, so the engine rotates such a query and key to positions whose difference is the new distance. A "
        "**sink + window** goes further and gives the keys between the first few and the last W no weight at all. "
        "The Context length page measures each one against the frequency changes above.")
    remaps = captions.remap_examples()
    st.plotly_chart(remapped_distances(remapped(remaps), captions.REMAP_EXAMPLE_TRAINED), key="remap_distances")
    st.caption(captions.remapped_caption(remaps))
    st.table(captions.remap_rows(), hide_index=True)
    st.markdown(details(captions.remap_details()))

st.subheader("Apply a schedule to a prompt")
st.markdown("The schedule's temperature for each query position (T = 1 / m) replaces the constant T in every layer, "
            "next to the constant temperatures of the sidebar.")
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
