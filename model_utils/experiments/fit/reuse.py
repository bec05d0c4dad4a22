"""A fit's comparisons read from a tune's rows instead of computed. A tune of the same model, documents and settings
ran the same views (T = 1, the recipe at T = 1 and as published, the schedules, the constant grid), so a fit started
from its committed rows computes only its own evaluations and T = 1, against which the rows are checked: a tune of
another text, model or code is refused. The tune's buckets start at q_start = 1; position 0 has one key, so its
prediction is the same under every view, and the two T = 1 results' difference before the trained length (that
position) is added to every reused row."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

from model_utils.core.records.tune import RowSettings
from model_utils.core.views import View
from model_utils.experiments.corpus import Document
from model_utils.experiments.runs.errors import RunUsageError
from model_utils.experiments.sweep import SweepSettings

# Nats per token past the trained length allowed between the tune's T = 1 rows and the fit's own pass: the rows keep
# bucket means, which round the sums by about 1e-7 per token; another text or model differs by far more.
TOLERANCE = 1e-5


@dataclass(frozen=True, kw_only=True)
class TuneRows:
    """A tune's rows as the fit reads them (tune/rows.region_sums): per (document sha256, spec label) the NLL sums
    before the trained length (from q_start) and past it, with their counts and the document's token count."""

    source: str  # the folder, as given on the command line
    settings: RowSettings
    sums: dict[tuple[str, str], dict]


def check_reuse(tune: TuneRows, fingerprint: str, settings: SweepSettings) -> None:
    """Refuse, before any work, the rows of a tune made on another model or with other settings."""
    theirs = {"model": tune.settings.model_fingerprint,
              **{item.name: getattr(tune.settings, item.name) for item in fields(SweepSettings)}}
    ours = {"model": fingerprint, **asdict(settings)}
    differ = [f"{name} {theirs[name]!r} there, {ours[name]!r} here" for name in ours if theirs[name] != ours[name]]
    if differ:
        raise RunUsageError(f"--compare-from {tune.source}: its tune was made with other settings "
                            f"({', '.join(differ)}); leave --compare-from out to compute the comparisons")
    if settings.q_start > 1:
        raise RunUsageError(f"--compare-from needs --q-start 0 or 1 (got {settings.q_start}): positions 1 to q_start "
                            "- 1 depend on the view, and the tune's rows leave them out")


def reused_rows(tune: TuneRows, own: dict[str, dict], documents: Sequence[Document], views: Sequence[View]
                ) -> tuple[list[tuple[Document, dict]], float]:
    """The rows of `views` other than T = 1 that the tune holds, for the documents whose T = 1 pass this fit ran
    (`own`: sha256 -> its row), as (document, region sums); and the largest difference per token past the trained
    length between the two T = 1 results. RunUsageError where one exceeds TOLERANCE."""
    plain, rows, largest = View(1.0).label, [], 0.0
    for document in documents:
        tuned, ran = tune.sums.get((document.sha256, plain)), own.get(document.sha256)
        if tuned is None or ran is None:
            continue
        difference = math.inf if tuned["past_count"] != ran["past_count"] else \
            abs(tuned["past_sum"] - ran["past_sum"]) / ran["past_count"]
        if difference > TOLERANCE:
            raise RunUsageError(
                f"--compare-from {tune.source}: {document.name} at T = 1 gives "
                f"{tuned['past_sum'] / max(1, tuned['past_count']):.5f} nats per token past the trained length there "
                f"and {ran['past_sum'] / ran['past_count']:.5f} in this run: not the same text, model or code; leave "
                "--compare-from out to compute the comparisons")
        largest = max(largest, difference)
        first = {"before_sum": ran["before_sum"] - tuned["before_sum"],
                 "before_count": ran["before_count"] - tuned["before_count"]}
        for view in views:
            found = tune.sums.get((document.sha256, view.label))
            if found is not None and view.label != plain:
                rows.append((document, {"spec": view.label, "before_sum": found["before_sum"] + first["before_sum"],
                                        "before_count": found["before_count"] + first["before_count"],
                                        "past_sum": found["past_sum"], "past_count": found["past_count"],
                                        "seconds": math.nan}))
    return rows, largest
