"""What the Context length page's tests share (tests/pages/test_context_length*.py): opening the page, filling in
its form, and reading what it drew (its verdict lines, its answers, its charts' bars and lines, its order)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from components.present.text import plain
from components.serving import settings
from model_utils.core.records.sweep import SweepDocument, SweepResult
from tests.support.apptest import APP, array, traces

PAGE = "components/pages/context_length.py"
COMMITTED = settings.ASSETS / "sweeps" / "bundled-16k.json"
POSITION_CHARTS = ("context_nll", "context_best", "context_statistic_chart", "context_untrained", "context_distance")
MAIN = "T = 1, the best T per bucket and each recipe at T = 1"
OWN = "the model's own positions"


def open_page(query: dict[str, str] | None = None) -> AppTest:
    """The app opened straight on the page (with `query` in the link)."""
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()  # the app's first run draws its default page; a link to the page lands there after it
    at.switch_page(PAGE)
    return at.run()


def verdict_lines(at: AppTest) -> list[str]:
    shown = [m.value for m in at.markdown if m.value.startswith("**What this sweep measured")]
    assert len(shown) == 1, [m.value[:80] for m in at.markdown]
    return [line.removeprefix("- ") for line in shown[0].splitlines()[1:]]


def trained_line_positions(figure: dict) -> list[float]:
    return [shape["x0"] for shape in figure["layout"].get("shapes", []) if shape.get("line", {}).get("dash") == "dash"]


def submit(at: AppTest, *, builtin: bool = True, text: str = "", tokens: int = 1536, bucket: int = 256,
           schedules: tuple[str, ...] = (), beyond: bool = True, recipe: str = "none",
           factor: float = 2.0, **remap: float) -> AppTest:
    """Fill in the form and run it; `remap` sets a distance remapping's parameters (group, window, slope, sinks)."""
    for name, value in remap.items():
        at.number_input(key=f"context_{name}").set_value(value)
    at.checkbox(key="context_builtin").set_value(builtin)
    at.text_area(key="context_text").set_value(text)
    at.number_input(key="context_tokens").set_value(tokens)
    at.number_input(key="context_bucket").set_value(bucket)
    at.multiselect(key="context_schedules").set_value(list(schedules))
    at.selectbox(key="context_recipe").set_value(recipe)
    at.number_input(key="context_factor").set_value(factor)
    at.checkbox(key="context_beyond").set_value(beyond)
    at.button(key="context_run").click()
    return at.run()


def by_label(document: SweepDocument) -> dict[str, SweepResult]:
    return {result.label: result for result in document.results}


def line_names(figure: dict) -> list[str]:
    return [trace["name"] for trace in traces(figure, "scatter")]


LAYOUT = ("flex_container",)  # a plain container (the page's sections are drawn into some): no entry of its own


def page_order(node) -> list[str]:
    """The page's elements top to bottom (depth first), as 'type' or 'type:what' for charts, expanders and text;
    a plain container adds none, its elements do."""
    kind = node.type
    said = {"plotly_chart": lambda: node.proto.id.rsplit("-", 1)[-1], "expander": lambda: node.label,
            "markdown": lambda: node.value[:30], "metric": lambda: node.label}.get(kind)
    order = [] if kind in LAYOUT else [f"{kind}:{said()}" if said else kind]
    for index in sorted(getattr(node, "children", None) or {}):
        order += page_order(node.children[index])
    return order


def opening(at: AppTest) -> list[str]:
    """The page top to bottom as page_order names it, the folded form as one entry (its widgets are hidden)."""
    order, form = [], False
    for entry in (entry for index in sorted(at.main.children) for entry in page_order(at.main.children[index])):
        if entry.startswith("expander:"):
            form = entry.startswith("expander:Run the sweep")
            order.append(entry)
        elif not form:
            order.append(entry)
    return order


def answer_line(at: AppTest, title: str) -> str:
    """The one-sentence answer the page opens on, under `title` (words.answer_point)."""
    (line,) = [m.value for m in at.markdown if m.value.startswith(f"**{plain(title)}.** ")]
    return line.removeprefix(f"**{plain(title)}.** ")


def full_answer_line(at: AppTest, title: str) -> str:
    """A verdict's answer in full (words.answer), under `title`, in the folded 'Every lever' section."""
    (line,) = [m.value for m in at.markdown if m.value.startswith(f"**{plain(title)}, in full.** ")]
    return line.removeprefix(f"**{plain(title)}, in full.** ")


def every_line(at: AppTest) -> AppTest:
    """The loss by position with every line (its toggle on)."""
    return at.toggle(key="context_every_line").set_value(True).run()


def bars(figure: dict) -> dict[str, float]:
    """A decomposition chart's bars: lever label -> what it saves."""
    return {label: float(x) for trace in traces(figure, "bar") for label, x in zip(trace["y"], array(trace["x"]),
                                                                                 strict=True)}
