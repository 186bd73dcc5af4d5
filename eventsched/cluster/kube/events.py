"""Events written as client-go's events.k8s.io/v1 broadcaster writes them for kube-scheduler.

What the broadcaster does (k8s.io/client-go/tools/events), and so this:

- Recording never blocks the caller: events go to a queue of at most 1,000
  and are dropped (and counted) when it is full.
- Two events are isomorphic when action, reason, reportingController and
  the regarding object are equal (the note is not compared). The first is
  created; the second turns it into a series (`series.count` 1) written by a
  strategic merge patch; later ones only count, in memory.
- Every 6 minutes a series not seen for 6 minutes is written with its final
  count and forgotten (a single event is forgotten); every 30 minutes every
  open series is written again. A patch that finds its event gone creates it.
- A transport error is retried up to 12 times, 10 seconds apart (jittered);
  an API error (the server refused the event) is not retried.

kube-scheduler gives events a client of their own, so they have their own
rate limit and never queue in front of a Binding; here too.
"""

from __future__ import annotations

import queue
import random
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import structlog

from eventsched.cluster.kube.ratelimit import TokenBucket
from eventsched.cluster.kube.rest import STRATEGIC_MERGE, Rest, TransportError, resource_path

log = structlog.get_logger(__name__)

MAX_QUEUED_EVENTS = 1000
MAX_TRIES_PER_EVENT = 12
RETRY_SLEEP = 10.0
FINISH_TIME = 6 * 60.0
REFRESH_TIME = 30 * 60.0
EVENTS = "events.k8s.io/v1/events"


def rfc3339_micro(now: datetime) -> str:
    """MicroTime as the API serializes it."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(slots=True)
class _Cached:
    """An event as last written (or about to be), with its series in memory."""

    body: dict[str, Any]
    count: int = 0  #: 0 while it is a single event
    last_observed: datetime = field(default_factory=lambda: datetime.now(UTC))


class EventBroadcaster:
    """Queues events and writes them from `workers` threads, rate limited by `limiter`."""

    def __init__(
        self, rest: Rest, limiter: TokenBucket, workers: int = 4, retry_sleep: float = RETRY_SLEEP
    ) -> None:
        self._rest = rest
        self._limiter = limiter
        self._retry_sleep = retry_sleep
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(MAX_QUEUED_EVENTS)
        self._cache: dict[tuple[Any, ...], _Cached] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.dropped = 0
        self.failures = 0
        self._workers = [
            threading.Thread(target=self._work, name=f"kube-events-{i}", daemon=True)
            for i in range(workers)
        ]
        self._timer = threading.Thread(
            target=self._housekeep, name="kube-events-series", daemon=True
        )
        for worker in self._workers:
            worker.start()
        self._timer.start()

    def record(self, body: dict[str, Any]) -> None:
        """Queue one event (an events.k8s.io/v1 Event body); never blocks."""
        try:
            self._queue.put_nowait(body)
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 100 == 0:
                log.warning("event queue full; dropping events", dropped=self.dropped)

    def stop(self, timeout: float = 10.0) -> None:
        """Write what is queued (bounded by `timeout`), then stop the workers."""
        for _ in self._workers:
            try:
                self._queue.put(None, timeout=timeout)
            except queue.Full:
                break
        for worker in self._workers:
            worker.join(timeout)
        self._stopping.set()

    def abandon(self) -> None:
        """Stop without writing what is queued (the lease is lost): a retry in progress
        gives up at once, a request in flight ends on its daemon thread."""
        self._stopping.set()
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        for _ in self._workers:
            try:
                self._queue.put_nowait(None)
            except queue.Full:
                break

    # -- the workers ------------------------------------------------------------

    def _work(self) -> None:
        while True:
            body = self._queue.get()
            if body is None:
                return
            to_write = self._observe(body)
            if to_write is not None:
                self._write(to_write)

    def _observe(self, body: dict[str, Any]) -> _Cached | None:
        """What to write for this occurrence: the event, its new series, or nothing."""
        key = _key(body)
        with self._lock:
            cached = self._cache.get(key)
            if cached is None:
                cached = self._cache[key] = _Cached(body)
                return cached
            cached.last_observed = datetime.now(UTC)
            cached.count += 1
            return cached if cached.count == 1 else None

    def _write(self, cached: _Cached) -> None:
        for attempt in range(MAX_TRIES_PER_EVENT):
            try:
                self._send(cached)
                return
            except TransportError as exc:
                if attempt == 0:
                    log.warning("could not write an event; retrying", error=str(exc))
                if self._stopping.wait(self._retry_sleep * random.uniform(1.0, 1.25)):
                    break
        self.failures += 1
        log.error("event not written (retry limit or shutdown)", reason=cached.body.get("reason"))

    def _send(self, cached: _Cached) -> None:
        with self._lock:
            body, count, last = cached.body, cached.count, cached.last_observed
        namespace = body["metadata"]["namespace"]
        self._limiter.acquire()
        if count:
            series = {"series": {"count": count, "lastObservedTime": rfc3339_micro(last)}}
            path = resource_path(EVENTS, namespace, body["metadata"]["name"])
            answer = self._rest.request("PATCH", path, series, content_type=STRATEGIC_MERGE)
            if answer.status != 404:
                self._refused(answer.status, answer.message, body)
                return
            body = {**body, **series}
            self._limiter.acquire()
        answer = self._rest.request("POST", resource_path(EVENTS, namespace), body)
        self._refused(answer.status, answer.message, body)

    def _refused(self, status: int, message: str, body: dict[str, Any]) -> None:
        if 200 <= status < 300 or status == 409:  # 409: AlreadyExists, written before
            return
        self.failures += 1
        log.warning(
            "the server refused an event (not retried)",
            reason=body.get("reason"),
            pod=f"{body['regarding'].get('namespace')}/{body['regarding'].get('name')}",
            status=status,
            error=message,
        )

    # -- series over time -------------------------------------------------------

    def _housekeep(self) -> None:
        waited = 0.0
        while not self._stopping.wait(FINISH_TIME):
            waited += FINISH_TIME
            self._finish_series()
            if waited >= REFRESH_TIME:
                waited = 0.0
                self._refresh_series()

    def _finish_series(self) -> None:
        cutoff = datetime.now(UTC).timestamp() - FINISH_TIME
        with self._lock:
            ended = {k: c for k, c in self._cache.items() if c.last_observed.timestamp() < cutoff}
            for key in ended:
                del self._cache[key]
        for cached in ended.values():
            if cached.count:
                self._write(cached)

    def _refresh_series(self) -> None:
        with self._lock:
            series = [c for c in self._cache.values() if c.count]
        for cached in series:
            self._write(cached)


def _key(body: dict[str, Any]) -> tuple[Any, ...]:
    regarding = body.get("regarding") or {}
    return (
        body.get("action"),
        body.get("reason"),
        body.get("reportingController"),
        tuple(sorted(regarding.items())),
        tuple(sorted((body.get("related") or {}).items())),
    )
