"""The first lists of nodes and pods, asked for before the scheduler is imported.

A restarted `eventsched run` at 5,000 nodes and 10,000 pods spent about
0.6 s importing numpy, SQLAlchemy, psycopg and the plugins, and then waited
about 0.6 s for the API server to prepare the 17 MB list of pods. Asked for
first, the list is prepared on the API server's core while this process
imports, and its answer is read and decoded on a thread of its own.

`Prefetch` sends the informers' first requests (the same path, query and
`resourceVersion=0`) as soon as the API client is configured; each informer
takes its answer instead of sending the request again (`take`). The answer
is what the informer's own list would have been a moment later: its watch
starts from the list's resourceVersion either way, so nothing changed since
is missed. A request that failed is not taken: the informer lists as it
always does. This module imports nothing of the scheduler (see
`eventsched._lazy`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import structlog

from eventsched.cluster.kube.informer import FIRST_VERSION
from eventsched.cluster.kube.kubeconfig import ApiConfiguration
from eventsched.cluster.kube.rest import (
    Answer,
    Decode,
    RequestObserver,
    Rest,
    TransportError,
    resource_path,
)
from eventsched.cluster.kube.slim import slim_decoders

log = structlog.get_logger(__name__)

#: kube-scheduler's pod informer leaves out terminal pods.
NON_TERMINAL = "status.phase!=Succeeded,status.phase!=Failed"
#: The query of the pod informer's lists and watches.
POD_QUERY = {"fieldSelector": NON_TERMINAL}

#: Seconds an answer is kept for its informer; an older one is dropped (a standby
#: replica that did not lead at once lists afresh when it does).
KEEP_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class ListRequest:
    """An informer's first list: its path and query (resourceVersion included)."""

    path: str
    query: Mapping[str, str]
    decode: Decode

    def matches(self, path: str, query: Mapping[str, str]) -> bool:
        return self.path == path and dict(self.query) == dict(query)


@dataclass(slots=True)
class _Pending:
    request: ListRequest
    done: threading.Event = field(default_factory=threading.Event)
    answer: Answer | None = None


@dataclass(frozen=True, slots=True)
class _Observation:
    host: str
    method: str
    code: str
    seconds: float | None


class Prefetch:
    """First lists under way, each on a thread of its own, until an informer takes it."""

    def __init__(self, configuration: ApiConfiguration, requests: Sequence[ListRequest]):
        self._rest = Rest(configuration, pool_size=max(1, len(requests)))
        self._observations: list[_Observation] = []
        self._rest.observer = self._observed
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._pending = [_Pending(request) for request in requests]
        for pending in self._pending:
            threading.Thread(
                target=self._send, args=(pending,), name="prefetch", daemon=True
            ).start()

    def _observed(self, host: str, method: str, code: str, seconds: float | None) -> None:
        with self._lock:
            self._observations.append(_Observation(host, method, code, seconds))

    def _send(self, pending: _Pending) -> None:
        request = pending.request
        try:
            pending.answer = self._rest.request(
                "GET", request.path, query=request.query, decode=request.decode
            )
        except TransportError as exc:
            log.info("first list not prefetched", path=request.path, error=str(exc))
        except Exception:  # the informer lists as usual; say why here, once
            log.exception("first list not prefetched", path=request.path)
        finally:
            pending.done.set()

    def take(self, path: str, query: Mapping[str, str]) -> Answer | None:
        """The successful answer to this request when it was prefetched (waiting for it),
        once; None when it was not, failed, or is older than KEEP_SECONDS."""
        with self._lock:
            pending = next((p for p in self._pending if p.request.matches(path, query)), None)
            if pending is None:
                return None
            self._pending.remove(pending)
        pending.done.wait()
        answer, pending.answer = pending.answer, None
        if answer is None or not answer.ok or self.age() > KEEP_SECONDS:
            return None
        return answer

    def age(self) -> float:
        """Seconds since the requests were sent."""
        return time.monotonic() - self._started

    def report(self, observer: RequestObserver | None) -> None:
        """Tell `observer` of the requests sent so far and of those still to come (the
        rest_client metrics count them as the informers' own)."""
        with self._lock:
            seen, self._observations = self._observations, []
            self._rest.observer = observer
        if observer is not None:
            for o in seen:
                observer(o.host, o.method, o.code, o.seconds)

    def discard(self) -> None:
        """Drop every answer not taken (a standby lists afresh when it leads)."""
        with self._lock:
            self._pending.clear()


def first_lists(configuration: ApiConfiguration) -> Prefetch:
    """Nodes and pods, asked for as `KubeCluster`'s informers ask for them first."""
    first = {"resourceVersion": FIRST_VERSION}
    return Prefetch(
        configuration,
        [
            ListRequest(resource_path("nodes"), first, slim_decoders("Node").list),
            ListRequest(resource_path("pods"), {**POD_QUERY, **first}, slim_decoders("Pod").list),
        ],
    )
