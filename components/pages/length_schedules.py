"""Page 4, Length schedules: the published length-dependent multipliers, and one of them applied to a prompt."""

import numpy as np
import streamlit as st

from components import figures
from components.cache import cached_report
from components.controls import (
    current_settings,
    downloads_ui,
    publish_to_url,
    report_or_stop,
    require_temperatures,
    seed,
    text_ui,
    within_budget,
)
from model_utils.schedules import SCHEDULES, Schedule

APPLY_TOKENS = 2048

st.title("Length schedules")
st.markdown(
    "Several models change the attention temperature with the context length. Past the length each one is "
    "anchored to, every published schedule below **multiplies the logits by m > 1**, i.e. runs at "
    "**T = 1 / m < 1: it sharpens**, more the longer the context. The reason: with more keys competing, softmax "
    "entropy grows roughly like ln n and attention spreads thin; a larger m keeps it focused. (A popular "
    "explanation says these schedules soften attention at long context; their formulas say the opposite.)"
)

knobs = st.columns(len(SCHEDULES))
parameters = {}
for column, (name, info) in zip(knobs, SCHEDULES.items(), strict=True):
    seed(f"schedule_knob_{name}", float(info.default))
    parameters[name] = column.number_input(f"{name}: {info.knob}", min_value=1.01, max_value=1e6,
                                           key=f"schedule_knob_{name}", format="%g")
schedules = {name: Schedule(name, value) for name, value in parameters.items()}
lengths = np.unique(np.geomspace(1, 131072, 400).round()).astype(int)
seed("schedule_as_t", False)
as_temperature = st.toggle("Show as temperature T = 1 / m", key="schedule_as_t")
curves = {s.label: s.multipliers(int(lengths[-1]))[lengths - 1] for s in schedules.values()}
st.plotly_chart(figures.schedule_curves(lengths, curves, as_temperature=as_temperature), key="schedule_curves")
st.caption("Three curves coincide past 512 tokens, and that is no plotting error: with s = 1 / ln L, SSMax is "
           "exactly log-n with base L, and Qwen's log-n is the same curve held at 1 below L. Log-n (and SSMax) "
           "also go below 1, softening, for contexts shorter than their base. Llama 4's steps start at 8,192 "
           "tokens, YaRN's factor is the same at every position.")
st.dataframe([{"schedule": name, "multiplier m": info.formula, "source": info.source}
              for name, info in SCHEDULES.items()], hide_index=True)

st.subheader("Apply a schedule to a prompt")
st.markdown("The schedule's multiplier for each query position replaces 1 / T (in the layers the mode applies "
            "it to), next to the constant temperatures of the sidebar.")
settings = current_settings()
temperatures = require_temperatures(settings)
seed("schedule_choice", "qwen-logn", lambda raw: raw if raw in SCHEDULES else "qwen-logn", url_key="schedule")
choice = st.selectbox("Schedule", list(SCHEDULES), key="schedule_choice")
publish_to_url({"schedule": choice})
chosen = schedules[choice]
text = text_ui("schedule_text", "needle.txt", "Prompt", height=120)
keys = (*temperatures, (chosen.name, chosen.resolved_parameter))  # constant T keep their colours
report = report_or_stop(cached_report, settings.model, text, keys, settings.mode, settings.window,
                        within_budget(APPLY_TOKENS, len(keys)))
span = chosen.multipliers(report.n_tokens)
sharper = np.flatnonzero(span > 1.0)
st.caption(f"{chosen.label} on this {report.n_tokens}-token prompt: m = {span[-1]:.3f} at the last query "
           f"(T = {1 / span[-1]:.3f}); m > 1 (sharper than T = 1) "
           + (f"from query position {sharper[0]} on." if len(sharper) else "nowhere: the prompt is too short."))
left, right = st.columns(2)
with left:
    entropy = [r.layer_mean("normalized_entropy") for r in report.results]
    st.plotly_chart(figures.layer_lines(entropy, report.labels, "normalized entropy (mean of heads)"),
                    key="schedule_entropy")
with right:
    st.plotly_chart(figures.outcome_bars(report.labels, [r.loss for r in report.results], None),
                    key="schedule_loss")
masses = [result.masses_by_layer() for result in report.results]
st.plotly_chart(figures.mass_bars(masses, report.labels), key="schedule_masses")
downloads_ui(report, "schedules")
