"""The pages, one script each, and the one list of them that the router (app.py), the tests and the benchmarks read:
plain data, so reading it imports no streamlit."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class PageSpec:
    script: str  # the module in components/pages/
    title: str
    icon: str
    url_path: str  # "" for the default page, served at "/"

    @property
    def path(self) -> str:
        """The script's path from the repository's root, as st.Page and AppTest take it."""
        return f"components/pages/{self.script}.py"


PAGES = (
    PageSpec(script="softmax_lab", title="Softmax lab", icon=":material/functions:", url_path=""),
    PageSpec(script="attention_maps", title="Attention maps", icon=":material/grid_on:", url_path="maps"),
    PageSpec(script="collapse_inspector", title="Collapse inspector", icon=":material/query_stats:",
             url_path="collapse"),
    PageSpec(script="length_schedules", title="Length schedules", icon=":material/straighten:", url_path="schedules"),
    PageSpec(script="context_length", title="Context length", icon=":material/timeline:", url_path="context"),
)
