"""`python -m model_utils`: parse the command line and dispatch (model_utils/cli). A user's mistake is one line on
stderr and exit status 2; a tune that could not finish, status 1."""

from __future__ import annotations

import contextlib
import logging
import os
import sys

from model_utils import imports_without_collection
from model_utils.cli.parser import UsageError
from model_utils.cli.requests import parse_request
from model_utils.core.errors import AnalysisError, ModelLoadError

with imports_without_collection():  # torch and transformers
    from model_utils.cli.commands import COMMANDS
    from model_utils.experiments.runs.errors import RunError

USAGE_ERROR = 2
FAILED = 1  # a run that could not finish (tune: a worker died too often); what it finished is kept


def main(argv: list[str] | None = None) -> int:
    try:
        request = parse_request(argv)
        COMMANDS[type(request)](request)
    except (UsageError, AnalysisError, ModelLoadError) as error:
        print(f"error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except RunError as error:
        print(f"error: {error}", file=sys.stderr)
        return FAILED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into `head`: the reader left, nothing more to say
        sys.stderr.close()
        return 0
    return 0


def leave(code: int) -> None:
    """End the process once its output is out, without the interpreter's teardown: after torch and transformers are
    imported, finalizing their thousands of modules takes about a second, a fifth of a short `analyze`. Every file a
    command writes is closed when it returns, and `tune` shuts Ray down itself (in a `finally`)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that left, or a stream already closed
            stream.flush()
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":
    leave(main())
