"""Each golden file's text: one kind of sentence of model_utils.verdicts.words, said about every case of cases.py
that has one ("(none)" where the function says nothing), under the case's name."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from model_utils.core.records.verdict import ContextVerdict, Dominant
from model_utils.verdicts import words
from model_utils.verdicts.fit import judge_fit
from model_utils.verdicts.maps import hidden_by_mean
from tests.golden import cases


def said(value) -> list[str]:
    """What a words function returned, as lines: a sentence, a list of them, or "(none)"."""
    if value is None or value == []:
        return ["(none)"]
    return [value] if isinstance(value, str) else list(value)


def by_case(items: Iterable[tuple[str, object]], lines: Callable[[object], list[str]]) -> str:
    text = []
    for name, item in items:
        text += [f"== {name} ==", *lines(item), ""]
    return "\n".join(text)


def verdicts(lines: Callable[[ContextVerdict], list[str]]) -> str:
    return by_case(cases.verdicts().items(), lines)


def headlines(verdict: ContextVerdict) -> list[str]:
    return [f"{item.label} | {words.headline_number(item)} | {words.headline_note(item) or ''} | {item.help}"
            for item in words.headlines(verdict)]


def levers(verdict: ContextVerdict) -> list[str]:
    """Each lever as the chart and the sentences name it, with what it is and its share of the rise."""
    decomposition = verdict.decomposition
    return [f"{words.row_label(row)} [{row.lever.value}] — {words.row_what(row, verdict)} — "
            f"{words.percent_of_rise(decomposition.share_of_rise(row))}" for row in decomposition.levers]


def table(rows: list[dict[str, str]]) -> list[str]:
    return [" | ".join(rows[0])] + [" | ".join(row.values()) for row in rows] if rows else ["(none)"]


def gains(verdict: ContextVerdict) -> list[str]:
    return [*said(words.held_out_sentence(verdict)), *said(words.in_sample_sentence(verdict)),
            *said(words.best_sentences(verdict)), *said(words.edge_sentence(verdict))]


def domains(summary) -> list[str]:
    lever = summary.verdict.decomposition.lever(Dominant.RECIPE)
    return [*table(words.domain_rows(summary)),
            *said(None if lever is None else words.domain_sentence(summary, lever.view))]


def fits(fit) -> list[str]:
    return [*table([words.fit_row(fit)]), *words.fit_sentences(judge_fit(fit)), *words.fit_table(fit).splitlines()]


def findings(finding) -> list[str]:
    level, text = words.finding_sentence(finding, cases.REFERENCE, " Mar") or ("-", "(none)")
    return [words.direction_words(finding.direction), f"{level}: {text}"]


def retrieval(verdict) -> list[str]:
    """The probe's sentences and the reach as the headline and the table say it."""
    return [words.reach_headline("bundled", verdict), words.reach_sentence("bundled", verdict),
            words.shifts_sentence(verdict), words.reach_short(verdict.reach), words.reach_text(verdict.reach)]


def page_findings(finding) -> list[str]:
    """A report's finding as the pages say it: in temperatures only."""
    level, text = words.page_finding_sentence(finding, cases.REFERENCE, " Mar") or ("-", "(none)")
    return [words.temperature_words(finding.direction, finding.label), f"{level}: {text}"]



def head_picks(case) -> list[str]:
    """The maps page's label of its pick, shown and not, and what it says where the mean of heads hides the effect."""
    pick, mean_ratios, layer = case
    hidden = None if mean_ratios is None else hidden_by_mean(layer, mean_ratios, pick)
    return [words.head_pick_words(pick, " it", shown=True), words.head_pick_words(pick, "␣", shown=False),
            *said(None if hidden is None else words.hidden_by_mean_words(hidden))]

def collapse(verdict) -> list[str]:
    """The Collapse inspector's words: the cut, the first sentence and what follows, the fact, each view's words."""
    lines = [] if verdict.cut is None else [words.cut_sentence(verdict.cut)]
    lines += [words.collapse_sentence(verdict), *words.collapse_more_sentences(verdict),
              *words.fact_sentences(verdict)]
    return lines + [f"{words.view_name(view)}: {words.said_words(view) or '-'}; "
                    f"{words.answer_log_prob_words(view.said.answer_log_prob, 5) if view.said else '-'}"
                    for view in verdict.views]


KINDS: dict[str, Callable[[], str]] = {
    "answer": lambda: verdicts(lambda verdict: said(words.answer(verdict))),
    "headlines": lambda: verdicts(headlines),
    "gains": lambda: verdicts(gains),
    "loss_break": lambda: verdicts(lambda verdict: said(words.break_sentence(verdict))),
    "attention": lambda: verdicts(lambda verdict: said(words.attention_sentences(verdict))),
    "layer_types": lambda: verdicts(lambda verdict: said(words.layer_type_sentence(verdict))),
    "decomposition": lambda: verdicts(lambda verdict: said(words.decomposition_sentence(verdict))),
    "decomposition_table": lambda: verdicts(lambda verdict: table(words.decomposition_table(verdict))),
    "levers": lambda: verdicts(levers),
    "families": lambda: verdicts(lambda verdict: said(words.families_sentence(verdict))),
    "schedules": lambda: verdicts(lambda verdict: [*said(words.schedules_sentence(verdict)),
                                                   *said(words.schedules_line(verdict))]),
    "entropy_trend": lambda: verdicts(lambda verdict: said(
        None if verdict.entropy_trend is None else words.entropy_trend_sentences(verdict.entropy_trend))),
    "side_by_side": lambda: by_case([("committed and synthetic sweeps", list(cases.sweeps().values()))],
                                    lambda documents: [words.SIDE_BY_SIDE_CAPTION,
                                                       *table(words.side_by_side_rows(documents))]),
    "domains": lambda: by_case(cases.summaries().items(), domains),
    "fits": lambda: by_case(cases.fits().items(), fits),
    "findings": lambda: by_case(cases.FINDINGS.items(), findings) + "\n" + "\n".join(
        words.mass_shift_lines(list(cases.FINDINGS.values()), 0)),
    "tables": lambda: by_case(cases.summaries().items(), lambda summary: words.tune_table(summary).splitlines()),
    "retrieval": lambda: by_case(cases.retrieval_verdicts().items(), retrieval),
    "lmeval": lambda: by_case(cases.lmevals().items(), lambda run: [words.lmeval_heading(run),
                                                                    *words.lmeval_findings(run)]),
    "page_answers": lambda: verdicts(lambda verdict: said(words.answer_point(verdict))),
    "page_findings": lambda: by_case(cases.FINDINGS.items(), page_findings),
    "head_picks": lambda: by_case(cases.HEAD_PICKS.items(), head_picks),

    "collapse": lambda: by_case(cases.collapses().items(), collapse),
}
