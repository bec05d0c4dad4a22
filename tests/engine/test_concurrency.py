"""One shared model, many threads: every analysis gets exactly the result it would get alone."""

import threading

from model_utils import Schedule, analyze
from tests.support import SAMPLE_TEXT

REQUESTS = [  # (text, temperatures, mode): different lengths, temperatures, modes and schedules
    (SAMPLE_TEXT, [0.5], "in-model"),
    (SAMPLE_TEXT[::-1], [2.0, 4.0], "in-model"),
    (SAMPLE_TEXT * 2, [1.0], "isolated"),
    ("Short text, sharp attention.", [0.1, 1.0], "in-model"),
    (SAMPLE_TEXT[:200], [3.0], "isolated"),
    (SAMPLE_TEXT.upper(), [Schedule("qwen-logn", 64.0), 1.5], "in-model"),
    ("emoji 🙂 CJK 注意力 RTL שלום <script>alert(1)</script>", [0.7], "in-model"),
    (SAMPLE_TEXT * 3, [1.0, 10.0, 100.0], "in-model"),
]


def run(tiny, request) -> dict:
    text, temperatures, mode = request
    return analyze(tiny, text, temperatures=temperatures, mode=mode, window=16).to_dict()


def without_timing(document: dict) -> dict:
    return {key: value for key, value in document.items() if key != "seconds"}


def test_eight_threads_at_once_get_exactly_their_serial_results(tiny):
    serial = [without_timing(run(tiny, request)) for request in REQUESTS]
    for _ in range(2):
        barrier = threading.Barrier(len(REQUESTS))
        results: dict[int, dict] = {}
        errors: list[BaseException] = []

        def worker(index, barrier=barrier, results=results, errors=errors):
            try:
                barrier.wait()
                results[index] = without_timing(run(tiny, REQUESTS[index]))
            except BaseException as error:  # reported below, with the failing request
                errors.append(error)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(REQUESTS))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert not errors, errors
        for index, expected in enumerate(serial):
            assert results[index] == expected, f"request {index} differs when run alongside the others"
