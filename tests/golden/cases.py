"""The results the golden files are written from: the committed sweeps, corpus summaries and fits, and small
synthetic sweeps, corpora and findings whose right verdict is known (tests/verdicts/synthetic.py), each by name."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import numpy as np

from model_utils.core.records.fit import FitSummary
from model_utils.core.records.sweep import SweepDocument
from model_utils.core.records.tune import TuneSummary
from model_utils.core.records.verdict import ContextVerdict
from model_utils.core.report import Cut, HeadPick
from model_utils.core.rope import Rope
from model_utils.core.views import View
from model_utils.experiments import committed
from model_utils.verdicts.corpus import corpus_verdict
from model_utils.verdicts.findings import Direction, Finding
from model_utils.verdicts.past import ViewInfo
from tests.verdicts.synthetic import INSIDE, SCHEDULE, collapse_case, document, fit_summary, plain, yarn_rope

GRID = {0.8: [2.25, 2.45, 3.45, 4.1], 1.0: [2.2, 2.5, 3.4, 4.0], 1.25: [2.3, 2.6, 3.2, 3.7],
        1.5: [2.4, 2.7, 3.3, 3.6]}  # NLL past the trained length per constant temperature


def grid_views(grid: dict = GRID) -> list[tuple]:
    return [(t, [*(v + (0 if t == 1 else 0.05) for v in INSIDE), *past]) for t, past in grid.items()]


def attention_views(entropy_past: list[float]) -> list[tuple]:
    heads = {"normalized_entropy": [0.434, 0.41, 0.39, 0.381, *entropy_past], "sink_mass": 0.2,
             "untrained_mass": [0.0] * 4 + [0.001, 0.3, 0.5, 0.6]}
    return [(1.0, plain(GRID[1.0]), heads), (1.25, plain(GRID[1.25]))]


def masses(value: float, effective: float | None = None) -> dict:
    """Heads with this untrained-distance mass past the trained length (and a remapping's effective one)."""
    found = {"untrained_mass": [0] * 4 + [value] * 4}
    return found if effective is None else found | {"effective_untrained_mass": [0] * 4 + [effective] * 4}


FAR, NEAR = masses(0.5), masses(0.5, effective=0.0)
SELF_EXTEND = View(1.0, Rope("self-extend", group=2, window=512))
SINKS = View(1.0, Rope("sink-window", sinks=4, window=1024))
RECIPES = [(0.8, plain([2.25, 2.45, 3.45, 4.1]), masses(0.48)), (1.0, plain([2.2, 2.5, 3.4, 4.0]), masses(0.5)),
           (1.25, plain([2.3, 2.6, 3.2, 3.7]), masses(0.52)),
           (View(1.0, Rope("yarn", 2.0)), plain([2.15, 2.25, 2.35, 2.45]), masses(0.03)),
           (yarn_rope(0.8), plain([2.3, 2.4, 2.5, 2.6]), masses(0.02)),
           (yarn_rope(1.0), plain([2.2, 2.3, 2.4, 2.5]), masses(0.02)),
           (yarn_rope(1.25), plain([2.25, 2.35, 2.35, 2.45]), masses(0.02)),
           (View(1.0, Rope("dynamic", 2.0)), plain([2.2, 2.4, 2.8, 3.0]), masses(0.3)),
           (View(1.0, Rope("linear", 2.0)), plain([2.3, 2.6, 3.0, 3.2]), masses(0.5))]
RISE = [(1.0, plain([3.4, 3.6, 3.8, 4.0]), FAR), (0.8, plain([3.5, 3.7, 3.9, 4.1]), FAR),
        (1.25, plain([3.35, 3.55, 3.75, 3.95]), FAR)]

# name -> (spec, means[, heads]) views, and whether each view's own noise moves its bucket means
SWEEPS = {
    "grid, the best T on the largest tried": (grid_views(), True),
    "no break, the loss stays in range": (grid_views({1.0: [2.2, 2.5, 2.4, 2.3], 1.25: [2.3, 2.6, 2.5, 2.4]}), True),
    "attention within the trained range": (attention_views([0.39, 0.40, 0.41, 0.42]), True),
    "attention spreading past it": (attention_views([0.39, 0.40, 0.45, 0.47]), True),
    "frequency recipes, YaRN's own temperature": (RECIPES, True),
    "distance remappings": ([*RECIPES[:3], (SELF_EXTEND, plain([2.2, 2.3, 2.45, 2.55]), NEAR),
                             (View(1.0, Rope("rerope", window=512)), plain([2.2, 2.4, 2.6, 2.8]),
                              masses(0.49, effective=0.3))], True),
    "a recipe recovers the rise": ([*RISE, (yarn_rope(), plain([2.5] * 4))], True),
    "the temperature recovers the rise": ([*RISE[:2], (1.25, plain([2.6, 2.6, 2.7, 2.7])),
                                           (yarn_rope(), plain([3.3, 3.5, 3.7, 3.9]))], True),
    "a remapping leads, resolved": ([*RISE, (yarn_rope(), plain([3.0, 3.2, 3.3, 3.4])),
                                     (SELF_EXTEND, plain([2.5] * 4), NEAR), (SINKS, plain([2.9] * 4), NEAR)], True),
    "two families within the noise": ([*RISE[:2], (yarn_rope(), plain([3.0, 3.2, 3.3, 3.4])),
                                       (SELF_EXTEND, plain([2.9] * 4), NEAR), (SINKS, plain([2.9005] * 4), NEAR)],
                                      True),
    "a remapping loses, a sink + window saves less than nothing": (
        [*RISE, (yarn_rope(), plain([2.5] * 4)), (SELF_EXTEND, plain([3.3, 3.5, 3.6, 3.7]), NEAR),
         (SINKS, plain([3.5, 3.7, 3.9, 4.2]), NEAR)], True),
    "no rise, a recipe still lowers the loss": (
        [(0.8, plain([2.45, 2.5, 2.45, 2.5])), (1.0, plain([2.4, 2.45, 2.4, 2.45])),
         (1.25, plain([2.5, 2.55, 2.5, 2.55])), (View(1.0, Rope("yarn", 2.0)), plain([2.1] * 4)),
         (yarn_rope(1.0), plain([2.12] * 4))], True),
    "no rise, no lever lowers it": ([(1.0, plain([2.4, 2.45, 2.4, 2.45])), (1.25, plain([2.4, 2.45, 2.4, 2.45]))],
                                    False),
    "a published schedule": ([*grid_views(), (SCHEDULE, plain([2.1, 2.4, 3.3, 3.9]))], True),
    "entropy along the text": (
        [(1.0, plain(GRID[1.0]), {"normalized_entropy": [0.434, 0.41, 0.39, 0.381, 0.39, 0.4, 0.41, 0.42],
                                  "entropy": [2.6, 3.0, 3.2, 3.4, 3.6, 3.7, 3.9, 4.0]}), (1.25, plain(GRID[1.25]))],
        True),
    "noise only: the oracle gains, held out does not": ([(t, plain([2.2, 2.5, 3.4, 4.0]))
                                                         for t in (0.8, 0.9, 1.0, 1.1, 1.25)], False),
}


@cache
def sweeps() -> dict[str, SweepDocument]:
    """Every sweep by name: the committed ones, then the synthetic ones."""
    found = {f"committed sweep, {document.model}": document for document in committed.SWEEPS.read()}
    return found | {name: document(views, exact=exact)[0] for name, (views, exact) in SWEEPS.items()}


@cache
def summaries() -> dict[str, TuneSummary]:
    return {f"committed corpus, {summary.model}": summary for summary in committed.TUNES.read()}


CORPUS_VIEWS = (ViewInfo(view=View(0.8)), ViewInfo(view=View(1.0)), ViewInfo(view=View(1.25)),
                ViewInfo(view=View(1.0, Rope("yarn-rope", 2.0))))
CORPUS_BUCKETS = [(1, 256), (256, 512), (512, 768), (768, 1024), (1024, 1280), (1280, 1536), (1536, 1792)]


def corpus(documents: int, seed: int = 3) -> ContextVerdict:
    """A corpus whose loss rises past a trained length of 1,024, each view's effect and each document's own ups and
    downs drawn at random (tests/verdicts/test_corpus.py's corpus)."""
    rng = np.random.default_rng(seed)
    effect = np.array([[0.05] * 4 + [0.02, 0.05, 0.1], [0.0] * 7, [0.05] * 4 + [-0.02, -0.1, -0.3],
                       [0.01] * 4 + [-0.2, -0.8, -1.5]])
    nll = np.array([2.5, 2.3, 2.4, 2.3, 2.6, 3.5, 4.5]) + effect[None] + rng.normal(0, 0.3, (documents, 1, 7)) \
        + rng.normal(0, 0.08, (documents, 4, 7))
    counts = np.full((documents, 7), 255.0)
    counts[-1, -1] = 0 if documents > 1 else 255
    ones = np.ones((4, 7))
    statistics = {"entropy": 3 * ones, "normalized_entropy": 0.4 * ones, "sink_mass": 0.2 * ones,
                  "untrained_mass": np.array([[0] * 4 + [0.2, 0.4, 0.5]] * 3 + [[0] * 4 + [0.01] * 3])}
    return corpus_verdict(views=CORPUS_VIEWS, sums=nll * counts[:, None, :], counts=counts, buckets=CORPUS_BUCKETS,
                          trained_length=1024, statistics=statistics, reported_best={})


@cache
def verdicts() -> dict[str, ContextVerdict]:
    """Every verdict by name: the sweeps', the corpus summaries', and two synthetic corpora (one of a single
    document, which leaves none to choose on)."""
    found = {name: document.verdict for name, document in sweeps().items()}
    found |= {name: summary.verdict for name, summary in summaries().items()}
    return found | {"a corpus of 5 documents": corpus(5), "a corpus of 1 document": corpus(1)}


@cache
def fits() -> dict[str, FitSummary]:
    """The committed fits, and synthetic ones: YaRN's law within, below and above the fitted interval, a fit at a
    bound, on the model's own positions, and one resolved no finer than its tolerance."""
    found = {f"committed fit, {fit.rope.label if fit.rope else 'own positions'}, {fit.settings.max_tokens:,} tokens":
             fit for fit in committed.FITS.read()}
    return found | {
        "law within": fit_summary(values=(0.86, 0.9)),
        "law below, every gain judged": fit_summary(values=(0.7, 0.75), gains={
            "plain": (0.5, 0.2, 0.8), "recipe_at_1": (-0.2, -0.3, -0.1), "recipe": (-0.01, -0.03, 0.02),
            "best_constant": (0.3, 0.1, 0.5), "best_schedule": (0.2, -0.1, 0.4)}),
        "law above, at a bound": fit_summary(values=(0.95, 0.97), at_bound=True),
        "own positions": fit_summary(rope=None, gains={"plain": (0.1, 0.05, 0.15)}),
        "resolved to the tolerance": fit_summary(values=(0.9, 0.91))}


def finding(label: str, m: tuple[float, float], shares: tuple[float, float], ratio: float | None, **more) -> Finding:
    return Finding(label=label, direction=Direction(softer_share=shares[0], sharper_share=shares[1], smallest=m[0],
                                                   largest=m[1]),
                   n_layers=30, near_uniform_layers=more.get("uniform", 0), near_one_hot_layers=more.get("one_hot", 0),
                   loss=1.0 * (ratio or 1.0), loss_ratio=ratio,
                   mass_shift={"sink_mass": -0.158, "recent_mass": -0.109, "distant_mass": 0.266},
                   answer_probability=more.get("answer"), answer_dropped=more.get("dropped", False))


REFERENCE = replace(finding("T=1", (1.0, 1.0), (0.0, 0.0), None, answer=0.85),
                    mass_shift={"sink_mass": 0.0, "recent_mass": 0.0, "distant_mass": 0.0})
FINDINGS = {
    "the reference": REFERENCE,
    "sharper, the loss rose": finding("T=0.5", (2.0, 2.0), (0.0, 1.0), 1.8, one_hot=3),
    "softer, the answer falls": finding("T=2", (0.5, 0.5), (1.0, 0.0), 4.0, answer=0.0, dropped=True),
    "softer, near-uniform layers": finding("T=4", (0.25, 0.25), (1.0, 0.0), 1.1, uniform=20),
    "a schedule that crosses 1": finding("logn (base=512)", (0.6, 1.2), (0.25, 0.75), 2.0, uniform=18),
    "a range of multipliers, nothing wrong": finding("ssmax (train_length=512)", (1.0, 1.3), (0.0, 1.0), 1.05),
    "mild, nothing to say": finding("T=1.1", (1 / 1.1, 1 / 1.1), (1.0, 0.0), 1.05),
    "one-hot layers while softer": finding("T=1.2", (1 / 1.2, 1 / 1.2), (1.0, 0.0), 1.0, one_hot=4),
}


def head_pick(ratios: tuple[float, float], entropies: tuple[float, float] = (0.08, 0.93)) -> HeadPick:
    return HeadPick(layer=20, head=2, query=10, temperatures=(0.5, 2.0), entropies=entropies, ratios=ratios)


# the Attention maps page's pick and its mean-of-heads note: (pick, the mean of heads' ratios or None, its layer)
HEAD_PICKS = {
    "a clear pick, the mean against the lesson (the trophy sentence)": (head_pick((49.9, 3.22)), (2.54, 2.75), 15),
    "a clear pick, the mean moves far less": (head_pick((8860.0, 9.96), (0.0, 0.64)), (2.0, 1.6), 3),
    "a pick whose ratio rises as it spreads, the mean unbounded": (head_pick((1.5, 1.7), (0.3, 0.6)),
                                                                   (float("inf"), 3.0), 1),
    "a runner-up of weight 0 at the sharpest T": (head_pick((float("inf"), 12.5), (0.0, 0.7)), None, 0),
}


def _reach(outcome, between=None, passages=(), longest: int = 12288):
    """A reach with its bracket and the passages' own ((outcome, bracket) each; default: 4 sharing the mean's)."""
    from model_utils.core.reach import ReachOutcome
    from model_utils.core.records.retrieval import PassageReach, Reach

    own = passages or [(outcome, between)] * 4
    per_passage = tuple(PassageReach(passage=f"p{i}", outcome=o, between=b) for i, (o, b) in enumerate(own))
    value = None if outcome is ReachOutcome.NONE else longest if between is None else (between[0] + between[1]) / 2
    return Reach(outcome=outcome, value=value, between=between, longest=longest, passages=len(own),
                 beyond=sum(o is ReachOutcome.BEYOND for o, _ in own), per_passage=per_passage)


def _shift(view, direction, outcome, between=None, agree=0, passages=4):
    from model_utils.core.records.retrieval import ReachShift

    return ReachShift(view=view, direction=direction, outcome=outcome, between=between, agree=agree,
                      passages=passages)


def retrieval_verdicts() -> dict:
    """Retrieval verdicts made up to cover the words: a reach found with views that lengthen it (on every passage
    and not), shorten it and cannot be told from it; one past the longest distance; none at all; passages whose
    own brackets differ, some past the grid."""
    from model_utils.core.records.retrieval import Direction, ReachOutcome, RetrievalVerdict

    def verdict(reach, *shifts) -> RetrievalVerdict:
        return RetrievalVerdict(reference=View(1.0), reach=reach, shifts=tuple(shifts), best_temperature=0.9,
                                trained_length=8192, longest_distance=12288)

    found, at = ReachOutcome.FOUND, (6144, 6400)
    mixed = [(found, (5120, 6144)), (found, (6144, 6400)), (found, (6400, 7900)), (ReachOutcome.BEYOND, None)]
    return {
        "found, a recipe lengthens it, a temperature shortens it": verdict(
            _reach(found, at),
            _shift(View(1.0, Rope("yarn-rope", 2.0)), Direction.LONGER, found, (8192, 10240), agree=4),
            _shift(View(1.5), Direction.SHORTER, found, (4096, 4352), agree=3),
            _shift(View(0.9), Direction.OVERLAP, found, (6144, 6656))),
        "found, the probe cannot tell the others apart": verdict(
            _reach(found, at), _shift(View(0.7), Direction.OVERLAP, found, (5120, 6400)),
            _shift(View(1.1), Direction.OVERLAP, found, (6144, 6400))),
        "beyond the longest distance": verdict(_reach(ReachOutcome.BEYOND, None, [
            (found, (9000, 10240)), *[(ReachOutcome.BEYOND, None)] * 3])),
        "beyond the longest distance, and so is every other view": verdict(
            _reach(ReachOutcome.BEYOND),
            _shift(View(0.9), Direction.BOTH_BEYOND, ReachOutcome.BEYOND),
            _shift(View(1.0, Rope("yarn-rope", 2.0)), Direction.BOTH_BEYOND, ReachOutcome.BEYOND)),
        "a recipe moves it past the longest distance, one view has no reach": verdict(
            _reach(found, at),
            _shift(View(1.0, Rope("yarn-rope", 2.0)), Direction.LONGER, ReachOutcome.BEYOND, agree=4),
            _shift(View(3.0), Direction.UNKNOWN, ReachOutcome.NONE)),
        "no reach": verdict(_reach(ReachOutcome.NONE)),
        "passages whose own brackets differ": verdict(_reach(found, at, mixed)),
    }


VAULT_VIEWS = [(0.5, "T=0.5", (0.45, 0.01, 0.40), " The answer is unclear."),
               (1.0, "T=1", (0.41, 0.02, 0.38), " 4817."), (1.5, "T=1.5", (0.30, 0.03, 0.20), "\n\nThe vault"),
               (2.0, "T=2", (0.20, 0.05, 0.10), " 48 17")]
NO_FACT = [(t, label, (recent, None, sink), text) for t, label, (recent, _, sink), text in VAULT_VIEWS]
CUT = Cut(limit=2048, head_tokens=2030, question_tokens=18, question_start=9000, left_out_chars=31245,
          question="What is the code for the vault?")


def collapses() -> dict:
    """Collapse inspector verdicts of chosen numbers (tests/verdicts/synthetic.collapse_case)."""
    return {
        "T = 1 answers, the others do not": collapse_case(VAULT_VIEWS, log_probs=[-9.0, -2.0, -7.0, -12.0]),
        "a softer T answers where T = 1 does not": collapse_case(
            [VAULT_VIEWS[0], (1.0, "T=1", (0.41, 0.0003, 0.38), " No."), VAULT_VIEWS[2],
             (2.0, "T=2", (0.2, 0.0004, 0.1), "4817")]),
        "every T answers, the fact in the recent window": collapse_case(
            [(t, label, masses, " 4817") for t, label, masses, _ in VAULT_VIEWS], fact_in_recent=True),
        "no T answers, a schedule among them": collapse_case(
            [*VAULT_VIEWS[:2], (None, "qwen-logn (train_length=8192)", (0.3, 0.02, 0.3), " no")], answer="Marigold"),
        "no answer given": collapse_case(VAULT_VIEWS, answer=None),
        "no fact found, a marked phrase missing": collapse_case(NO_FACT, fact=None, marked_missing="the safe's code"),
        "the fact left out by the cut": collapse_case(NO_FACT, fact=(0, 0), cut=CUT),
        "a cut that could not keep the question": collapse_case(
            VAULT_VIEWS, cut=Cut(limit=512, head_tokens=512, question_tokens=0, question_start=20,
                                 left_out_chars=7000, question="A very long last sentence " * 10),
            last_token="\n"),
    }


def lmevals() -> dict:
    """lm-eval runs whose words are known: every view right at every length inside the trained length; past it, a
    recipe that finds every needle where T = 1 finds none (intervals apart), and one whose interval overlaps."""
    from model_utils.core.lmeval import wilson_interval
    from model_utils.core.records.lmeval import FORMAT, LmEvalDocument, LmEvalSample, LmEvalScore, PromptTokenizer

    views = (View(1.0), View(0.8), View(1.0, Rope("yarn-rope", 2.0)))

    def run(length: int, right: tuple[int, ...], limit: int = 20) -> LmEvalDocument:
        scores = tuple(LmEvalScore(task="niah_single_1", length=length, view=view, score=count / limit,
                                   interval=wilson_interval(count, limit), seconds=60.0,
                                   samples=tuple(LmEvalSample(doc_id=i, answers=("6057437",), response=" 6057437.",
                                                              score=float(i < count), prompt_tokens=length - 600,
                                                              cut_tokens=0, new_tokens=10, seconds=3.0)
                                                 for i in range(limit)))
                       for view, count in zip(views, right, strict=True))
        return LmEvalDocument(format=FORMAT, model="bundled", trained_length=8192, tasks=("niah_single_1",),
                              lengths=(length,), limit=limit, views=views, scores=scores, lm_eval_version="0.4.13",
                              tokenizer=PromptTokenizer.MODEL, run=None)

    return {"inside, all right": run(4096, (20, 20, 20)), "past, apart": run(12288, (0, 3, 20)),
            "past, overlapping": run(12288, (9, 12, 11))}
