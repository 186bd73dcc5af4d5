"""Progress on stderr: a bar on a terminal; in a pipe nothing (`progress_bar`), or plain
lines now and then (`Progress`, for the long phases of `eventsched simulate`)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

#: Seconds between two plain progress lines, by default.
DEFAULT_EVERY = 5.0
#: The first plain line comes once a phase has lasted this long (or `every`, if shorter):
#: a phase that ends sooner prints nothing. (A bar is drawn at once, and erased at the end.)
FIRST_AFTER = 1.0


def progress_bar(total: int, desc: str, unit: str = "pod") -> Any:
    from tqdm import tqdm  # imported by the command that draws a bar, not by its parser

    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        disable=not sys.stderr.isatty(),
        file=sys.stderr,
        leave=False,
        dynamic_ncols=True,
    )


@dataclass(frozen=True, slots=True)
class Measure:
    """What a phase counts: tqdm's unit (scaled with k, M, ... for bytes), and in a plain
    line the number of an amount and its label (`8.2 MiB`, `4,210 pods`)."""

    unit: str
    number: Callable[[float], str]
    label: str
    scaled: bool = False


PODS = Measure("pod", lambda amount: f"{amount:,.0f}", "pods")
BYTES = Measure("B", lambda amount: f"{amount / (1 << 20):,.1f}", "MiB", scaled=True)


class Progress:
    """One phase of a long command, with a total (`update` says how far) or without.

    On a terminal, a tqdm bar started when the phase starts, so its rate and estimate
    are the phase's own. Elsewhere, a plain line on `out` once the phase has lasted
    FIRST_AFTER seconds, then every `every` seconds (from a thread, so a phase that
    reports nothing still says it is running), and a last one when it ends if any was
    printed: `loading manifests: 8.2 of 19.3 MiB (42%), 2.4 MiB/s, about 4 s left`.
    """

    def __init__(
        self,
        what: str,
        total: int | None = None,
        *,
        measure: Measure = PODS,
        every: float = DEFAULT_EVERY,
        out: TextIO | None = None,
        terminal: bool | None = None,
    ) -> None:
        self.what = what
        self.total = total
        self.measure = measure
        self.every = every
        self.out = out or sys.stderr
        self.done = 0
        self.started = time.monotonic()
        self._said = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        on_terminal = self.out.isatty() if terminal is None else terminal
        self._bar: Any = None
        self._thread: threading.Thread | None = None
        if on_terminal:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                desc=what,
                unit=measure.unit,
                file=self.out,
                leave=False,
                dynamic_ncols=True,
                unit_scale=measure.scaled,
                unit_divisor=1024,
                # Without a total, the time so far: not "0pod [00:05, ?pod/s]".
                bar_format=None if total is not None else "{desc}: {elapsed}",
            )
        if every > 0 or on_terminal:
            self._thread = threading.Thread(target=self._tick, name="progress", daemon=True)
            self._thread.start()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(finished=exc[0] is None)

    def update(self, done: int, total: int | None = None) -> None:
        """How far the phase got: `done` of its total (`total`: learnt only now)."""
        with self._lock:
            step, self.done = done - self.done, done
            grown = total is not None and total != self.total
            if grown:
                self.total = total
        if self._bar is not None:
            if grown:
                self._bar.total = total
                self._bar.bar_format = None  # a bar, now that there is a total
            if step:
                self._bar.update(step)

    def close(self, finished: bool = True) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            self._bar.close()
        elif self._said and finished:
            self._line(self.finished())

    def _tick(self) -> None:
        """On a terminal, redraw every second (a phase without updates still shows its
        time); elsewhere, a line every `every` seconds."""
        every = 1.0 if self._bar is not None else self.every
        if self._stop.wait(min(FIRST_AFTER, every)):
            return
        while True:
            if self._bar is not None:
                self._bar.refresh()
            else:
                self._said = True
                self._line(self.running())
            if self._stop.wait(every):
                return

    def running(self) -> str:
        """`what: 8.2 of 19.3 MiB (42%), 2.4 MiB/s, about 4 s left`, or `what: 12 s so far`."""
        elapsed = time.monotonic() - self.started
        with self._lock:
            done, total = self.done, self.total
        if not total:
            return f"{self.what}: {_duration(elapsed)} so far"
        number, label = self.measure.number, self.measure.label
        text = f"{self.what}: {number(done)} of {number(total)} {label} ({100 * done / total:.0f}%)"
        if done and elapsed > 0:
            rate = done / elapsed
            text += f", {number(rate)} {label}/s, about {_duration((total - done) / rate)} left"
        return text

    def finished(self) -> str:
        """`what: 19.3 MiB in 7 s`, or `what: done in 6 s`."""
        elapsed = _duration(time.monotonic() - self.started)
        if not self.total:
            return f"{self.what}: done in {elapsed}"
        return f"{self.what}: {self.measure.number(self.done)} {self.measure.label} in {elapsed}"

    def _line(self, text: str) -> None:
        print(text, file=self.out, flush=True)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
