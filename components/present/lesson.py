"""The Lesson: a 10-minute walk for a class, from softmax on a few scores to what a temperature does on long texts, each
step one sentence and a link that opens its page in the state the step needs (the links the pages already keep: the
sidebar's `t` and `mode`, a page's text, query word, scores). Plain data: the Lesson page draws it, the tests open
every link. The last two steps ask their question; the pages they open answer it from runs made in advance."""

from __future__ import annotations

from dataclasses import dataclass, field

from components.present.glossary import term_link

TROPHY = "The trophy did not fit in the suitcase because it was too big."


@dataclass(frozen=True, kw_only=True)
class Step:
    title: str
    sentence: str  # what the class should see, in one sentence
    page: str  # the script of components/pages/ the step opens
    label: str  # the link's words
    query: dict[str, str] = field(default_factory=dict)  # the link's parameters: the page's state for the step


STEPS = (
    Step(title="Softmax turns scores into weights",
         sentence="A word gives each word before it a score; the softmax turns the scores into weights that add up to "
                  "1, and the temperature T divides the scores first: move the slider and watch the bars.",
         page="softmax_lab", label="Softmax lab: one high score among four",
         query={"scores": "5, 0, 0, 0", "lab_t": "1", "t": "0.5,1,2"}),
    Step(title="A higher T softens, a lower T sharpens",
         sentence="Two scores 5 apart get weights 148 times apart at T = 1 and only 12 times apart at T = 2 "
                  "(e^5 and e^2.5); the order of the words never changes.",
         page="softmax_lab", label="Softmax lab: two scores 5 apart",
         query={"scores": "5, 0", "lab_t": "2", "t": "1,2"}),
    Step(title="One word's attention in a real model",
         sentence=f"Inside a language model each layer runs several {term_link('Head, layer', 'heads')} side by side, "
                  "each attending with its own weights, and every head runs this softmax: follow what \"it\" attends "
                  "to at T = 0.5, 1 and 2, in the head whose attention for it changes most with T.",
         page="attention_maps", label="Attention maps: \"it\" in the trophy sentence",
         query={"text": TROPHY, "q": "it", "t": "0.5,1,2", "mode": "in-model"}),
    Step(title="Entropy: how spread out the weights are",
         sentence="Entropy is 0 when all the weight is on one word and largest when it is spread evenly; with each "
                  "layer's inputs held fixed (isolated mode), every head's entropy rises with T.",
         page="attention_maps", label="Attention maps: every head's entropy",
         query={"text": TROPHY, "q": "it", "t": "0.5,1,2", "mode": "isolated", "statistic": "normalized_entropy"}),
    Step(title="Collapse on a long prompt",
         sentence="On a long prompt with a fact at the start and a question at the end, see where the last word's "
                  "attention goes (the last few words, the fact, the first token), whether it "
                  f"{term_link('Collapse', 'collapses')} (piles onto a few words, or spreads too thin to carry "
                  "anything) and which temperature still answers.",
         page="collapse_inspector", label="Collapse inspector: the built-in long prompt",
         query={"t": "0.5,1,2", "mode": "in-model"}),
    Step(title="Can a temperature fix length? (on two small models: barely)",
         sentence="Past the length a model was trained on it predicts the next word worse: does a temperature bring "
                  "that back, or a stretch of the positions? The page opens on the answer, measured in advance.",
         page="context_length", label="Context length: the measured answer"),
    Step(title="Does a temperature move the reach?",
         sentence="How far back does the model still use a passage it read, and does that change with T? The page "
                  "opens on the reach measured in advance, passage by passage.",
         page="retrieval", label="Retrieval at a distance: the measured reach"),
)
