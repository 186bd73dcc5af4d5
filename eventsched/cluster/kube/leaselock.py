"""The leader election record in a coordination.k8s.io/v1 Lease, read and written as JSON.

As client-go's `resourcelock.LeaseLock`: `get` reads the Lease and keeps it,
`create` makes it when there is none, and `update` writes a new record into
the spec of the Lease last read or written, with that Lease's resourceVersion,
so a write that another candidate got in before fails with 409 Conflict
instead of overwriting it. Requests go through the same REST client as the
informers' (`rest.py`); none is sent again after it failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eventsched.cluster.kube.rest import Answer, Rest, TransportError, resource_path

#: The Lease's resource path, as `resource_path` takes it.
LEASES = "coordination.k8s.io/v1/leases"

#: Status of a failed request that got no answer at all.
NO_ANSWER = 0
CONFLICT = 409
NOT_FOUND = 404


@dataclass(frozen=True, slots=True)
class ElectionRecord:
    """What a Lease's spec says of its holder (client-go's LeaderElectionRecord).

    The times are kept as the Lease wrote them (MicroTime, RFC 3339 with
    microseconds): an elector only asks whether they changed, never compares
    them with its own clock.
    """

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    leader_transitions: int = 0

    @classmethod
    def from_spec(cls, spec: dict[str, Any] | None) -> ElectionRecord:
        """The record in a Lease's spec; absent fields read as client-go reads them."""
        spec = spec or {}
        return cls(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        """The Lease spec for this record; every field is written, as client-go writes it."""
        return {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": self.acquire_time,
            "renewTime": self.renew_time,
            "leaseTransitions": self.leader_transitions,
        }


class LeaseError(Exception):
    """A Lease request that failed: `status` is the HTTP status, NO_ANSWER when none came."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status

    @property
    def conflict(self) -> bool:
        """Someone else wrote the Lease since it was read (or created it first)."""
        return self.status == CONFLICT


class LeaseLock:
    """One Lease, `namespace/name`, held under `identity`."""

    def __init__(self, rest: Rest, namespace: str, name: str, identity: str) -> None:
        self._rest = rest
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self._path = resource_path(LEASES, namespace, name)
        #: The Lease last read or written: `update` writes over it.
        self._lease: dict[str, Any] | None = None

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    def get(self) -> ElectionRecord | None:
        """The record the Lease holds now; None when there is no Lease."""
        answer = self._send("GET", self._path)
        if answer.status == NOT_FOUND:
            return None
        self._lease = self._answered(answer)
        return ElectionRecord.from_spec(self._lease.get("spec"))

    def create(self, record: ElectionRecord) -> None:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.to_spec(),
        }
        answer = self._send("POST", resource_path(LEASES, self.namespace), body)
        self._lease = self._answered(answer)

    def update(self, record: ElectionRecord) -> None:
        """Write `record` over the Lease last read or written (LeaseError 409 when it
        changed since)."""
        if self._lease is None:
            raise LeaseError(NO_ANSWER, "the Lease was neither read nor created yet")
        body = {**self._lease, "spec": record.to_spec()}
        self._lease = self._answered(self._send("PUT", self._path, body))

    def _send(self, method: str, path: str, body: Any = None) -> Answer:
        try:
            return self._rest.request(method, path, body)
        except TransportError as exc:
            raise LeaseError(NO_ANSWER, f"no answer from the API server: {exc}") from exc

    def _answered(self, answer: Answer) -> dict[str, Any]:
        if not answer.ok or not isinstance(answer.body, dict):
            raise LeaseError(answer.status, answer.message)
        return answer.body
