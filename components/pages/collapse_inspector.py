"""Page 3, Collapse inspector: where the attention mass goes on one long prompt, at each temperature."""

import streamlit as st

from components import figures
from components.cache import cached_model, cached_report
from components.controls import (
    current_settings,
    downloads_ui,
    plain,
    publish_to_url,
    report_or_stop,
    require_temperatures,
    seed,
    text_ui,
    within_budget,
)
from model_utils.analysis import answer_token
from model_utils.findings import NEAR_UNIFORM, findings, mass_shift_lines, sentence
from model_utils.metrics import distance_bins, mass_by_distance

TOKEN_LIMITS = (512, 1024, 2048, 4096)
DEFAULT_ANSWER = "Marigold"

st.title("Collapse inspector")
st.markdown(
    "A long prompt states a fact early, then fills the context, then asks for the fact. At each temperature: "
    "how much attention lands on the first token (the **sink**), on the last `window` tokens (**recent**) and on "
    "everything between (**distant**), layer by layer; how far back the last query looks; and what happens to "
    "the model's loss and to the answer. The sink is counted on its own, so a claim such as \"softening recovers "
    "distant attention\" can be checked here instead of assumed."
)
settings = current_settings()
temperatures = require_temperatures(settings)
text = text_ui("collapse_text", "needle.txt", "Long prompt", height=180,
               help_text="Paste your own; it is cut to the token limit below.")
answer_column, limit_column = st.columns([2, 1])
seed("collapse_answer", DEFAULT_ANSWER, url_key="answer")
answer = answer_column.text_input("Expected answer (the probability of its first token is shown)",
                                  key="collapse_answer", max_chars=100)
seed("collapse_limit", 2048, lambda raw: int(raw) if int(raw) in TOKEN_LIMITS else 2048, url_key="limit")
limit = limit_column.selectbox("Token limit", TOKEN_LIMITS, key="collapse_limit",
                               help="Longer prompts take longer: about 10 s per 1,000 tokens for 4 temperatures "
                                    "on the bundled model.")
publish_to_url({"answer": answer if answer != DEFAULT_ANSWER else None, "limit": limit})

loaded = report_or_stop(cached_model, settings.model)
report = report_or_stop(cached_report, settings.model, text, temperatures, settings.mode, settings.window,
                        within_budget(limit, len(temperatures)))
if report.truncated:
    st.info(f"The prompt was cut to its first {report.n_tokens} tokens (the question at its end may be lost).")
st.caption(f"{report.n_tokens} tokens, {len(report.results)} temperatures, {settings.mode}: computed in "
           f"{report.seconds:.1f} s, then kept for an hour.")

token_id, token_text = answer_token(loaded, text, answer) if answer.strip() else (None, "")

# Plain-language verdicts first (computed by model_utils.findings): they are what a reader should take away.
base, found = findings(report, token_id)
for finding in found:
    said = sentence(finding, found[base], token_text)
    if said is not None:
        (st.warning if said[0] == "warning" else st.info)(plain(said[1]))
shifts = mass_shift_lines(found, base)
if shifts:
    st.markdown("Where the mass moved (means over layers and heads):\n" + "\n".join(f"- {plain(line)}"
                                                                                    for line in shifts))
answer_probs = None if token_id is None else [finding.answer_probability for finding in found]

st.subheader("Sink, distant and recent mass per layer")
masses = [result.masses_by_layer() for result in report.results]
st.plotly_chart(figures.mass_bars(masses, report.labels), key="collapse_masses")

left, right = st.columns(2)
with left:
    st.subheader("How far back the last query looks")
    layer_choice = st.selectbox("Layers", ["mean of all layers", *range(len(masses[0]["sink"]))],
                                key="collapse_distance_layer")
    edges = distance_bins(report.n_tokens)
    profiles = []
    for result in report.results:
        rows = result.last_rows if layer_choice == "mean of all layers" else result.last_rows[[layer_choice]]
        profiles.append(mass_by_distance(rows.mean(axis=(0, 1)), edges))
    st.plotly_chart(figures.distance_profile(profiles, edges, report.labels), key="collapse_distance")
with right:
    st.subheader("Entropy per layer")
    entropy = [r.layer_mean("normalized_entropy") for r in report.results]
    st.plotly_chart(figures.layer_lines(entropy, report.labels, "normalized entropy (mean of heads)",
                                        reference=NEAR_UNIFORM, reference_text="near uniform"), key="collapse_entropy")

st.subheader("What the model predicts")
st.plotly_chart(figures.outcome_bars(report.labels, [r.loss for r in report.results], answer_probs,
                                     answer=token_text), key="collapse_outcome")
st.dataframe([{"temperature": r.label, **{f"#{i + 1}": f"{guess['token']!r} {guess['prob']:.2f}"
                                          for i, guess in enumerate(r.next_token)}} for r in report.results],
             hide_index=True)
if settings.mode == "isolated":
    st.caption("Isolated mode: every layer's scores are re-softmaxed at T with the T = 1 inputs held fixed, so the "
               "loss and the predictions are those of T = 1 for every T. Switch to in-model to see them change.")
downloads_ui(report, "collapse")
