"""Result files as an older format wrote them, made from this format's JSON, for the tests that read committed files
back: a verdict whose passes are Views as format 5 named them, by their labels."""

from __future__ import annotations

from model_utils.core.rope import Rope
from model_utils.core.views import View


def verdict_by_labels(verdict: dict) -> dict:
    """A verdict's JSON as format 5 wrote it: each row's pass and what it is scored against by their labels (a
    SCHEDULE row's schedule beside it), each grid edge's recipe by its label."""
    rows = []
    for row in verdict["decomposition"]["rows"]:
        view = None if row["view"] is None else View.from_dict(row["view"])
        schedule = {"schedule": view.schedule.to_dict()} if row["kind"] == "schedule" else {}
        rows.append(row | {"view": None if view is None else view.label,
                           "against": View.from_dict(row["against"]).label} | schedule)
    edges = [{"recipe": None if edge["rope"] is None else Rope.from_dict(edge["rope"]).label,
              **{key: value for key, value in edge.items() if key != "rope"}} for edge in verdict["gains"]["edges"]]
    return verdict | {"format": 5, "decomposition": verdict["decomposition"] | {"rows": rows},
                      "gains": verdict["gains"] | {"edges": edges}}
