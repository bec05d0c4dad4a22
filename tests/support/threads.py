"""Running one function on several inputs in threads that start together, for the tests that compare shared-model
concurrency against serial runs."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence


def run_together(function: Callable, inputs: Sequence) -> list:
    """function(x) for every x, each in its own thread, all released at once by a barrier; results in input order."""
    results: list = [None] * len(inputs)
    start = threading.Barrier(len(inputs))

    def worker(index: int) -> None:
        start.wait()
        results[index] = function(inputs[index])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
