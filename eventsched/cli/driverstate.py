"""What the drivers beside kube-scheduler (`extender`, `shadow`) report on /readyz, and
how they stop: on SIGTERM or SIGINT, through their stop event."""

from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import structlog

from eventsched.cli.serve import Check
from eventsched.cli.signals import StopSignals

log = structlog.get_logger(__name__)


class Driven(Protocol):
    @property
    def log_down(self) -> bool: ...


D = TypeVar("D", bound=Driven)


@dataclass(slots=True)
class DriverState(Generic[D]):
    """The driver's progress, set as it goes: the schema checked, its scheduler built and
    started, a stop asked for."""

    schema_current: bool = False
    scheduler: D | None = None
    started: bool = False
    stopping: bool = False

    def readiness(self) -> Sequence[Check]:
        scheduler = self.scheduler
        return [
            ("event-log-schema", self.schema_current, "run `eventsched db upgrade`"),
            ("informer-sync", self.started, "waiting for nodes and pods"),
            (
                "event-log-writable",
                scheduler is not None and not scheduler.log_down,
                "appends fail",
            ),
            ("running", not self.stopping, "shutting down"),
        ]


def run_driver(
    args: argparse.Namespace,
    body: Callable[[argparse.Namespace, DriverState[D], threading.Event], int],
    stopping_says: str,
) -> int:
    """Run `body` with a fresh state and a stop event that SIGTERM and SIGINT set (logging
    `stopping_says`); the signals are taken before the first thread starts (signals.py)."""
    state: DriverState[D] = DriverState()
    stop = threading.Event()

    def stopping(signum: signal.Signals) -> None:
        log.info(stopping_says)
        state.stopping = True
        stop.set()

    with StopSignals(stopping):
        return body(args, state, stop)
