"""Presenters, the lowest floor of the UI: pure functions from results (reports, sweep documents, verdicts, progress
events) to plotly figures (figures/, by kind of chart), captions and text; a verdict's own words are
model_utils.verdicts.words'. No streamlit and no state: a presenter takes data and returns data,
so its tests assert on `fig.data` and on strings. It may import plotly, numpy, pandas, model_utils' `core` and
`verdicts`, and other presenters; nothing else of components (the import contracts in pyproject.toml)."""
