"""The words and table rows the pages show, written from a report, a model's facts or the schedules' knobs: pure
functions, no streamlit, so every sentence a page says is tested against the numbers it describes.

Nothing here judges a result (model_utils.verdicts does); these functions say what was measured, over which
queries, and what a knob makes true.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from components.present.sweep_data import HEADLINE_LINES, MAIN_LINES, OWN_POSITIONS, REMAPPED, family_group
from components.present.text import plain, ratio_text, visible_token
from model_utils.core.collapse import TextPiece
from model_utils.core.names import model_name
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.core.report import Report
from model_utils.core.rope import EXAMPLES, RECIPES, REMAPS, Rope, parse_rope, usage
from model_utils.core.schedules import SCHEDULES, Schedule
from model_utils.core.softmax import entropy, softmax_with_temperature, top_gap, weight_ratio
from model_utils.core.statistics import STATISTIC_LABELS
from model_utils.verdicts.context import entropy_with_length
from model_utils.verdicts.findings import Way, direction_of
from model_utils.verdicts.words import (
    FAMILIES,
    PUBLISHED_ENTROPY_IN_T,
    measured_entropy_sentence,
    spread_method,
    temperature_words,
)

NORMALIZED_ENTROPY = "H / ln(visible keys)"


def number(value) -> str:
    """1234 -> '1,234', 0.5 -> '0.5': whole numbers with thousands separators, others as %g."""
    return f"{value:,g}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int) else str(value)


def fact_lines(facts: dict[str, object]) -> list[tuple[str, str]]:
    """LoadedModel.facts() as (name, text) lines for the sidebar."""
    return [(name, number(value)) for name, value in facts.items()]


def measured_queries(report: Report) -> str:
    """'the 30 queries at positions 1 to 30': what every statistic of the report averages."""
    return (f"the {report.n_queries:,} {'query' if report.n_queries == 1 else 'queries'} at positions "
            f"{report.q_start:,} to {report.n_tokens - 1:,}")


def run_summary(report: Report) -> str:
    """What ran and what the numbers average, for the caption under a page's text box."""
    return (f"{report.n_tokens:,} tokens at {', '.join(report.labels)}, {report.mode} mode: computed in "
            f"{report.seconds:.1f} s, then kept for an hour. Every statistic averages {measured_queries(report)}.")


def nothing_distant_note(report: Report) -> str | None:
    """Why the distant mass is 0 when no measured query has a key beyond its recent window and the sink (a text of
    at most window + 1 tokens): then it is 0 by definition, not a finding. None when some query has distant keys."""
    if report.n_tokens - 1 - report.window >= 1:  # the last query's keys 1 .. n - 1 - window are distant
        return None
    shorter = (f" or a recent window of at most {report.n_tokens - 2:,} tokens (sidebar)"
               if report.n_tokens - 2 >= 1 else "")
    return (f"Nothing in this text is distant: it has {report.n_tokens:,} tokens and the recent window is "
            f"{report.window:,}, so every key a query sees is the first token (the sink) or among its last "
            f"{report.window:,}. The distant mass is 0 at every temperature by definition, not because of the "
            f"temperature. To see a distant part, use a text of more than {report.window + 1:,} tokens{shorter}.")


def _layer_list(layers: Sequence[int]) -> str:
    names = [str(layer) for layer in layers]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def window_note(windows: Sequence[int | None], recent_window: int) -> str | None:
    """What sink, recent and distant mean in the model's sliding-window layers (None for a model without them)."""
    sizes = sorted({size for size in windows if size})
    if not sizes:
        return None
    parts = []
    for size in sizes:
        layers = [layer for layer, w in enumerate(windows) if w == size]
        where = f"layer{'s' if len(layers) > 1 else ''} {_layer_list(layers)}" if len(layers) <= 8 else \
            f"{len(layers)} of its {len(windows)} layers"
        if recent_window >= size:
            split = (f"recent is every key it sees (the recent window of {recent_window} covers the layer's "
                     f"{size}) and distant is 0")
        else:
            split = (f"recent is its last {recent_window:,} keys and distant the {size - recent_window:,} keys it sees "
                     "before those")
        parts.append(f"In {where} a query sees only its last {size:,} keys. From query position {size:,} on, token 0 "
                     f"is outside that window: its sink mass is 0, {split}; the normalized entropy divides by ln of "
                     f"the keys the query sees, min(q + 1, {size:,}).")
    return ("This model has sliding-window layers. " + " ".join(parts)
            + " The maps leave keys outside a layer's window blank, as they leave later keys.")


def collapse_limit_line(longest: int, trained_length: int, model: str) -> str:
    """Where the Collapse inspector stops against the model's trained length, and the pages that go past it (links
    to their url paths, components.pages.PAGES)."""
    inside = (f"inside {model_name(model)}'s trained length of {trained_length:,}" if longest <= trained_length
              else f"{model_name(model)}'s trained length is {trained_length:,}")
    return (f"This page reads a prompt of up to {longest:,} tokens ({inside}): to see what happens past the trained "
            "length, the [Context length](context) page's form runs your text past it, and the "
            "[Retrieval](retrieval) page measures how far back the model still uses what it read.")


def special_mark(token: str) -> str:
    """A special token as a mark a reader sees is not text: '<|im_end|>' as '⟨im_end⟩'."""
    name = token.strip().removeprefix("<|").removesuffix("|>").strip("<>")
    return f"⟨{name or token.strip() or 'special'}⟩"


def continuation_markdown(pieces: Sequence[TextPiece]) -> str:
    """A greedy continuation as Streamlit markdown: its text shown as is (markdown escaped, line breaks as ↵), each
    special token as a grey mark ('⟨im_end⟩'); '(nothing)' for none."""
    shown = [f":gray-background[{plain(special_mark(piece.text))}]" if piece.special
             else plain(visible_token(piece.text)) for piece in pieces]
    return "".join(shown) or "(nothing)"


def map_titles(report: Report, layer: int, head: int | None) -> list[str]:
    """One short two-line panel title per result (lines split at "\\n"), so that four fit side by side: its label,
    then the drawn head's normalized entropy ("entropy 0.42"), or the mean of the heads' ("mean entropy 0.42");
    maps_caption says what the number is."""
    titles = []
    for result in report.results:
        if head is None:
            titles.append(f"{result.label}\nmean entropy {result.layer_mean('normalized_entropy')[layer]:.2f}")
        else:
            titles.append(f"{result.label}\nentropy {result.heads['normalized_entropy'][layer, head]:.2f}")
    return titles


LOG_SCALE = " (log10 of the weight, over three decades below the largest: smaller weights share its lowest colour)"


def maps_caption(report: Report, head: int | None, log_colour: bool, sliding_span: int | None = None) -> str:
    """What the map panels and their titles show, and how many queries the titles' numbers average."""
    rows = " (every row of the map but row 0, which sees only itself)" if report.q_start == 1 else ""
    hidden = "later keys" + (f" and keys before this layer's window of {sliding_span:,}" if sliding_span else "")
    number_is = (f"the mean of the {report.n_heads} heads' normalized entropies {NORMALIZED_ENTROPY}, each "
                 f"averaged over {measured_queries(report)}{rows}; it is not the entropy of the averaged map drawn"
                 if head is None else f"head {head}'s normalized entropy {NORMALIZED_ENTROPY}, averaged over "
                 f"{measured_queries(report)}{rows}")
    return (f"Mode: {report.mode}. Blank cells are keys the query cannot see ({hidden}). One colour scale for all "
            f"panels{LOG_SCALE if log_colour else ''}. The entropy under each title is {number_is}.")


def grid_caption(report: Report, statistic: str) -> str:
    """What each cell of the layer x head grids is."""
    rows = " (every row of the map but row 0)" if report.q_start == 1 else ""
    how = "geometric mean" if statistic == "top_ratio" else "mean"
    return (f"Each cell: one head's {STATISTIC_LABELS[statistic]}, the {how} over {measured_queries(report)}{rows}.")


def next_token_rows(report: Report) -> list[dict[str, str]]:
    """The model's five likeliest next tokens with their probabilities, one row per result."""
    return [{"temperature": result.label, **{f"#{i + 1}": f"{guess['token']!r} {guess['prob']:.2f}"
                                             for i, guess in enumerate(result.next_token)}}
            for result in report.results]


def softmax_rows(scores: Sequence[float], temperatures: Sequence[float]) -> list[dict[str, object]]:
    """The Softmax lab's table: top weight, entropy, entropy / ln n and the top / runner-up ratio per T."""
    gap = top_gap(scores)
    rows = []
    for t in temperatures:
        weights = softmax_with_temperature(scores, t)
        nats = float(entropy(weights))
        rows.append({"T": f"{t:g}", "top weight": round(float(weights.max()), 4), "entropy (nats)": round(nats, 4),
                     "entropy / ln n": round(nats / math.log(len(scores)), 4),
                     f"top / runner-up (gap {gap:g})": ratio_text(float(weight_ratio(gap, t)), digits=4)})
    return rows


def entropy_lines(documents: Sequence[SweepDocument]) -> list[str]:
    """The published argument that attention entropy grows like ln n, then what each committed sweep measured at
    T = 1, one line per sweep naming its model and length (a model's mean over layers takes in its sliding-window
    layers, which see a bounded number of keys: said where there are any); the argument alone without a sweep."""
    measured = []
    for document in documents:
        trend = entropy_with_length(document)
        if trend is None:
            continue
        windows = [window for window in document.layer_windows or () if window is not None]
        sliding = (f"; {len(windows)} of its {len(document.layer_windows)} layers see only their last "
                   f"{max(windows):,} keys" if windows else "")
        measured.append(f"On the committed sweep of {model_name(document.model)} ({document.n_tokens:,} tokens, "
                        f"trained length {document.trained_length:,}{sliding}): {measured_entropy_sentence(trend)}")
    if not measured:
        return [PUBLISHED_ENTROPY_IN_T, "No committed sweep to set a measurement next to it (make sweep writes one)."]
    return [PUBLISHED_ENTROPY_IN_T, *measured]


# Each schedule as the temperature it amounts to, T = 1 / m, with {value} where its knob goes (core.schedules
# publishes them as multipliers of the logits, SCHEDULES[name].formula)
SCHEDULE_TEMPERATURES = {
    "yarn": "1 / (0.1 ln s + 1)² with s = {value}, at every position",
    "qwen-logn": "1 / log_{value}(p + 1) past position {value}, else 1",
    "llama4": "1 / (0.1 ln(⌊(p + 1) / {value}⌋ + 1) + 1)",
    "ssmax": "ln {value} / ln n for a query that sees n keys",
    "logn": "ln {value} / ln n for a query that sees n keys",
}
TABLE_LENGTHS = (8192, 65536)  # the lengths at which the schedules table gives each T


def schedule_temperature(schedule: Schedule) -> str:
    """A schedule's T = 1 / m with its knob written in: 'ln 512 / ln n for a query that sees n keys'."""
    return SCHEDULE_TEMPERATURES[schedule.name].format(value=f"{schedule.resolved_parameter:g}")


def schedule_rows(schedules: dict[str, Schedule]) -> list[dict[str, str]]:
    """The schedules table, a few words a cell: each schedule's temperature at the knob's current value, and the T
    of the last query of a text of each TABLE_LENGTHS (where it sharpens, below 1)."""
    return [{"schedule": name, "temperature T": schedule_temperature(schedule),
             **{f"T at {n:,} tokens": f"{1.0 / float(schedule.multipliers(n)[-1]):.3f}" for n in TABLE_LENGTHS}}
            for name, schedule in schedules.items()]


def schedule_details(schedules: dict[str, Schedule]) -> list[tuple[str, str]]:
    """Each schedule in full, as (its label, its text): T, as its source publishes it (a multiplier of the scores),
    its source and what the explorer applies of it."""
    return [(schedule.label, f"T = {schedule_temperature(schedule)}; published as the scores times "
                             f"{schedule.formula}. Source: {schedule.source}. {SCHEDULES[name].applied}")
            for name, schedule in schedules.items()]


def _log_curves_that_coincide(lengths: dict[str, float]) -> str:
    """Which of Qwen's log-n (held at 1 below L), SSMax (s = 1 / ln L) and log-n (base B) coincide, and where:
    SSMax with L equals log-n with B = L at every length; Qwen's log-n with L equals either past L."""
    qwen, ssmax, logn = lengths["qwen-logn"], lengths["ssmax"], lengths["logn"]
    if qwen == ssmax == logn:
        return (f"Three curves coincide past {number(qwen)} tokens, and that is no plotting error: with "
                f"s = 1 / ln {qwen:g}, SSMax is exactly log-n with base {qwen:g}, and Qwen's log-n with "
                f"L = {qwen:g} is the same curve held at 1 below {number(qwen)}.")
    if ssmax == logn:
        return (f"SSMax and log-n coincide at every length, no plotting error: with s = 1 / ln {ssmax:g}, SSMax is "
                f"exactly log-n with base {ssmax:g}. Qwen's log-n (L = {qwen:g}) is another curve.")
    for other, value, name in (("log-n", logn, "base"), ("SSMax", ssmax, "L")):
        if qwen == value:
            return (f"Qwen's log-n and {other} coincide past {number(qwen)} tokens: Qwen's log-n with L = {qwen:g} is "
                    f"{other} with {name} = {qwen:g}, held at 1 below {number(qwen)}.")
    return (f"With these knobs no two of Qwen's log-n (L = {qwen:g}), SSMax (L = {ssmax:g}) and log-n "
            f"(base {logn:g}) coincide: they do when their lengths are equal.")


def curves_caption(schedules: dict[str, Schedule]) -> str:
    """What the schedule curves show at the knobs' current values."""
    knob = {name: schedule.resolved_parameter for name, schedule in schedules.items()}
    yarn = 1.0 / float(schedules["yarn"].multipliers(1)[0])
    return " ".join([
        _log_curves_that_coincide(knob),
        f"Log-n runs above T = 1 (softer) for contexts shorter than its base, {number(knob['logn'])} tokens, and "
        f"SSMax for contexts shorter than its L, {number(knob['ssmax'])}; Qwen's log-n never does.",
        f"Llama 4's steps start at {number(knob['llama4'])} tokens; YaRN's is the same at every position "
        f"(T = {yarn:.3f} for s = {knob['yarn']:g}).",
    ])


def applied_caption(report: Report, view: int, schedule: Schedule) -> str:
    """Which way `schedule`, result `view` of the report, moved the measured queries of this prompt (the shares of
    softer and sharper queries come from model_utils.verdicts.findings.direction_of), and what of it is applied."""

    direction = direction_of(report, view)
    unchanged = 1.0 - direction.softer_share - direction.sharper_share
    rest = f"; T = 1 on the other {unchanged:.0%}" if direction.kind is Way.MIXED and unchanged else ""
    return (f"On this {report.n_tokens:,}-token prompt, {schedule.label} {temperature_words(direction)}{rest}, over "
            f"{measured_queries(report)}. {SCHEDULES[schedule.name].applied}")


# --- the context-length page ------------------------------------------------------------------------------------


def _labels(labels: Sequence[str]) -> str:
    return ", ".join(labels)


def sweep_caption(document: SweepDocument) -> str:
    """What a sweep document is: model, text, trained length, buckets, what ran, and how it was made."""
    results = document.results
    own = [r for r in results if r.rope is None]
    constants = [r.label for r in own if r.temperature is not None]
    schedules = [r.label for r in own if r.temperature is None]
    on_recipes = [r.label for r in results if r.rope is not None]
    buckets = document.buckets
    said = [f"{document.model} on {document.n_tokens:,} tokens of {document.text_source}; trained length "
            f"{document.trained_length:,} (the dashed line on every chart).",
            f"{len(buckets)} buckets of query positions {buckets[0][0]:,} to {buckets[-1][1] - 1:,}, boundaries at "
            f"multiples of {document.bucket_size:,}; recent window {document.window} tokens.",
            f"{len(constants)} constant temperature{'s' if len(constants) != 1 else ''} ({_labels(constants)}) and "
            + (f"{len(schedules)} schedule{'s' if len(schedules) != 1 else ''} ({_labels(schedules)})" if schedules
               else "no schedule")
            + (f" on the model's own positions, and {len(on_recipes)} pass{'es' if len(on_recipes) != 1 else ''} on "
               f"RoPE recipes ({_labels(on_recipes)})" if on_recipes else "")
            + f", each its own in-model pass with T in every layer: {document.seconds:,.0f} s of compute."]
    run = document.run
    if run is not None:
        said.append(f"Made on {run.date} ({run.machine}) by: {run.command}")
    return " ".join(said)


def committed_label(document: SweepDocument) -> str:
    """A committed sweep in the page's choice of them: its model and length ('Gemma 3 270M, 49,152 tokens')."""
    return f"{model_name(document.model)}, {document.n_tokens:,} tokens"


def sweep_over_budget(n_tokens: int, temperatures: int, schedules: int, max_work: int,
                      trained_length: int | None = None, recipe: str | None = None) -> str | None:
    """The refusal of a sweep whose tokens x passes exceed the server's budget (None when it fits), saying so when
    the most tokens that fit cannot reach past the trained length. With a RoPE `recipe` (its label), each
    temperature runs on it as well."""
    on_recipe = temperatures if recipe is not None else 0
    passes = temperatures + schedules + on_recipe
    if n_tokens * passes <= max_work:
        return None
    allowed = max(2, max_work // passes)
    short = (f" That is not past the model's trained length of {trained_length:,}: with {passes} passes this server "
             "cannot run past it." if trained_length is not None and allowed <= trained_length < n_tokens else "")
    also = f" + {on_recipe} on {recipe}" if on_recipe else ""
    return (f"This server runs at most {max_work:,} tokens x passes per request, and this sweep asks for {n_tokens:,} "
            f"tokens x {passes} passes ({temperatures} temperature{'s' if temperatures != 1 else ''} + {schedules} "
            f"schedule{'s' if schedules != 1 else ''}{also}) = {n_tokens * passes:,}. Ask for at most {allowed:,} "
            f"tokens, or fewer temperatures or schedules{', or no recipe' if on_recipe else ''}.{short}")


def best_caption(document, recipe: str | None = None) -> str:
    """How the best temperature per bucket and its interval were found, from the bootstrap settings of a sweep or
    a summary (sweep_data.corpus_lines), on the model's own positions or on `recipe` (against that recipe's own
    T = 1)."""
    boot = document.bootstrap
    on = ("" if recipe is None else f" Here every temperature runs on the RoPE recipe {recipe}, and what it saves is "
          f"against {recipe} at T = 1, not against the model's own positions.")
    documents = document.corpus.documents if isinstance(document, TuneSummary) else None
    return (f"Each point: the constant temperature with the lowest mean NLL over the bucket's positions; the bars are "
            f"its {spread_method(boot, documents)}. Only the temperatures tried can be best: the ticks on the y "
            f"axis.{on}")


CORPUS_NAMES = 8  # documents named in the corpus caption; more are counted


def corpus_caption(summary: TuneSummary, trained_length: int | None) -> str:
    """Which documents and tokens a corpus summary covers, and how its intervals were made."""
    corpus = summary.corpus
    tokens = corpus.tokens
    each = f"{tokens[0]:,} tokens each" if len(set(tokens)) == 1 else f"{min(tokens):,} to {max(tokens):,} tokens"
    boot = summary.bootstrap
    line = ("the dashed line is the trained length" if trained_length is not None else
            "the summary does not record the trained length, so no line is drawn")
    names = [entry.name for entry in corpus.listed]
    listed = ", ".join(names[:CORPUS_NAMES]) + (f" and {len(names) - CORPUS_NAMES:,} more"
                                               if len(names) > CORPUS_NAMES else "")
    return (f"Corpus: {corpus.documents} documents ({each}, {sum(tokens):,} in all) from {corpus.source}"
            + (f" ({listed})" if names else "") + f"; model {summary.model}; {len(summary.results)} passes "
            f"per document. Mean NLL pooled over the documents' positions in each bucket, with its "
            f"{spread_method(boot, corpus.documents)}; {line}.")


def position_caption(layer: int | None, statistic: str) -> str:
    how = "geometric mean" if statistic == "top_ratio" else "mean"
    over = "over every layer and head" if layer is None else f"over the heads of layer {layer}"
    return (f"Each point: the {how} {over} of the {STATISTIC_LABELS[statistic]}, averaged over the bucket's queries "
            "(the sink is the first token, recent the last `window` keys, distant everything between).")


def distance_caption(layer: int | None) -> str:
    over = "every layer and head" if layer is None else f"the heads of layer {layer}"
    return (f"Share of attention at each key distance, mean over {over} and the bucket's queries: a column sums to "
            "1. Distances longer than a query's position cannot occur, so the top left stays dark. The first token "
            "(the sink) lies at distance q from the query at position q, so its mass is in the top filled bin of "
            "each column (in the first bucket it is spread over the bins): choose the sink mass above to see how "
            "much of it that is.")


def identical_lines(groups: Sequence[Sequence[str]]) -> str | None:
    """Which lines of a chart hide each other because their numbers are identical (None: no two are)."""
    if not groups:
        return None
    said = "; ".join(" and ".join(group) if len(group) == 2 else ", ".join(group[:-1]) + " and " + group[-1]
                     for group in groups)
    return f"Identical numbers, so one line hides the other: {said}."



def lines_caption(group: str, groups: Sequence[str], cut: bool = False) -> str:
    """What the lines of a chart by position are, for the set of results chosen (a name of
    sweep_data.line_groups, which offers `groups`, or HEADLINE_LINES, with the cut-context line where `cut`)."""
    if group == HEADLINE_LINES:
        return ("Lines: T = 1 on the model's own positions (thick); the best constant temperature of each bucket "
                "(black, dotted), chosen on the very positions it is scored on, so no one temperature does better "
                "there; the recipe the answer names, at T = 1, where a recipe ran"
                + ("; and T = 1 with the context cut to the trained length (grey, dashed): the same tokens, each "
                   "read with at most the trained length of text before it" if cut else "")
                + ". 'Every line' shows every temperature, schedule and recipe.")
    if group == OWN_POSITIONS:
        others = " The RoPE recipes are among the other choices above." if len(groups) > 1 else ""
        return ("Lines: every constant temperature (solid, T = 1 thicker) and published schedule (dashed) on the "
                f"model's own rotary positions.{others}")
    if group == MAIN_LINES:
        return ("Lines: T = 1 on the model's own positions (thick); the best constant temperature of each bucket "
                "(black, dotted), chosen on the very positions it is scored on, so no one temperature does better "
                "there; and each RoPE recipe at T = 1 (solid, one colour per recipe).")
    family = next((name for name in FAMILIES if group == family_group(name)), None)
    if family is not None:
        return (f"Lines: T = 1 on the model's own positions (thick), and each {FAMILIES[family]} at T = 1 (solid, one "
                "colour per recipe): the recipes of one family, to compare them per bucket.")
    return (f"Lines: T = 1 on the model's own positions, and every pass on the RoPE recipe {group} in the recipe's "
            "colour: its T = 1 solid, sharper temperatures darker and dotted, softer ones lighter and dashed.")


def untrained_caption(layer: int | None, trained_length: int, remapped: bool = False) -> str:
    """What the untrained-distance chart shows: one row per pass (`remapped`: some rows are a distance remapping's,
    measured on the distances it gives)."""
    over = "every layer and head" if layer is None else f"the heads of layer {layer}"
    said = (f"Each row is one pass of the sweep; each cell the share of attention on keys at least {trained_length:,} "
            f"tokens back (the trained length: relative distances the model never saw in training), the first token "
            f"(the sink) left out, mean over {over} and the bucket's queries. Left of the dashed line it is 0 by "
            "definition: no key there is that far back. A RoPE recipe does not move the keys; it changes the rotation "
            "the model sees at each distance, so compare how much attention still reaches that far.")
    if not remapped:
        return said
    return said + (f" A row marked ({REMAPPED}) is a distance remapping's, measured on the distance it gives each "
                   "key (its effective untrained mass): in the text its far keys are as far back as ever, so this row "
                   "says how much attention lands on a distance the model never saw, not how far back it reaches.")


def recipe_applied(kind: str) -> str:
    """What the explorer applies of a RoPE recipe (core.rope.RECIPES), and where."""
    where = (f"Applied whole, with transformers' own rotary code, as a RoPE recipe: on the Context length page (the "
             f"form's recipe) and with --rope {kind}:S on the command line.")
    if kind == "yarn":
        return where + " Its attention factor alone, on the model's own positions, is the yarn schedule above."
    if kind == "yarn-rope":
        return where + (" YaRN without its attention factor, so that a temperature or schedule of the explorer's goes "
                        "on top of the interpolation alone (--rope yarn-rope:S@T,...).")
    return where


def recipe_rows() -> list[dict[str, str]]:
    """The RoPE recipes table of the Length schedules page, a few words a cell: the recipe, its name, how to run
    it (its formula, source and what is applied: recipe_details)."""
    return [{"recipe": kind, "what it is": info.name, "run it": f"--rope {kind}:S"} for kind, info in RECIPES.items()]


def recipe_details() -> list[tuple[str, str]]:
    """Each RoPE recipe in full, as (its name, its text): what it changes, its source and what is applied."""
    return [(f"{kind}: {info.name}", f"{info.formula}. Source: {info.source}. {recipe_applied(kind)}")
            for kind, info in RECIPES.items()]


# The remappings drawn on the Length schedules page: the form's example of each (core.rope.EXAMPLES) at the bundled
# model's trained length, for the last query of the committed sweep's 16,384 tokens.
REMAP_EXAMPLE_TRAINED, REMAP_EXAMPLE_TOKENS = 8192, 16384


def remap_rows() -> list[dict[str, str]]:
    """The distance remappings table of the Length schedules page, a few words a cell (the rest: remap_details)."""
    return [{"remapping": kind, "what it is": info.name, "example": f"--rope {EXAMPLES[kind]}"}
            for kind, info in REMAPS.items()]


def remap_details() -> list[tuple[str, str]]:
    """Each distance remapping in full, as (its name, its text): what it does, its source and how it is run."""
    return [(f"{kind}: {info.name}", f"{info.formula}. Source: {info.source}. Run it with --rope {usage(kind)} (e.g. "
             f"{EXAMPLES[kind]}) or the Context length page's form, on the torch path: the fused kernel scores one "
             "block of distances and remaps none.") for kind, info in REMAPS.items()]


def remap_examples() -> list[Rope]:
    """The remappings the distance chart draws, one of each kind (core.rope.EXAMPLES)."""
    return [parse_rope(EXAMPLES[kind]) for kind in REMAPS]


def remapped_caption(examples: Sequence[Rope]) -> str:
    """What the chart of remapped distances shows, with each example's largest distance (Rope.max_distance)."""
    largest = "; ".join(f"{rope.label} {rope.max_distance(REMAP_EXAMPLE_TOKENS):,.0f}" for rope in examples)
    return (f"The distance at which the last query of {REMAP_EXAMPLE_TOKENS:,} tokens meets each key, against how "
            f"far back the key is in the text, computed by the engine's own rule (the one its torch path scores "
            f"with), at the form's example parameters; the dotted diagonal keeps every distance, as the model "
            f"without a remapping does, and the dashed line is a trained length of {REMAP_EXAMPLE_TRAINED:,} (the "
            f"bundled model's). Every remapping keeps the distances below its window W. A gap is a key the "
            f"remapping gives no weight: the sink + window sees its first S keys and its last W only. Largest "
            f"distance given: {largest}.")


def fit_caption() -> str:
    return ("Each fold fits one value on its training documents (scipy's bounded Brent search on the loss past the "
            "trained length) and scores it on the other documents, so the gains are held out, with a bootstrap "
            "interval over the held-out documents. The fitted value is the minimum over every document, its "
            "interval a bootstrap over documents of each document's loss curve near the minimum. YaRN's law, "
            "T = 1 / (0.1 ln s + 1)^2, is what YaRN (Peng et al. 2023) publishes for a scale s; the points are "
            "what this model wants on YaRN's interpolation alone (yarn-rope). Below 1 attention is sharpened; "
            "make fit writes them.")


LAW_COLUMNS = ("logit multiplier", "YaRN's law")  # words.fit_row's columns in m, which the page shows as T


def fit_rows_in_t(rows: Sequence[dict[str, str]], laws: Sequence) -> list[dict[str, str]]:
    """The fits table as the pages show it, in temperatures only: words.fit_row's rows without their columns in m,
    YaRN's law at each fit's scale as the T it amounts to (`laws`: verdicts.fit.law of each fit, None where it has
    none) after the fitted T."""
    shown = []
    for row, multiplier in zip(rows, laws, strict=True):
        kept = {key: value for key, value in row.items() if key not in LAW_COLUMNS}
        at = list(kept).index("fitted") + 1 if "fitted" in kept else len(kept)
        law_t = "—" if multiplier is None else f"T = {1 / multiplier.yarn_law:.3f} at s = {multiplier.scale:g}"
        items = list(kept.items())
        shown.append(dict([*items[:at], ("YaRN's law", law_t), *items[at:]]))
    return shown


def decomposition_caption(remapped: bool = False) -> str:
    """What the decomposition table holds (`remapped`: some rows are distance remappings')."""
    said = ("Each row against T = 1 on the model's own positions, past the trained length, in nats per token (saves "
            "= NLL at T = 1 minus NLL; positive = better), with a 95% bootstrap interval over blocks of positions. "
            "A recipe changes the rotary positions; a temperature on top of it is that recipe's row with a best T. "
            "The untrained-distance mass is the attention on keys farther back than the trained length.")
    if not remapped:
        return said
    return said + (" A distance remapping (Self-Extend, ReRoPE) keeps the rotary frequencies and gives a far key "
                   "another distance; a sink + window hides every key but the first few and the last W. Their mass "
                   "is given twice: on the remapped distances (what the model meets: judged against T = 1's) and in "
                   "the text (how far back attention reaches, which a remapping does not change).")
