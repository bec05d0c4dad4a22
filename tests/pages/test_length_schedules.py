"""The Length schedules page: it follows its inputs, its texts follow the knobs, and it says what is applied."""

import json

import numpy as np
import pytest

from components.present import guide
from components.present.text import plain
from model_utils import Schedule
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.rope import EXAMPLES, RECIPES, REMAPS, parse_rope, usage
from model_utils.core.schedules import SCHEDULES
from model_utils.verdicts.context import entropy_with_length
from model_utils.verdicts.words import PUBLISHED_ENTROPY_IN_T, entropy_trend_sentences, measured_entropy_sentence
from tests.support import SHORT_TEXT
from tests.support.apptest import array, assert_clean, chart, open_app, texts


def test_length_schedules_follow_their_inputs(tiny_env):
    at = open_app("length_schedules")
    assert len(at.get("plotly_chart")) == 5  # the schedules, the remapped distances, the prompt's three

    at.text_input(key="temperatures").set_value("0.25, 1, 4").run()
    assert_clean(at)
    names = chart(at, "schedule_loss")["data"][0]["x"]
    # the constant temperatures first (they keep their colours across pages), the schedule last
    assert len(names) == 4 and names[:3] == ["T=0.25", "T=1", "T=4"] and names[3].startswith("qwen-logn")

    at.text_area(key="schedule_text").set_value("A short prompt about tea and the temperature of tea.").run()
    assert_clean(at)

    at.selectbox(key="schedule_choice").set_value("yarn").run()
    assert_clean(at)
    assert chart(at, "schedule_loss")["data"][0]["x"][-1].startswith("yarn")

    shown = {trace["name"]: array(trace["y"]) for trace in chart(at, "schedule_curves")["data"]}
    assert len(shown) == 5 and not at.main.toggle  # the page speaks of T only: no switch to m
    for name, info in SCHEDULES.items():
        schedule = Schedule(name, info.default)
        t = shown[schedule.label]
        assert t[-1] < 1.0  # at 128k tokens every schedule sharpens: T = 1 / m < 1
        np.testing.assert_allclose(t[-1], 1.0 / schedule.multipliers(131072)[-1])

    at.radio(key="mode").set_value("isolated").run()
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 5  # the schedules, the remapped distances, the prompt's three


def schedule_caption(at, start: str) -> str:
    return next(caption.value for caption in at.caption if start in caption.value)


def schedule_table(at) -> dict[str, dict[str, str]]:
    frame = at.table[0].value
    return {row["schedule"]: row for row in frame.to_dict("records")}


def schedule_details(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("- **yarn"))


def test_the_page_opens_on_its_point_and_the_schedules_chart(tiny_env):
    at = open_app("length_schedules")
    assert_clean(at)
    order = [element.type for element in at.main.children.values()]
    assert at.markdown[0].value == f"**{guide.POINT['length_schedules']}**"
    # the title, the point, then the chart (drawn into the container above its knobs)
    assert order[:2] == ["title", "markdown"] and "schedule_curves" in at.main.children[2].children[0].proto.id


def test_schedule_texts_follow_the_knobs(tiny_env):
    at = open_app("length_schedules")
    assert_clean(at)
    assert "Three curves coincide past 512 tokens" in schedule_caption(at, "coincide")
    assert schedule_table(at)["logn"]["temperature T"] == "ln 512 / ln n for a query that sees n keys"

    for name in ("qwen-logn", "ssmax", "logn"):
        at.number_input(key=f"schedule_knob_{name}").set_value(1024.0)
    at.number_input(key="schedule_knob_llama4").set_value(4096.0)
    at.number_input(key="schedule_knob_yarn").set_value(16.0)
    at.run()
    assert_clean(at)
    caption = schedule_caption(at, "coincide")
    assert "Three curves coincide past 1,024 tokens" in caption and "s = 1 / ln 1024" in caption
    assert "shorter than its base, 1,024 tokens" in caption and "Llama 4's steps start at 4,096 tokens" in caption
    assert f"T = {1 / (0.1 * np.log(16) + 1) ** 2:.3f} for s = 16" in caption
    assert "512" not in caption and "8,192" not in caption and "m = " not in caption
    table = schedule_table(at)
    assert table["logn"]["temperature T"].startswith("ln 1024 / ln n ")
    assert "log_1024(p + 1)" in table["qwen-logn"]["temperature T"] and "ln 1024 / ln n" in table["ssmax"][
        "temperature T"]
    assert "/ 4096⌋" in table["llama4"]["temperature T"] and "s = 16" in table["yarn"]["temperature T"]
    assert not any("512" in row["temperature T"] or "8192" in row["temperature T"] for row in table.values())
    details = schedule_details(at)  # one click away: the formula as published, at the knob
    assert plain(SCHEDULES["logn"].formula_for(1024)) in details and plain("/ 4096)") in details

    at.number_input(key="schedule_knob_logn").set_value(2048.0).run()  # log-n leaves the other two
    assert_clean(at)
    caption = schedule_caption(at, "coincide")
    assert "Three curves" not in caption
    assert "Qwen's log-n and SSMax coincide past 1,024 tokens" in caption

    at.number_input(key="schedule_knob_ssmax").set_value(4096.0).run()  # now no two are equal
    assert "no two of Qwen's log-n (L = 1024), SSMax (L = 4096) and log-n (base 2048) coincide" in \
        schedule_caption(at, "coincide")


def test_schedule_table_and_caption_say_what_is_applied(tiny_env):
    at = open_app("length_schedules")
    table = schedule_table(at)
    assert set(table) == {"yarn", "qwen-logn", "llama4", "ssmax", "logn"}
    assert max(len(cell) for row in table.values() for cell in row.values()) <= 60  # a few words a cell
    details = schedule_details(at).splitlines()
    yarn = next(line for line in details if line.startswith("- **yarn"))
    assert plain("only YaRN's attention factor") in yarn and "RoPE interpolation" in yarn and "left out" in yarn
    assert plain("the RoPE recipe yarn:S") in yarn  # the whole recipe is there too, elsewhere
    llama4 = next(line for line in details if line.startswith("- **llama4"))
    assert "NoPE layers" in llama4 and "every layer" in llama4
    assert "Each schedule in full: its formula as published, its source, what the explorer applies" in [
        e.label for e in at.expander]
    at.selectbox(key="schedule_choice").set_value("yarn").run()
    assert_clean(at)
    assert "RoPE interpolation" in schedule_caption(at, "On this ")


def test_applied_schedule_caption_states_the_share_of_softer_queries(tiny_env):
    """log-n with base 512 runs softer than T = 1 for every query that sees fewer than 512 keys."""
    at = open_app("length_schedules")
    at.selectbox(key="schedule_choice").set_value("logn").run()
    assert_clean(at)
    measured = Schedule("logn", 512).multipliers(1024)[32:]  # the tiny model's 1,024 tokens, q_start = 32
    softer, sharper = np.mean(measured < 1), np.mean(measured > 1)
    assert 0.4 < softer < 0.6
    caption = schedule_caption(at, "On this ")
    assert caption.startswith("On this 1,024-token prompt, logn (base=512) is softer than T = 1 on "
                              f"{softer:.0%} of the measured queries and sharper on {sharper:.0%} (T from ")
    assert "m = " not in caption and "m from" not in caption
    assert "over the 992 queries at positions 32 to 1,023" in caption


def test_the_schedules_page_says_why_nothing_is_distant(tiny_env):
    at = open_app("length_schedules")
    at.text_area(key="schedule_text").set_value(SHORT_TEXT).run()
    assert_clean(at)
    assert any(info.startswith("Nothing in this text is distant") for info in texts(at, "info"))


def argument(at) -> str:
    """The published entropy argument and what each committed sweep measured, folded under the schedules."""
    assert "The argument behind them, and what a model measured" in [e.label for e in at.expander]
    return next(m.value for m in at.markdown if m.value.startswith("- Published argument"))


def rows_by_kind(table, column: str) -> dict[str, dict]:
    """A table's rows by the kind that opens their `column` ('yarn: YaRN ...' -> 'yarn'), in order."""
    return {row[column].split(":")[0]: row for row in table.to_dict("records")}


def test_the_rope_recipes_are_explained_as_position_changes_with_their_sources(tiny_env):
    at = open_app("length_schedules")
    assert_clean(at)
    assert "Length extension by the rotary positions: the RoPE recipes" in [e.label for e in at.expander]
    rows = rows_by_kind(at.table[1].value, "recipe")
    assert list(rows) == list(RECIPES)
    for kind, info in RECIPES.items():
        assert rows[kind] == {"recipe": kind, "what it is": info.name, "run it": f"--rope {kind}:S"}
    details = {line.split("**")[1]: line for m in at.markdown if m.value.startswith("- **" + plain("yarn: "))
               for line in m.value.splitlines()}
    for kind, info in RECIPES.items():
        line = details[plain(f"{kind}: {info.name}")]
        assert plain(info.formula) in line and plain(info.source) in line and "Context length page" in line
    assert "is the yarn schedule above" in details[plain("yarn: YaRN")]
    assert "without its attention factor" in details[plain("yarn-rope: YaRN's interpolation alone")]
    explained = " ".join(m.value for m in at.markdown)
    for words in ("θ → θ s^(d / (d − 2))", "T = 1 / (0.1 ln s + 1)²", "divides every position by the scale factor s",
                  "**What the explorer applies**", "yarn-rope is YaRN's interpolation without its factor"):
        assert words in explained, words


def test_the_entropy_argument_is_stated_as_the_published_one_next_to_what_was_measured(tiny_env, document):
    at = open_app("length_schedules")
    assert_clean(at)
    assert "roughly like ln n" not in at.markdown[0].value  # no longer stated as a law
    published, measured = entropy_trend_sentences(entropy_with_length(document))
    said = argument(at)
    assert said.splitlines() == [f"- {plain(PUBLISHED_ENTROPY_IN_T)}", "- " + plain(
        f"On the committed sweep of tiny-random (2,048 tokens, trained length 1,024): {measured}")]
    assert published.startswith("Published argument (Chiang & Cholak 2022; Nakanishi 2025, Scalable-Softmax)")
    assert PUBLISHED_ENTROPY_IN_T.startswith(published.split(" the length schedules")[0])  # the same, in T


def test_each_models_committed_sweep_says_what_it_measured_next_to_the_argument(tiny_env, document, other_sweeps):
    """With another model's sweep committed (the tiny Gemma 3's, named gemma3-270m), one line per model, the
    default sweep first; the sliding-window model's line says how many of its layers see a bounded window, as its
    mean over layers takes them in."""
    from components.serving import settings

    tiny_env.setattr(settings, "SWEEPS_DIR", other_sweeps)
    gemma = SweepDocument.from_dict(json.loads(next(other_sweeps.glob("*.json")).read_text()))
    windows = [window for window in gemma.layer_windows if window is not None]
    assert windows and len(windows) < len(gemma.layer_windows)  # the premise: a mix of layer types
    at = open_app("length_schedules")
    assert_clean(at)
    lines = argument(at).splitlines()
    assert len(lines) == 3 and lines[1].startswith("- On the committed sweep of tiny" + plain("-") + "random")
    assert lines[2] == "- " + plain(
        f"On the committed sweep of Gemma 3 270M ({gemma.n_tokens:,} tokens, trained length "
        f"{gemma.trained_length:,}; {len(windows)} of its {len(gemma.layer_windows)} layers see only their last "
        f"{max(windows):,} keys): {measured_entropy_sentence(entropy_with_length(gemma))}")


def test_without_a_committed_sweep_the_argument_stands_alone(tiny_env, tmp_path):
    from components.serving import settings

    tiny_env.setattr(settings, "CONTEXT_SWEEP", tmp_path / "missing.json")
    at = open_app("length_schedules")
    assert_clean(at)
    assert argument(at).splitlines() == [f"- {plain(PUBLISHED_ENTROPY_IN_T)}", "- " + plain(
        "No committed sweep to set a measurement next to it (make sweep writes one).")]


def published_distance(kind: str, query: int, key: int, *, group=None, window=None, slope=None, sinks=None):
    """The distance a remapping gives the pair (query, key), as its paper writes it (docs/REFERENCES, the issue);
    None where the key gets no weight."""
    d = query - key
    if d < window:
        return d
    if kind == "self-extend":
        return query // group - key // group + (window - window // group)
    if kind == "rerope":
        return window
    if kind == "leaky-rerope":
        return window + (d - window) / slope
    return sinks + window - 1 - key if key < sinks else None  # sink-window: a rolling cache of S + W slots


def test_the_distance_remappings_are_explained_with_their_sources_and_drawn_from_the_engine(tiny_env):
    at = open_app("length_schedules")
    assert_clean(at)
    assert "Length extension inside attention: the distance remappings" in [e.label for e in at.expander]
    rows = rows_by_kind(at.table[2].value, "remapping")
    assert list(rows) == list(REMAPS)
    details = "\n".join(m.value for m in at.markdown if m.value.startswith("- **" + plain("self-extend: ")))
    for kind, info in REMAPS.items():
        assert rows[kind] == {"remapping": kind, "what it is": info.name, "example": f"--rope {EXAMPLES[kind]}"}
        assert plain(info.formula) in details and plain(f"--rope {usage(kind)}") in details
    figure = chart(at, "remap_distances")
    lines = {trace["name"]: trace for trace in figure["data"]}
    assert list(lines) == ["no remapping", *(parse_rope(EXAMPLES[kind]).label for kind in REMAPS)]
    query = 16383  # the last of 16,384 tokens
    for kind in REMAPS:
        rope = parse_rope(EXAMPLES[kind])
        trace = lines[rope.label]
        back, given = array(trace["x"]).astype(int), array(trace["y"])
        assert back[0] == 0 and back[-1] == query and len(back) < 1000  # both ends, not every distance
        expected = [published_distance(kind, query, query - d, group=rope.group, window=rope.window,
                                       slope=rope.slope, sinks=rope.sinks) for d in back]
        for d, shown, wanted in zip(back, given, expected, strict=True):
            assert (shown is None or np.isnan(shown)) if wanted is None else shown == pytest.approx(wanted), (kind, d)
    said = next(c.value for c in at.caption if "Largest distance given" in c.value)
    assert "self-extend (G=2, W=1024) 8,703" in said  # 16,383 // 2 + 1,024 - 512, past the trained 8,192
