"""SIGTERM and SIGINT for the long-running commands, taken on a thread of their own.

A Python signal handler runs on the main thread: between two bytecodes, or
inside the C call the main thread waits in. Two of the scheduler's waits go
wrong there on CPython 3.11:

- `queue.SimpleQueue.get(timeout=...)`, the loop's wait for its inbox,
  recomputes its timeout after the handler ran; when the handler ran past the
  deadline the new timeout is negative, which the lock takes as "block", so
  the loop waits until something is put in its inbox: on a quiet cluster,
  forever. (`threading.Lock.acquire` checks for this; `SimpleQueue` does not.)
- `threading.Event.set()` from the handler deadlocks when the main thread was
  interrupted while it held that Event's lock, inside `Event.wait`.

Either one is a scheduler that logs "stopping" and never stops. So the two
signals are blocked on every thread (the mask is inherited by each thread
from the one that starts it: `StopSignals` is entered before any thread is
started) and one thread takes them with `sigwait`: the main thread is never
interrupted, and the stop is ordinary code on an ordinary thread.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT})


class StopSignals:
    """While entered, SIGTERM and SIGINT call `on_signal` on the `signals` thread."""

    def __init__(self, on_signal: Callable[[signal.Signals], None]) -> None:
        self._on_signal = on_signal
        self._thread: threading.Thread | None = None
        self._previous: set[int | signal.Signals] = set()
        self._closing = False

    def __enter__(self) -> StopSignals:
        self._previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        self._thread = threading.Thread(target=self._take, name="signals", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        """End the thread (with a signal of its own, which it takes and ignores), then
        give the calling thread its mask back."""
        self._closing = True
        thread = self._thread
        if thread is not None and thread.ident is not None:
            signal.pthread_kill(thread.ident, signal.SIGTERM)
            thread.join()
        signal.pthread_sigmask(signal.SIG_SETMASK, self._previous)

    def _take(self) -> None:
        while True:
            signum = signal.sigwait(STOP_SIGNALS)
            if self._closing:
                return
            self._on_signal(signal.Signals(signum))


# -- the benchmarks' -----------------------------------------------------------------


@contextlib.contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """SIGTERM unwinds like Ctrl-C, so every process a benchmark started is stopped on the
    way out."""
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)
