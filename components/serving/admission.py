"""Admission control for model passes (`Gate`: at most K at once, the others in a fair line that sees its place) and
the board of computations in flight (`Flights`), shared by every session of one server process. Pure Python
(threading only), so the tests drive both without Streamlit."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field

log = logging.getLogger(__name__)
WARM_UP = "warm-up"  # who the server's own warm-up is (components/serving/warmup.py), in places and in the log


@dataclass(frozen=True, kw_only=True)
class Place:
    """A waiting request's place: how many passes are ahead of it (running, then waiting before it)."""

    ahead: int
    running: int
    slots: int
    warm_up_ahead: int  # of those ahead, how many are the server's own warm-up


@dataclass
class _Ticket:
    who: str
    taken: float = field(default_factory=time.monotonic)


class Gate:
    """At most `slots` holders at once (None: no limit), admitted in the order they asked."""

    def __init__(self, slots: int | None):
        if slots is not None and slots < 1:
            raise ValueError(f"a gate needs at least one slot (or None for no limit), got {slots}")
        self.slots = slots
        self._lock = threading.Condition()
        self._waiting: deque[_Ticket] = deque()
        self._running: list[_Ticket] = []
        self.admitted_count = 0  # since the server started, for the log and the load test
        self.gave_up_count = 0  # left the line before their turn
        self.interrupted_count = 0  # ended by an exception while holding a slot (a stop, a refused request)

    @property
    def running(self) -> int:
        return len(self._running)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def _place(self, ticket: _Ticket) -> Place:
        before = list(self._running) + list(self._waiting)[: self._waiting.index(ticket)]
        return Place(ahead=len(before), running=len(self._running), slots=self.slots or 0,
                     warm_up_ahead=sum(other.who == WARM_UP for other in before))

    def _admissible(self, ticket: _Ticket) -> bool:
        return self._waiting[0] is ticket and (self.slots is None or len(self._running) < self.slots)

    @contextlib.contextmanager
    def admitted(self, who: str = "a visitor", on_wait: Callable[[Place], None] | None = None,
                 poll: float = 0.5) -> Iterator[None]:
        """Hold a slot for the body of the `with`. Waits for it first, calling `on_wait(place)` at once and then
        every `poll` s; an exception from `on_wait` (or anywhere while waiting) gives the place up and propagates."""
        ticket = _Ticket(who)
        with self._lock:
            self._waiting.append(ticket)
        try:
            self._wait_for_slot(ticket, on_wait, poll)
        except BaseException as reason:  # StopException and RerunException are BaseExceptions
            with self._lock:
                self._waiting.remove(ticket)
                self.gave_up_count += 1
                self._lock.notify_all()  # the one behind may now be first in line
                running, waiting = self.running, self.waiting
            log.info("%s left the queue after %.1f s (%s); %d running, %d waiting", who,
                     time.monotonic() - ticket.taken, type(reason).__name__, running, waiting)
            raise
        started, ended_by = time.monotonic(), None
        try:
            yield
        except BaseException as reason:
            ended_by = type(reason).__name__
            raise
        finally:
            with self._lock:
                self._running.remove(ticket)
                if ended_by is not None:
                    self.interrupted_count += 1
                self._lock.notify_all()
                running, waiting = self.running, self.waiting
            if ended_by is not None:
                log.info("slot freed after %.1f s: the pass for %s ended by %s; %d running, %d waiting",
                         time.monotonic() - started, who, ended_by, running, waiting)

    def _wait_for_slot(self, ticket: _Ticket, on_wait: Callable[[Place], None] | None, poll: float) -> None:
        waited = False
        while True:
            with self._lock:
                if self._admissible(ticket):
                    self._waiting.popleft()
                    self._running.append(ticket)
                    self.admitted_count += 1
                    if waited:
                        log.info("%s admitted after %.1f s in the queue; %d running, %d waiting", ticket.who,
                                 time.monotonic() - ticket.taken, self.running, self.waiting)
                    return
                place = self._place(ticket)
            if on_wait is not None:
                on_wait(place)  # outside the lock: it may draw, or raise when the visitor has left
            waited = True
            with self._lock:
                if not self._admissible(ticket):
                    self._lock.wait(timeout=poll)


@dataclass
class Flight:
    """One computation in progress: who runs it and how far it is."""

    key: Hashable
    who: str
    fraction: float = 0.0
    message: str = "Starting"
    landed: threading.Event = field(default_factory=threading.Event)


class Flights:
    """The computations in flight, by key. `join` either registers the caller's (it computes) or returns the one
    already flying (it follows); `report` updates the progress of the calling thread's own flight."""

    def __init__(self):
        self._lock = threading.Lock()
        self._flying: dict[Hashable, Flight] = {}
        self._mine = threading.local()  # per thread, the stack of its own flights (innermost last)

    def _stack(self) -> list[Flight]:
        if not hasattr(self._mine, "stack"):
            self._mine.stack = []
        return self._mine.stack

    def join(self, key: Hashable, who: str) -> tuple[Flight, bool]:
        """(the flight for `key`, True if it is the caller's own, just registered)."""
        with self._lock:
            flight = self._flying.get(key)
            if flight is not None:
                return flight, False
            flight = self._flying[key] = Flight(key, who)
        self._stack().append(flight)
        return flight, True

    def land(self, flight: Flight) -> None:
        """The caller's flight ended (result, error or stop): followers stop waiting on it."""
        with self._lock:
            if self._flying.get(flight.key) is flight:
                del self._flying[flight.key]
        stack = self._stack()
        if flight in stack:
            stack.remove(flight)
        flight.landed.set()

    def report(self, fraction: float, message: str) -> None:
        """Progress of the calling thread's innermost own flight, if it has one."""
        stack = self._stack()
        if stack:
            stack[-1].fraction, stack[-1].message = fraction, message

    def __len__(self) -> int:
        return len(self._flying)


# --- what a waiting request shows ---------------------------------------------------------------------------


def _analyses(count: int) -> str:
    return f"{count} analys{'is' if count == 1 else 'es'}"


def queue_message(place: Place) -> str:
    """What a request waiting for its turn shows: its place, why there is a line, and how to leave it."""
    ahead = f"{_analyses(place.ahead)} ahead of you"
    if place.warm_up_ahead:
        ahead += (" (the server's own preparation of the pages' default views)" if place.warm_up_ahead == place.ahead
                  else f" ({place.warm_up_ahead} of them the server's preparation of the pages' default views)")
    at_once = ("one analysis at a time, so each gets the whole machine" if place.slots == 1
               else f"{place.slots} analyses at a time, sharing the machine's cores")
    return (f"Queued: {ahead}. This server runs {at_once}; yours starts when its turn comes. Leaving the page or "
            "changing the request gives up your place.")


def queued_status(place: Place) -> str:
    """The same place, as someone following that request sees it (their own place is not at stake)."""
    return f"waiting for its turn, {_analyses(place.ahead)} ahead"


def following_message(who: str, message: str) -> str:
    """What a request shows while the same computation, started by someone else, runs: whose it is and how far."""
    if who == WARM_UP:
        return f"The server is preparing this view for every visitor (it does so when it starts): {message}"
    return f"Another visitor asked for the same view a moment ago; its result will be yours too: {message}"
