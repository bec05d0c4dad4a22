"""One package words the verdicts (model_utils/verdicts/words/, each module under 400 lines, re-exported once by
the package): no sentence of six words or more lives anywhere else in model_utils/verdicts or model_utils/experiments
(and no verdicts module passes 700 lines), every kind of decomposition row has a name, a chart's plain name and a
description, and the rules the words keep (a headline is a number with its interval or ratio, a share keeps its
sign, a signed number is a saving, every claim names its scope) hold on every verdict of tests/golden/cases.py.
What the words are is pinned by the golden files."""

import ast
import re
from pathlib import Path

import pytest

from model_utils.core.records.verdict import DecompositionRow, Family, FittedValue, Multipliers, RowKind, Scoring
from model_utils.core.rope import Rope
from model_utils.core.schedules import LengthTemperature, Schedule
from model_utils.core.views import View
from model_utils.verdicts import words
from tests.golden import cases

ROOT = Path(__file__).resolve().parents[2]
WORDS = ROOT / "model_utils" / "verdicts" / "words"
# Strings of six words or more in these packages that word no verdict: where a corpus's documents and a built-in
# text come from, what a fit family is, a fit's progress line and the run machinery's error details.
NOT_VERDICTS = ("{}: texts.builtin_corpus()", "{}: texts.long_builtin_documents()", "folder {} (.txt files",
                "file {} (one JSON object", "one temperature T in every layer", "T(p) = 1 + a ln(",
                "{} = {} ({} nats), best so far", "; if the cluster uses Ray's token", "{} (its worker died",
                "Python's pydoc_data.topics")


def sentences_in(path: Path) -> list[str]:
    """Every string literal and f-string of six words or more in a module (an f-string's values as {}), leaving out
    docstrings and the messages of the exceptions it raises."""
    tree = ast.parse(path.read_text())
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(node) is not None:
            skipped.add(id(node.body[0].value))
        if isinstance(node, (ast.Raise, ast.JoinedStr)):
            skipped |= {id(inner) for inner in ast.walk(node) if inner is not node}
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.JoinedStr):
            text = "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if len(text.split()) >= 6 and not text.startswith(NOT_VERDICTS):
            found.append(f"{path.name}:{node.lineno}: {text[:80]}")
    return found


def test_the_scan_finds_a_sentence_and_leaves_a_docstring_and_an_error_alone(tmp_path):
    module = tmp_path / "module.py"
    module.write_text('"""A docstring of many words, more than six."""\n\ndef f(x):\n'
                      '    """Another docstring of many words here."""\n'
                      '    if x:\n        raise ValueError(f"an error message of {x} many words long")\n'
                      '    return f"The loss rises {x:.2f} nats per token here."\n')
    assert [line.split(": ", 1)[1] for line in sentences_in(module)] == ["The loss rises {} nats per token here."]


def test_the_sentences_of_the_verdicts_live_in_the_words_package():
    modules = [path for package in ("verdicts", "experiments") for path in (ROOT / "model_utils" / package).rglob(
        "*.py") if WORDS not in path.parents]
    assert len(modules) > 20
    assert [sentence for path in modules for sentence in sentences_in(path)] == []
    assert len([sentence for path in WORDS.glob("*.py") for sentence in sentences_in(path)]) > 100


def row(kind: RowKind, **fields) -> DecompositionRow:
    return DecompositionRow(**{"kind": kind, "view": None, "rope": None, "against": View(1.0), "scoring": None,
                               "saved": 0.1, "interval": None, "untrained_mass_past": None,
                               "effective_untrained_mass_past": None, "untrained_mass_by_layer_type": None,
                               "untrained": None, "own_temperature": False, "family": None, "remaps": False} | fields)


def test_every_kind_of_row_has_a_name_and_a_description():
    yarn, rope = Rope("yarn", 2.0), Rope("yarn-rope", 2.0)
    verdict = cases.verdicts()["a remapping leads, resolved"]
    rows = {RowKind.REFERENCE: row(RowKind.REFERENCE, view=View(1.0)),
            RowKind.RECIPE: row(RowKind.RECIPE, view=View(1.0, rope), rope=rope),
            RowKind.ORACLE: row(RowKind.ORACLE, scoring=Scoring.IN_SAMPLE),
            RowKind.HELD_OUT: row(RowKind.HELD_OUT, rope=rope, scoring=Scoring.HELD_OUT_DOCUMENTS),
            RowKind.ON_TOP: row(RowKind.ON_TOP, rope=rope, scoring=Scoring.CROSS_FIT_ONE_TEXT),
            RowKind.OWN_TEMPERATURE: row(RowKind.OWN_TEMPERATURE, view=View(1.0, yarn), rope=yarn,
                                         against=View(1.0, rope)),
            RowKind.FAMILY_GAP: verdict.decomposition.family_gap(),
            RowKind.SCHEDULE: row(RowKind.SCHEDULE, view=View(Schedule("ssmax", 8192)),
                                  multipliers=Multipliers(trained_context=(0.5, 1.0), past=(1.0, 1.2))),
            RowKind.FITTED: row(RowKind.FITTED, rope=rope, scoring=Scoring.HELD_OUT_DOCUMENTS, family=Family.FREQUENCY,
                                fitted=FittedValue(family="constant", knob="T", value=0.92, interval=(0.9, 0.94)))}
    assert set(rows) == set(RowKind)
    for kind, found in rows.items():
        assert found.kind is kind
        assert words.row_label(found) and words.row_what(found, verdict), kind
    assert "0.920 (95% interval 0.900-0.940)" in words.row_what(rows[RowKind.FITTED], verdict)  # fitted on all
    assert "1.14" in words.row_what(rows[RowKind.OWN_TEMPERATURE], verdict)  # YaRN's (0.1 ln 2 + 1)^2


def test_a_headline_is_a_number_with_its_interval_or_its_ratio_formatted_at_the_edge():
    saving = words.Headline(label="", value=0.0414, interval=(0.0104, 0.0696), unit=words.Unit.NATS_PER_TOKEN,
                            help="")
    assert (words.headline_number(saving), words.headline_note(saving)) == ("+0.041 nats/token", "+0.010 to +0.070")
    position = words.Headline(label="", value=10240, ratio=1.25, unit=words.Unit.POSITION, help="")
    assert (words.headline_number(position), words.headline_note(position)) == ("10,240", "1.25x")
    bucket = words.Headline(label="", value=10240, ratio=1.25, unit=words.Unit.POSITION, help="",
                            bucket=(10240, 11264))
    assert words.headline_text(bucket) == "10,240-11,263 (1.25x)"  # a bucket, not a point
    alone = words.Headline(label="", value=0.5, unit=words.Unit.NATS_PER_TOKEN, help="")
    assert words.headline_note(alone) is None and words.headline_text(alone) == "+0.500 nats/token"


@pytest.mark.parametrize("share, said", [(1.014, "101%"), (0.068, "7%"), (0.004, "0.4%"), (-0.004, "-0.4%"),
                                         (None, None)])
def test_a_share_of_the_rise_keeps_a_decimal_and_its_sign_where_it_rounds_to_zero(share, said):
    found = words.percent_of_rise(share)
    assert found.startswith(said) if said else "unknown" in found


def test_every_signed_number_in_a_verdict_is_a_saving_and_every_claim_names_its_scope():
    for name, verdict in cases.verdicts().items():
        said = words.sentences(verdict)
        scope = words.scope(verdict.documents)
        for sentence in said:
            if re.search(r"(^|[\s(])[+-]\d+\.\d", sentence):  # a signed number: a saving against T = 1
                assert "saves" in sentence, (name, sentence)
        assert sum(f"({scope}" in sentence or f"; {scope})" in sentence for sentence in said) >= 4, name
        assert all(scope in item.help for item in words.headlines(verdict)), name


def test_a_chart_names_each_lever_in_plain_words_each_its_own():
    for name, verdict in cases.verdicts().items():
        levers = [lever for lever in verdict.decomposition.levers if lever.saved is not None]
        labels = [words.chart_label(lever) for lever in levers]
        assert len(set(labels)) == len(labels), name  # a bar per name: two levers never share one
        for lever, label in zip(levers, labels, strict=True):
            unnamed = lever.kind is RowKind.SCHEDULE and lever.schedule is None  # a synthetic row without it
            assert (label == words.row_label(lever)) == unnamed, (name, label)
            assert " + T=" not in label and "best T per bucket" not in label, (name, label)
    rope, remap = Rope("yarn-rope", 2.0), Rope("self-extend", group=4, window=2048)
    said = {words.chart_label(row(RowKind.RECIPE, view=View(1.0, rope), rope=rope)),
            words.chart_label(row(RowKind.RECIPE, view="self-extend (G=4, W=2048) + T=1", rope=remap)),
            words.chart_label(row(RowKind.OWN_TEMPERATURE, view=View(1.0, Rope("yarn", 2.0)), rope=Rope("yarn", 2.0))),
            words.chart_label(row(RowKind.ON_TOP, rope=rope, scoring=Scoring.CROSS_FIT_ONE_TEXT)),
            words.chart_label(row(RowKind.HELD_OUT, scoring=Scoring.HELD_OUT_DOCUMENTS))}
    assert said == {"YaRN's stretch, s = 2", "Self-Extend (groups of 4, window 2,048)",
                    "YaRN's own sharpening on top of its stretch, s = 2",
                    "a temperature on top of YaRN's stretch, s = 2",
                    "best T per block of positions (chosen on other documents)"}


def test_a_chart_names_a_schedule_by_its_schedule_never_by_its_label():
    named = {Schedule("qwen-logn", 8192): "Qwen's log-n schedule", Schedule("llama4", 8192): "Llama 4's schedule",
             Schedule("ssmax", 8192): "SSMax", Schedule("logn", 8192): "log-n",
             Schedule("yarn", 2.0): "YaRN's sharpening alone, s = 2"}
    for schedule, plain in named.items():
        assert words.chart_label(row(RowKind.SCHEDULE, view=View(schedule))) == plain
    fitted = View(LengthTemperature(0.1, 8192))  # no published schedule: its code name
    assert words.chart_label(row(RowKind.SCHEDULE, view=fitted)) == "log-length T (a=0.1, L=8192)"
    for module in WORDS.glob("*.py"):
        assert '.split(" (")' not in module.read_text(), module


def test_each_words_module_is_under_400_lines_and_no_verdicts_module_over_700():
    def long(paths, limit: int) -> dict[str, int]:
        return {path.relative_to(ROOT).as_posix(): lines for path in paths
                if (lines := len(path.read_text().splitlines())) > limit}

    modules = sorted(WORDS.glob("*.py"))
    assert len(modules) > 10  # the words split as the records are
    assert long(modules, 399) == {}
    assert long((ROOT / "model_utils" / "verdicts").rglob("*.py"), 700) == {}


def test_the_package_says_each_modules_names_once_and_no_name_hides_a_module():
    import importlib

    exported = [name for path in sorted(WORDS.glob("*.py")) if path.stem != "__init__"
                for name in importlib.import_module(f"model_utils.verdicts.words.{path.stem}").__all__]
    assert len(exported) == len(set(exported)) > 100
    assert all(hasattr(words, name) for name in exported)
    assert not {path.stem for path in WORDS.glob("*.py")} & set(exported)  # words.answer is the function
