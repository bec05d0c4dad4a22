"""The admission gate and the flight board (serving/admission.py), without Streamlit: first come first served,
at most K at once, places as the waiting page shows them, and every way a request ends gives its slot or place up."""

import threading
import time

import pytest

from components.serving.admission import Flights, Gate


class SessionGone(BaseException):
    """Stands in for Streamlit's StopException, which is a BaseException too."""


def wait_until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


class Holder:
    """A thread that takes a slot of `gate`, records when it got it, and holds it until released."""

    def __init__(self, gate: Gate, name: str, order: list[str], places: list | None = None, on_wait=None):
        self.release = threading.Event()
        self.admitted = threading.Event()
        self.error: BaseException | None = None

        def record(place):
            if places is not None:
                places.append(place)
            if on_wait is not None:
                on_wait(place)

        def body():
            try:
                with gate.admitted(name, on_wait=record, poll=0.01):
                    order.append(name)
                    self.admitted.set()
                    self.release.wait(10)
            except BaseException as error:  # kept for the test to look at
                self.error = error

        self.thread = threading.Thread(target=body)
        self.thread.start()

    def finish(self) -> None:
        self.release.set()
        self.thread.join(10)


def test_requests_are_admitted_first_come_first_served():
    gate, order = Gate(1), []
    first = Holder(gate, "first", order)
    first.admitted.wait(5)
    holders = []
    for i, name in enumerate(["b", "c", "d", "e"]):
        holders.append(Holder(gate, name, order))
        wait_until(lambda i=i: gate.waiting == i + 1)  # each is in line before the next one asks
    first.finish()
    for holder in holders:
        holder.admitted.wait(5)
        holder.finish()
    assert order == ["first", "b", "c", "d", "e"]
    assert (gate.admitted_count, gate.running, gate.waiting) == (5, 0, 0)


@pytest.mark.parametrize("slots", [1, 2, 3])
def test_at_most_k_run_at_once(slots):
    gate, lock = Gate(slots), threading.Lock()
    running, peak = [0], [0]

    def work():
        with gate.admitted(poll=0.01):
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            time.sleep(0.02)
            with lock:
                running[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert peak[0] == slots
    assert gate.admitted_count == 8


def test_a_waiting_request_sees_its_place_and_it_moves_up():
    gate, order, places = Gate(1), [], []
    running = Holder(gate, "warm-up", order)
    running.admitted.wait(5)
    second = Holder(gate, "b", order)
    wait_until(lambda: gate.waiting == 1)
    third = Holder(gate, "c", order, places=places)
    wait_until(lambda: len(places) >= 1)
    place = places[-1]
    assert (place.ahead, place.running, place.slots, place.warm_up_ahead) == (2, 1, 1, 1)
    running.finish()
    second.admitted.wait(5)
    wait_until(lambda: places[-1].ahead == 1)
    assert places[-1].warm_up_ahead == 0
    second.finish()
    third.admitted.wait(5)
    third.finish()
    assert order == ["warm-up", "b", "c"]


def test_a_visitor_who_leaves_while_waiting_gives_up_the_place():
    gate, order = Gate(1), []
    running = Holder(gate, "a", order)
    running.admitted.wait(5)
    leaving = threading.Event()

    def leave_when_told(place):
        if leaving.is_set():
            raise SessionGone

    gone = Holder(gate, "gone", order, on_wait=leave_when_told)
    wait_until(lambda: gate.waiting == 1)
    places = []
    behind = Holder(gate, "behind", order, places=places)
    wait_until(lambda: places and places[-1].ahead == 2)
    leaving.set()
    wait_until(lambda: gate.waiting == 1)  # the one who left is out of the line...
    wait_until(lambda: places[-1].ahead == 1)  # ...and the one behind moved up
    gone.thread.join(5)  # the gate counts the leaver out before the exception reaches the leaver's own thread
    assert isinstance(gone.error, SessionGone) and gate.gave_up_count == 1
    running.finish()
    behind.admitted.wait(5)
    behind.finish()
    assert order == ["a", "behind"]
    assert (gate.running, gate.waiting) == (0, 0)


@pytest.mark.parametrize("error", [SessionGone(), ValueError("refused"), KeyboardInterrupt()])
def test_a_slot_is_released_however_the_pass_ends(error):
    gate = Gate(1)
    with pytest.raises(type(error)), gate.admitted("a"):
        raise error
    assert (gate.running, gate.interrupted_count) == (0, 1)
    with gate.admitted("b", on_wait=lambda place: pytest.fail("the slot was not released")):
        assert gate.running == 1


def test_admission_control_off_admits_everyone_at_once():
    gate, order = Gate(None), []
    holders = [Holder(gate, str(i), order, on_wait=lambda place: pytest.fail("waited")) for i in range(6)]
    for holder in holders:
        holder.admitted.wait(5)
    assert gate.running == 6 and gate.waiting == 0
    for holder in holders:
        holder.finish()
    assert gate.running == 0


def test_a_gate_needs_a_slot():
    with pytest.raises(ValueError, match="at least one slot"):
        Gate(0)


def test_a_second_request_for_the_same_key_follows_the_first():
    flights = Flights()
    flight, mine = flights.join("key", "warm-up")
    assert mine and len(flights) == 1
    flights.report(0.5, "Layer 15 of 30")
    same, mine_too = flights.join("key", "a visitor")
    assert same is flight and not mine_too
    assert (same.who, same.fraction, same.message) == ("warm-up", 0.5, "Layer 15 of 30")
    other, mine_other = flights.join("other key", "a visitor")
    assert mine_other and other is not flight

    landed = threading.Event()
    threading.Thread(target=lambda: landed.set() if flight.landed.wait(5) else None).start()
    flights.land(flight)
    assert landed.wait(5) and len(flights) == 1
    again, mine_again = flights.join("key", "a visitor")  # landed: the next request computes (or hits the cache)
    assert mine_again and again is not flight


def test_progress_goes_to_the_calling_threads_own_flight():
    flights = Flights()
    outer, _ = flights.join("outer", "a visitor")
    inner, _ = flights.join("inner", "a visitor")
    flights.report(0.3, "inner work")
    flights.land(inner)
    flights.report(0.9, "outer work")
    assert (inner.message, outer.message) == ("inner work", "outer work")
    elsewhere = threading.Thread(target=lambda: flights.report(1.0, "not mine"))
    elsewhere.start()
    elsewhere.join()
    assert outer.message == "outer work"  # another thread without a flight reports nowhere
