"""Leader election on a coordination.k8s.io Lease, with the client's `leaderelection`.

Only the leader schedules. The library notices a lost lease after
renewDeadline without a successful renewal and then calls back; like
kube-scheduler, whoever runs us stops scheduling at that moment, and a new
leader starts from the log and fresh informers.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
from kubernetes import client
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock
from urllib3.exceptions import HTTPError

from eventsched.cluster.kube.connection import REQUEST_TIMEOUT

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class LeaseSettings:
    """kube-scheduler's `leaderElection` block; durations in whole seconds.

    The client library stores durations as integers in the Lease, so
    fractions are refused up front rather than failing at the first renewal.
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
        if self.renew_deadline <= 1.2 * self.retry_period:
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


class _TimedCoordinationApi(client.CoordinationV1Api):
    """Lease calls with a request timeout, so a hung API server cannot stall renewals."""

    def read_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("_request_timeout", REQUEST_TIMEOUT)
        return super().read_namespaced_lease(*args, **kwargs)

    def create_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("_request_timeout", REQUEST_TIMEOUT)
        return super().create_namespaced_lease(*args, **kwargs)

    def replace_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("_request_timeout", REQUEST_TIMEOUT)
        return super().replace_namespaced_lease(*args, **kwargs)


@dataclass(frozen=True, slots=True)
class _Unreachable:
    """What `get` answers when the API server cannot be reached.

    The library retries on its next period for any answer but a 404 (it
    reads `body` and `reason`); `None` made it raise AttributeError and end
    the election, so an API server down at start stopped eventsched.
    """

    reason: str
    body: str = '{"code": 503}'


class _ReleasableLeaseLock(LeaseLock):
    """A LeaseLock that can be told to stop: the library then fails its next renewal.

    The client's LeaderElection has no cancel; without this a stopped
    scheduler's thread would keep renewing a lease it no longer uses.
    """

    released = False
    retry_period = 2

    def get(self, name: str, namespace: str) -> tuple[bool, Any]:
        if self.released:
            return False, None
        try:
            return super().get(name, namespace)
        except (HTTPError, OSError) as exc:  # unreachable API: retry next period
            log.warning(
                "cannot read the leader lease; retrying",
                error=str(exc),
                retry_seconds=self.retry_period,
            )
            return False, _Unreachable(str(exc))

    def create(self, name: str, namespace: str, election_record: Any) -> bool:
        if self.released:
            return False
        try:
            return bool(super().create(name, namespace, election_record))
        except (HTTPError, OSError) as exc:
            log.warning("cannot create the leader lease", error=str(exc))
            return False

    def update(self, name: str, namespace: str, updated_record: Any) -> bool:
        if self.released:
            return False
        try:
            return bool(super().update(name, namespace, updated_record))
        except (HTTPError, OSError) as exc:
            log.warning("cannot renew the leader lease", error=str(exc))
            return False


def default_identity() -> str:
    """hostname_uuid, as kube-scheduler names a candidate."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    """Runs the election on a daemon thread; `leading` and `lost` tell the caller where it stands."""

    def __init__(
        self,
        api: client.ApiClient,
        settings: LeaseSettings,
        identity: str | None = None,
        on_lost: Callable[[], None] | None = None,
        on_status: Callable[[str, bool], None] | None = None,
    ) -> None:
        """`on_status(lease name, leading)`: told at start (not leading) and whenever
        this candidate starts or stops leading (client-go's leader_election_master_status)."""
        problems = settings.problems()
        if problems:
            raise ValueError("; ".join(f"{field}: {problem}" for field, problem in problems))
        self.settings = settings
        self.identity = identity or default_identity()
        self.leading = threading.Event()
        self.lost = threading.Event()
        self._on_lost = on_lost
        self._on_status = on_status
        lock = _ReleasableLeaseLock(
            settings.resource_name, settings.resource_namespace, self.identity
        )
        lock.api_instance = _TimedCoordinationApi(api)
        lock.retry_period = settings.retry_period
        self._lock = lock
        self._config = electionconfig.Config(
            lock=lock,
            lease_duration=settings.lease_duration,
            renew_deadline=settings.renew_deadline,
            retry_period=settings.retry_period,
            onstarted_leading=self._started,
            onstopped_leading=self._stopped,
        )
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)
        # The library logs through `logging`; keep its per-retry chatter out of our logs.
        logging.getLogger("leaderelection").setLevel(logging.WARNING)

    @property
    def lease(self) -> str:
        return f"{self.settings.resource_namespace}/{self.settings.resource_name}"

    def start(self) -> None:
        log.info("attempting to acquire leader lease", lease=self.lease, identity=self.identity)
        self._status(False)
        self._thread.start()

    def _status(self, leading: bool) -> None:
        if self._on_status is not None:
            self._on_status(self.settings.resource_name, leading)

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
        duration, so a standby need not wait out leaseDuration after a
        graceful shutdown.
        """
        lock = self._lock
        lock.released = True
        if not self.leading.is_set():
            return
        self.leading.clear()
        self._status(False)
        try:
            lease = lock.api_instance.read_namespaced_lease(lock.name, lock.namespace)
            if lease.spec is None or lease.spec.holder_identity != self.identity:
                return
            lease.spec.holder_identity = ""
            lease.spec.lease_duration_seconds = 1
            lock.api_instance.replace_namespaced_lease(lock.name, lock.namespace, lease)
            log.info("released the leader lease", identity=self.identity)
        except Exception as exc:
            log.warning("could not release the leader lease; it will expire", error=str(exc))

    def _run(self) -> None:
        try:
            leaderelection.LeaderElection(self._config).run()
        except Exception as exc:
            if not self._lock.released:
                log.error("leader election failed", error=repr(exc))
            self._stopped()

    def _started(self) -> None:
        log.info("successfully acquired lease", lease=self.lease, identity=self.identity)
        self.leading.set()
        self._status(True)

    def _stopped(self) -> None:
        if self.lost.is_set() or self._lock.released:
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
