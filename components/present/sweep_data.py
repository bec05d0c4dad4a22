"""A sweep document (core.records.sweep.SweepDocument) or a corpus summary read into the arrays the figures draw
and the rows the CSV holds: pure numpy, averaged as the engine averages (geometric for top_ratio). The functions
that serve both read the attributes the two share: results (label, temperature, schedule, recipe, nll), buckets,
best (bucket, temperature, nll, intervals), bootstrap. Nothing here judges: the verdicts are model_utils.verdicts'."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from model_utils.core.records.sweep import BestEntry, SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import Dominant, Family, family_of
from model_utils.core.statistics import STATISTICS, statistic_mean
from model_utils.core.views import reference_index
from model_utils.verdicts.words import FAMILIES

OWN_POSITIONS = "the model's own positions"  # what the pages call the passes without a RoPE recipe
EFFECTIVE = "effective_untrained_mass"
REMAPPED = "remapped distances"  # how a chart marks a row measured on the distances a remapping gives




def recipes(document) -> list[str]:
    """The labels of the RoPE recipes of a sweep or a summary, in the order they were run."""
    return list(dict.fromkeys(result.recipe for result in document.results if result.recipe is not None))


def constant_temperatures(document, recipe: str | None = None) -> list[float]:
    """The constant temperatures of a sweep or a summary on the model's own positions (or on the recipe labelled
    `recipe`), in the order they were run."""
    return [result.temperature for result in document.results
            if result.temperature is not None and result.recipe == recipe]


def reference_result(document):
    """The T = 1 on the model's own positions that every other result is compared with (a sweep always runs it)."""
    return document.results[reference_index(document.results)]


def best_entries(document, recipe: str | None = None) -> Sequence[BestEntry]:
    """The best constant temperature per bucket on the model's own positions, or on the recipe labelled `recipe`."""
    if recipe is None:
        return document.best
    return next((entries for rope, entries in document.best_by_rope.items() if rope.label == recipe), ())


def best_recipes(document: SweepDocument) -> list[str]:
    """The labels of the recipes with a best temperature per bucket (T = 1 and another temperature ran on them)."""
    return [rope.label for rope in document.best_by_rope]


MAIN_LINES = "T = 1, the best T per bucket and each recipe at T = 1"
# the four lines a chart of the loss by position opens on (the rest: line_groups, behind a toggle)
HEADLINE_LINES = "T = 1, the best T per bucket, the best recipe and the context cut to the trained length"
CUT_LABEL = "T=1, context cut to the trained length"  # the cut-context reference pass, as a line


def lead_recipe(document) -> int | None:
    """The index of the recipe pass a sweep's or a summary's verdict names as the recipe lever
    (Decomposition.lever(RECIPE): the answer's and the headline numbers' recipe); None without a verdict or a
    recipe."""
    verdict = document.verdict
    lever = None if verdict is None else verdict.decomposition.lever(Dominant.RECIPE)
    views = [result.view for result in document.results]
    return views.index(lever.view) if lever is not None and lever.view in views else None


def cut_context_by_bucket(document) -> np.ndarray | None:
    """[bucket] the mean NLL of the cut-context reference pass (SweepDocument.cut_context: positions trained_length
    .. n_tokens - 2, each read with at most the trained length before it) over each bucket's positions, as the
    passes' NLL is averaged; NaN for a bucket that starts before the trained length (its tokens are read whole);
    None where the document has no such pass (a summary, a sweep within the trained length, an older format)."""
    cut = document.cut_context if isinstance(document, SweepDocument) else None
    if cut is None:
        return None
    first, values = cut.first_position, []
    for start, stop in document.buckets:
        chosen = cut.position_nll[start - first : min(stop, cut.n_tokens - 1) - first] if start >= first else []
        values.append(float(np.mean(chosen)) if len(chosen) else np.nan)
    return np.array(values, dtype=np.float64)


def line_groups(document) -> dict[str, list[int]]:
    """The sets of results a chart by position can draw, by name, as indices into the results: with recipes, the
    main comparison first (T = 1 and each recipe's T = 1, or its first result if it ran without T = 1), then, where
    more than one family of recipes ran, the main comparison's lines of each family (family_groups), then the
    model's own positions, then each recipe with T = 1 on the model's own positions; without, only the model's own
    positions."""
    results = list(document.results)
    reference = results.index(reference_result(document))
    own = [index for index, result in enumerate(results) if result.recipe is None]
    groups = {}
    by_recipe = {recipe: [index for index, result in enumerate(results) if result.recipe == recipe]
                 for recipe in recipes(document)}
    if by_recipe:
        groups[MAIN_LINES] = [reference] + [
            next((index for index in indices if results[index].temperature == 1.0), indices[0])
            for indices in by_recipe.values()]
        groups |= family_groups(results, groups[MAIN_LINES])
    groups[OWN_POSITIONS] = own
    for recipe, indices in by_recipe.items():
        groups[recipe] = [reference, *indices]
    return groups


def family_group(family: Family) -> str:
    """The name of a line group: T = 1 and the recipes of one family (verdicts.words.FAMILIES)."""
    return f"T = 1 and each {FAMILIES[family]} at T = 1"


def family_groups(results: Sequence, main: list[int]) -> dict[str, list[int]]:
    """Where more than one family of recipes ran, one group per family: T = 1 and that family's lines of the main
    comparison (`main`, indices into results, T = 1 first); none with the frequency changes alone."""
    by_family: dict[Family, list[int]] = {}
    for index in main[1:]:
        by_family.setdefault(family_of(results[index].rope), []).append(index)
    if list(by_family) in ([], [Family.FREQUENCY]):
        return {}
    return {family_group(family): [main[0], *by_family[family]] for family in FAMILIES if family in by_family}


def best_nll_by_bucket(document, recipe: str | None = None) -> np.ndarray:
    """[bucket] the mean NLL of the best constant temperature of each bucket (chosen on that bucket's own
    positions), NaN where a bucket has no entry."""
    chosen = {tuple(entry.bucket): entry.nll for entry in best_entries(document, recipe)}
    return np.array([chosen.get(tuple(bucket), np.nan) for bucket in document.buckets], dtype=np.float64)


def statistics_of(document: SweepDocument) -> list[str]:
    """The statistics a sweep holds, in STATISTICS' order (a sweep written before a statistic existed lacks it),
    and the effective untrained mass where a pass remaps distances (elsewhere it is the untrained mass)."""
    held = document.results[0].heads
    effective = [EFFECTIVE] if remaps(document) and all(EFFECTIVE in result.heads for result in document.results) \
        else []
    return [name for name in STATISTICS if name in held] + effective



def remaps(document) -> bool:
    """Whether a pass of the sweep or summary remaps distances (core.rope.REMAPS)."""
    return any(result.rope is not None and result.rope.remaps for result in document.results)


def untrained_rows(document: SweepDocument, layer: int | None = None) -> tuple[np.ndarray, list[str]]:
    """[result, bucket] the untrained-distance mass of every pass on the distances the model is given, and each
    row's label: a distance remapping's effective mass, marked (REMAPPED), since in the text its far keys are as far
    back as ever; the untrained mass otherwise, where the two are equal."""
    values, labels = [], []
    for result in document.results:
        remapped = result.rope is not None and result.rope.remaps and EFFECTIVE in result.heads
        values.append(statistic_by_bucket(result, EFFECTIVE if remapped else "untrained_mass", layer))
        labels.append(f"{result.label} ({REMAPPED})" if remapped else result.label)
    return np.array(values), labels


def nll_by_bucket(result) -> np.ndarray:
    """[bucket] mean next-token NLL of a result; NaN for a bucket without a position that has a next token."""
    return np.array([np.nan if value is None else value for value in result.nll], dtype=np.float64)


def statistic_by_bucket(result, statistic: str, layer: int | None = None) -> np.ndarray:
    """[bucket] one statistic of a sweep result: the mean over the heads of `layer`, or over every layer and head
    (layer None)."""
    values = result.heads[statistic]  # [bucket, layer, head]
    return (statistic_mean(values, statistic, axis=(1, 2)) if layer is None
            else statistic_mean(values[:, layer], statistic, axis=1))


def distance_by_bucket(result, layer: int | None = None) -> np.ndarray:
    """[bucket, distance bin] attention mass by key distance, mean over heads and over the layers (or of `layer`)."""
    return result.distance_profile if layer is None else result.distance_profile_layers[:, layer, :]


def n_layers(document: SweepDocument) -> int:
    return document.results[0].heads["entropy"].shape[1]


def sweep_rows(document: SweepDocument) -> list[dict]:
    """One row per (bucket, temperature or schedule): the bucket's positions, the mean NLL, and each statistic as a
    mean over layers and heads (geometric for top_ratio)."""
    means = [{name: statistic_by_bucket(result, name) for name in statistics_of(document)}
             for result in document.results]
    rows = []
    for index, (start, stop) in enumerate(document.buckets):
        for result, statistics in zip(document.results, means, strict=True):
            row = {"bucket_start": start, "bucket_stop": stop, "label": result.label,
                   "temperature": result.temperature,
                   "schedule": None if result.schedule is None else result.schedule.label,
                   "rope": result.recipe, "nll": result.nll[index]}
            rows.append(row | {name: float(values[index]) for name, values in statistics.items()})
    return rows


def past_bucket_without_loss(document: SweepDocument) -> tuple[int, int] | None:
    """A bucket past the trained length without any position that has a next token (its NLL is missing), which
    the verdict cannot average; None when there is none."""
    trained = document.trained_length
    for (start, stop), nll in zip(document.buckets, document.reference().nll, strict=True):
        if start >= trained and nll is None:
            return start, stop
    return None


def default_comparison(document: SweepDocument) -> str:
    """The result drawn next to T = 1 on opening: the first recipe's T = 1 when the sweep ran recipes, else the best
    constant temperature of the last bucket, if it is not T = 1, else the first result that is not T = 1."""
    results = document.results
    own = [result for result in results if result.rope is None]
    on_recipes = [result.label for result in results if result.rope is not None]
    others = [result.label for result in own if result.temperature != 1.0]
    last = document.best[-1].temperature if document.best else 1.0
    chosen = [result.label for result in own if result.temperature == last != 1.0]
    return (on_recipes[:1] or chosen or others or [document.reference().label])[0]


def summary_for(summaries: Sequence[TuneSummary], document: SweepDocument | None,
                several_models: bool) -> TuneSummary | None:
    """The corpus summary shown with `document`: the first of its model; where the committed sweeps are of several
    models (the page offers a choice by model), none when its model has no corpus, so that no other model's answer
    leads; else the first one (the default corpus, drawn beside a run of another model)."""
    for summary in summaries:
        if document is not None and summary.model == document.model:
            return summary
    return None if several_models or not summaries else summaries[0]


def corpus_trained_length(summary: TuneSummary, documents: Sequence[SweepDocument | None] = ()) -> int | None:
    """The trained length of a corpus summary: its settings' own, or (when the tuner ran with the model's default,
    which the summary's settings do not write down) that of a sweep document of the same model; None if neither
    says."""
    if summary.settings.trained_length is not None:
        return summary.settings.trained_length
    for document in documents:
        if document is not None and document.model == summary.model:
            return int(document.trained_length)
    return None


def summary_intervals(result) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) [bucket] of a corpus result's interval of the mean NLL."""
    bounds = np.asarray(result.nll_interval, dtype=np.float64)
    return bounds[:, 0], bounds[:, 1]


def identical_results(results: Sequence, numbers: str = "nll") -> list[list[str]]:
    """Groups of two or more results whose `numbers` (the attribute: "nll" or "heads") are identical (their lines
    are drawn on top of each other), by label, in the order they were run."""
    seen: list[tuple[object, list[str]]] = []
    for result in results:
        values = getattr(result, numbers)
        group = next((labels for held, labels in seen if _equal(held, values)), None)
        if group is None:
            seen.append((values, [result.label]))
        else:
            group.append(result.label)
    return [labels for _, labels in seen if len(labels) > 1]


def _equal(first, second) -> bool:
    """Equal numbers (sequences or arrays, or dicts of them; None and NaN count as equal to each other)."""
    if isinstance(first, dict):
        return first.keys() == second.keys() and all(_equal(first[key], second[key]) for key in first)
    left, right = (np.asarray(values, dtype=np.float64) for values in (first, second))
    return left.shape == right.shape and bool(np.array_equal(left, right, equal_nan=True))
