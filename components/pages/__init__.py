"""The pages, the top floor of the UI: one thin script each (about 150 lines at most) that reads its widgets, asks
the engine through serving's caches and draws what the presenters make; a page computes and judges nothing (a form
belongs in widgets, a decision in the engine or model_utils.verdicts, a chart in present, a verdict's words in
model_utils.verdicts.words; a page keeps only its own help text). A page may
import widgets, serving, present and model_utils' torch-free modules (the lazy API, `core`, `verdicts`, the built-in
texts); never torch, the engine or `models`.

Here too: PAGES, the one list of pages that the router (app.py), the tests and the benchmarks read: plain data, so
reading it imports no streamlit."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class PageSpec:
    script: str  # the module in components/pages/
    title: str
    icon: str
    url_path: str  # "" for the default page, served at "/"
    # the shared sidebar's controls (widgets.controls.SIDEBAR_CONTROLS) that act on the page: the others are hidden
    # there, their values kept for the pages they act on
    controls: tuple[str, ...] = ("model", "temperatures", "mode", "window")
    controls_note: str = ""  # said above the sidebar's controls on this page

    @property
    def path(self) -> str:
        """The script's path from the repository's root, as st.Page and AppTest take it."""
        return f"components/pages/{self.script}.py"


PAGES = (
    PageSpec(script="softmax_lab", title="Softmax lab", icon=":material/functions:", url_path="",
             controls=("temperatures",),
             controls_note="The Softmax lab runs no model: of the shared settings only the temperatures apply here."),
    PageSpec(script="attention_maps", title="Attention maps", icon=":material/grid_on:", url_path="maps"),
    PageSpec(script="collapse_inspector", title="Collapse inspector", icon=":material/query_stats:",
             url_path="collapse"),
    PageSpec(script="length_schedules", title="Length schedules", icon=":material/straighten:", url_path="schedules"),
    PageSpec(script="context_length", title="Context length", icon=":material/timeline:", url_path="context",
             controls=("model", "temperatures", "window"),
             controls_note="On this page these settings act only on the form that runs a sweep on your text (its "
                           "passes are always in-model). The committed sweep is drawn as it was run."),
    PageSpec(script="retrieval", title="Retrieval at a distance", icon=":material/manage_search:", url_path="retrieval",
             controls=("model", "temperatures"),
             controls_note="On this page these settings act only on the probe of your own passage (its passes are "
                           "always in-model). The committed probe is drawn as it was run."),
    PageSpec(script="lesson", title="10-minute lesson", icon=":material/school:", url_path="lesson", controls=()),
    PageSpec(script="glossary", title="Glossary", icon=":material/menu_book:", url_path="glossary", controls=()),
)
