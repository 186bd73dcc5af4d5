"""Leader election on a coordination.k8s.io Lease, as client-go's `leaderelection` runs it.

Only the leader schedules. A candidate tries to take the Lease every
retryPeriod (jittered); it takes it when there is none, when its holder is
empty, or when its record has not changed for leaseDurationSeconds by this
process's own clock of when that record was first seen (the times written in
the Lease are another machine's and only tell that it changed). The leader
renews every retryPeriod and stops leading when no renewal succeeded within
renewDeadline; like kube-scheduler, whoever runs us stops scheduling at that
moment, and a new leader starts from the log and fresh informers. Stopped
while leading (`release`), the holder is cleared so a standby takes over at
once. The Lease is read and written by `leaselock.py`.
"""

from __future__ import annotations

import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import structlog

from eventsched.cluster.kube.connection import REQUEST_TIMEOUT
from eventsched.cluster.kube.events import rfc3339_micro
from eventsched.cluster.kube.kubeconfig import ApiConfiguration
from eventsched.cluster.kube.leaselock import ElectionRecord, LeaseError, LeaseLock
from eventsched.cluster.kube.rest import RequestObserver, Rest

log = structlog.get_logger(__name__)

#: client-go's JitterFactor: a candidate waits retryPeriod plus up to 1.2 times it again.
JITTER_FACTOR = 1.2


@dataclass(frozen=True, slots=True)
class LeaseSettings:
    """kube-scheduler's `leaderElection` block; durations in whole seconds.

    The Lease stores its duration as whole seconds, so fractions are refused
    up front rather than written rounded.
    """

    leader_elect: bool = True
    lease_duration: int = 15
    renew_deadline: int = 10
    retry_period: int = 2
    resource_name: str = "eventsched"
    resource_namespace: str = "kube-system"

    def problems(self) -> list[tuple[str, str]]:
        """(field, what is wrong and how to fix it); empty when usable."""
        found: list[tuple[str, str]] = []
        for name, value in (
            ("leaseDuration", self.lease_duration),
            ("renewDeadline", self.renew_deadline),
            ("retryPeriod", self.retry_period),
        ):
            if not isinstance(value, int) or value < 1:
                found.append((f"leaderElection.{name}", "must be a whole number of seconds >= 1s"))
        if found:
            return found
        if self.lease_duration <= self.renew_deadline:
            found.append(
                (
                    "leaderElection.leaseDuration",
                    "must be greater than leaderElection.renewDeadline",
                )
            )
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            found.append(
                (
                    "leaderElection.renewDeadline",
                    "must be greater than 1.2 x leaderElection.retryPeriod",
                )
            )
        if not self.resource_name:
            found.append(("leaderElection.resourceName", "must name the Lease"))
        if not self.resource_namespace:
            found.append(("leaderElection.resourceNamespace", "must name the Lease's namespace"))
        return found


def default_identity() -> str:
    """hostname_uuid, as kube-scheduler names a candidate."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def lease_client(configuration: ApiConfiguration, settings: LeaseSettings) -> Rest:
    """A client of its own for the Lease, whose requests give up after renewDeadline (as
    kube-scheduler's leader-election client): a hung API server cannot hold a renewal."""
    return Rest(
        configuration,
        pool_size=1,
        connect_timeout=min(REQUEST_TIMEOUT[0], settings.renew_deadline),
        read_timeout=settings.renew_deadline,
    )


def lease_elector(
    configuration: ApiConfiguration,
    settings: LeaseSettings,
    identity: str | None = None,
    on_lost: Callable[[], None] | None = None,
    on_status: Callable[[str, bool], None] | None = None,
    observer: RequestObserver | None = None,
) -> LeaderElector:
    """An elector on the Lease `settings` names, through a client made from `configuration`
    (its requests told to `observer`, the rest_client metrics)."""
    rest = lease_client(configuration, settings)
    rest.observer = observer
    lock = LeaseLock(
        rest, settings.resource_namespace, settings.resource_name, identity or default_identity()
    )
    return LeaderElector(lock, settings, on_lost, on_status)


class LeaderElector:
    """Runs the election on a daemon thread; `leading` and `lost` tell the caller where it stands."""

    def __init__(
        self,
        lock: LeaseLock,
        settings: LeaseSettings,
        on_lost: Callable[[], None] | None = None,
        on_status: Callable[[str, bool], None] | None = None,
    ) -> None:
        """`on_status(lease name, leading)`: told at start (not leading) and whenever
        this candidate starts or stops leading (client-go's leader_election_master_status)."""
        problems = settings.problems()
        if problems:
            raise ValueError("; ".join(f"{field}: {problem}" for field, problem in problems))
        self.settings = settings
        self.identity = lock.identity
        self.leading = threading.Event()
        self.lost = threading.Event()
        self._lock = lock
        self._on_lost = on_lost
        self._on_status = on_status
        self._stop = threading.Event()
        #: The record last seen or written, and when (time.monotonic) it was.
        self._observed = ElectionRecord()
        self._observed_at = 0.0
        #: The record last read from the Lease (client-go's observedRawRecord).
        self._last_read: ElectionRecord | None = None
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)

    @property
    def lease(self) -> str:
        return self._lock.describe()

    def start(self) -> None:
        log.info("attempting to acquire leader lease", lease=self.lease, identity=self.identity)
        self._status(False)
        self._thread.start()

    def wait_leading(self, stop: threading.Event, timeout: float | None = None) -> bool:
        """Block until this candidate leads (True), or `stop` is set or `timeout` seconds
        pass (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not stop.is_set() and (deadline is None or time.monotonic() < deadline):
            if self.leading.wait(0.2):
                return True
        return False

    def release(self) -> None:
        """Stop renewing and, when holding the lease, hand it back at once.

        As client-go's ReleaseOnCancel: holder cleared and a one-second
        duration, written over the Lease this candidate last renewed (so not
        over another holder's), and a standby need not wait out leaseDuration
        after a graceful shutdown.
        """
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(self.settings.renew_deadline)
        if not self.leading.is_set():
            return
        self.leading.clear()
        self._status(False)
        if not self._is_leader():
            return  # another candidate wrote itself into the Lease meanwhile
        if self._thread.is_alive():  # still waiting for the API server
            log.warning("could not release the leader lease; it will expire", lease=self.lease)
            return
        now = rfc3339_micro(datetime.now(UTC))
        released = ElectionRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=now,
            renew_time=now,
            leader_transitions=self._observed.leader_transitions,
        )
        try:
            self._lock.update(released)
        except LeaseError as exc:
            log.warning("could not release the leader lease; it will expire", error=str(exc))
            return
        self._observe(released)
        log.info("released the leader lease", lease=self.lease, identity=self.identity)

    # -- the loop (client-go's Run: acquire, then renew) --------------------------------

    def _run(self) -> None:
        try:
            if not self._acquire():
                return  # released while standing by
            self._started()
            self._keep_renewing()
        except Exception as exc:
            if not self._stop.is_set():
                log.error("leader election failed", error=repr(exc))
        self._stopped()

    def _acquire(self) -> bool:
        """Try until this candidate holds the lease (True) or is released (False)."""
        period = self.settings.retry_period
        while not self._stop.is_set():
            if self._try_acquire_or_renew():
                return True
            self._stop.wait(period + random.uniform(0, JITTER_FACTOR * period))
        return False

    def _keep_renewing(self) -> None:
        """Renew every retryPeriod until a renewal fails for renewDeadline, or released."""
        while self._renewed_in_time() and not self._stop.wait(self.settings.retry_period):
            pass

    def _renewed_in_time(self) -> bool:
        """Try to renew at once and then every retryPeriod; False when renewDeadline passes
        first (an attempt still waiting for the API server then is abandoned) or released."""
        deadline = time.monotonic() + self.settings.renew_deadline
        while not self._stop.is_set():
            attempt = _Attempt(self._try_acquire_or_renew)
            if attempt.wait(deadline - time.monotonic()):
                return True
            left = deadline - time.monotonic()
            if left <= self.settings.retry_period:
                self._stop.wait(max(left, 0.0))
                return False
            self._stop.wait(self.settings.retry_period)
        return False

    def _try_acquire_or_renew(self) -> bool:
        """One attempt (client-go's tryAcquireOrRenew): True when this candidate holds the
        lease afterwards. The leader first renews over the Lease it last wrote, without
        reading it."""
        now = time.monotonic()
        stamp = rfc3339_micro(datetime.now(UTC))
        record = ElectionRecord(
            holder_identity=self.identity,
            lease_duration_seconds=self.settings.lease_duration,
            acquire_time=stamp,
            renew_time=stamp,
        )
        if (
            self._is_leader()
            and self._valid(now)
            and self._write(self._renewal(record, self._observed), optimistic=True)
        ):
            return True
        return self._read_then_write(record, now)

    def _read_then_write(self, record: ElectionRecord, now: float) -> bool:
        """Read the Lease; create it when there is none, else write `record` into it when
        this candidate holds it, its holder is empty or it expired."""
        try:
            current = self._lock.get()
        except LeaseError as exc:
            log.warning(
                "cannot read the leader lease; retrying",
                lease=self.lease,
                status=exc.status,
                error=str(exc),
                retry_seconds=self.settings.retry_period,
            )
            return False
        if current is None:
            return self._create(record)
        if current != self._last_read:
            self._last_read = current
            self._observe(current)
        if current.holder_identity and self._valid(now) and not self._is_leader():
            return False  # held by another candidate, and renewed within its duration
        if self._is_leader():
            record = self._renewal(record, current)
        else:
            record = replace(record, leader_transitions=current.leader_transitions + 1)
        return self._write(record, optimistic=False)

    @staticmethod
    def _renewal(record: ElectionRecord, held: ElectionRecord) -> ElectionRecord:
        """`record` as a renewal of `held`: the same acquire time and transitions."""
        return replace(
            record, acquire_time=held.acquire_time, leader_transitions=held.leader_transitions
        )

    def _create(self, record: ElectionRecord) -> bool:
        try:
            self._lock.create(record)
        except LeaseError as exc:
            log.warning("cannot create the leader lease", lease=self.lease, error=str(exc))
            return False
        self._observe(record)
        return True

    def _write(self, record: ElectionRecord, optimistic: bool) -> bool:
        """Update the Lease with `record`; False on any failure (a conflict: another
        candidate wrote first, tried again next period)."""
        try:
            self._lock.update(record)
        except LeaseError as exc:
            log.warning(
                "cannot update the leader lease" + ("; reading it" if optimistic else ""),
                lease=self.lease,
                status=exc.status,
                error=str(exc),
            )
            return False
        self._observe(record)
        return True

    def _observe(self, record: ElectionRecord) -> None:
        self._observed = record
        self._observed_at = time.monotonic()

    def _valid(self, now: float) -> bool:
        """The record seen last has not gone unchanged for its duration."""
        return self._observed_at + self._observed.lease_duration_seconds > now

    def _is_leader(self) -> bool:
        return self._observed.holder_identity == self.identity

    # -- what the caller is told -------------------------------------------------------

    def _status(self, leading: bool) -> None:
        if self._on_status is not None:
            self._on_status(self.settings.resource_name, leading)

    def _started(self) -> None:
        log.info("successfully acquired lease", lease=self.lease, identity=self.identity)
        self.leading.set()
        self._status(True)

    def _stopped(self) -> None:
        if self.lost.is_set() or self._stop.is_set():
            return
        was_leading = self.leading.is_set()
        self.leading.clear()
        self.lost.set()
        self._status(False)
        log.error(
            "leaderelection lost", lease=self.lease, identity=self.identity, was_leading=was_leading
        )
        if self._on_lost is not None:
            self._on_lost()


class _Attempt:
    """One call on a daemon thread of its own, so that whoever waits for it can give up at
    a deadline while the call still waits for the API server (as client-go's renewal
    context cancels its request)."""

    def __init__(self, call: Callable[[], bool]) -> None:
        self._call = call
        self._done = threading.Event()
        self._result = False
        threading.Thread(target=self._run, name="leader-election-attempt", daemon=True).start()

    def _run(self) -> None:
        try:
            self._result = self._call()
        except Exception as exc:
            log.error("leader election attempt failed", error=repr(exc))
        finally:
            self._done.set()

    def wait(self, timeout: float) -> bool:
        """The call's result, or False when it has not returned within `timeout` seconds."""
        return self._done.wait(max(timeout, 0.0)) and self._result
