"""Every word the explorer says about a result: small pure functions, records and numbers in, text out, one module
per kind of result as the records are split (the verdict of one text or a corpus: headlines, answer, context,
levers, rows; sweep, corpus, fit, retrieval, lmeval; a report's findings, maps, collapse; "What we found": found;
shared pieces: common). The numbers and every decision (which lever leads, how a fit is judged) are the verdicts'
(model_utils/verdicts/*.py); the pages, the README generator and docs/FINDINGS.md call these, so they all say the
same thing, and changing a word is one function and one golden file (tests/golden, `make golden`). One sign
convention throughout: "saves" = NLL at T = 1 minus NLL, in nats per token past the trained length, positive =
better. Each module's `__all__` is re-exported here: `from model_utils.verdicts.words import answer`."""

from model_utils.verdicts.words.answers import *  # noqa: F403
from model_utils.verdicts.words.collapse import *  # noqa: F403
from model_utils.verdicts.words.common import *  # noqa: F403
from model_utils.verdicts.words.context import *  # noqa: F403
from model_utils.verdicts.words.corpus import *  # noqa: F403
from model_utils.verdicts.words.findings import *  # noqa: F403
from model_utils.verdicts.words.fit import *  # noqa: F403
from model_utils.verdicts.words.found import *  # noqa: F403
from model_utils.verdicts.words.headline import *  # noqa: F403
from model_utils.verdicts.words.levers import *  # noqa: F403
from model_utils.verdicts.words.lmeval import *  # noqa: F403
from model_utils.verdicts.words.maps import *  # noqa: F403
from model_utils.verdicts.words.retrieval import *  # noqa: F403
from model_utils.verdicts.words.rows import *  # noqa: F403
from model_utils.verdicts.words.sweep import *  # noqa: F403
