"""The hash chain over appended batches: how replay proves history was not edited.

Each batch's hash is `sha256(prev_hash + canonical JSON of its events)`,
where an event is a JSON object of every column (position, recorded_at as
ISO 8601 in UTC, data normalized as in `canonical`). Editing, removing or
reordering any stored event changes its batch's hash, and every later
batch's `prev_hash` pins the one before it. Only the tail can be cut off
unnoticed, which is why `ChainReport.last_hash` is worth writing down
somewhere else.

This module is pure (no database), so the store's append path and its
verification share one definition of the hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from json.encoder import encode_basestring_ascii

from eventsched.events.canonical import canonical_json
from eventsched.events.record import StoredEvent

#: The `prev_hash` of the first batch.
GENESIS = ""


def _quote(value: str | None) -> str:
    """JSON for a text column: what json.dumps gives, without its per-call overhead."""
    return "null" if value is None else encode_basestring_ascii(value)


@dataclass(slots=True)
class EventJSON:
    """An event's canonical JSON around the two values only known under the append lock.

    Keys sort as ..., "plugin", "position", "recorded_at", "scheduler", ...
    so everything but position and time can be built before the lock is taken.
    One is made for each event appended: read-only, but not frozen (see EventRecord).
    """

    prefix: str
    suffix: str

    def render(self, position: int, recorded_at_iso: str) -> str:
        return f'{self.prefix}{position},"recorded_at":{_quote(recorded_at_iso)}{self.suffix}'


def event_json_parts(
    *,
    kind: str,
    scheduler: str,
    instance: str,
    attempt: str | None,
    uid: str | None,
    namespace: str | None,
    name: str | None,
    node: str | None,
    plugin: str | None,
    data_json: str,
) -> EventJSON:
    """The canonical JSON of one event, given its data already in canonical form.

    Spelled out key by key in sorted order; the rendered result is exactly
    `json.dumps(event, sort_keys=True, separators=(",", ":"))` of the
    normalized event (a test checks it), so anyone can re-verify the chain
    with a plain JSON library.
    """
    return EventJSON(
        f'{{"attempt":{_quote(attempt)},"data":{data_json},"instance":{_quote(instance)},'
        f'"kind":{_quote(kind)},"name":{_quote(name)},"namespace":{_quote(namespace)},'
        f'"node":{_quote(node)},"plugin":{_quote(plugin)},"position":',
        f',"scheduler":{_quote(scheduler)},"uid":{_quote(uid)}}}',
    )


def iso(recorded_at: datetime) -> str:
    """How `recorded_at` is spelled in the hash: ISO 8601 in UTC."""
    return recorded_at.astimezone(UTC).isoformat()


def stored_event_json(event: StoredEvent) -> str:
    parts = event_json_parts(
        kind=event.kind,
        scheduler=event.scheduler,
        instance=event.instance,
        attempt=event.attempt,
        uid=event.uid,
        namespace=event.namespace,
        name=event.name,
        node=event.node,
        plugin=event.plugin,
        data_json=canonical_json(event.data),
    )
    return parts.render(event.position, iso(event.recorded_at))


def batch_hash(prev_hash: str, event_jsons: Iterable[str]) -> str:
    """sha256 hex of the previous hash followed by the JSON list of the batch's events."""
    body = "[" + ",".join(event_jsons) + "]"
    return hashlib.sha256((prev_hash + body).encode()).hexdigest()


class _BatchDigest:
    """`batch_hash`, fed one event at a time: verifying a batch of tens of thousands of
    events (a first list of a large cluster) never holds all their JSON at once."""

    def __init__(self, prev_hash: str) -> None:
        self._sha = hashlib.sha256(prev_hash.encode() + b"[")
        self._empty = True

    def add(self, event_json: str) -> None:
        if not self._empty:
            self._sha.update(b",")
        self._sha.update(event_json.encode())
        self._empty = False

    def hexdigest(self) -> str:
        done = self._sha.copy()
        done.update(b"]")
        return done.hexdigest()


@dataclass(frozen=True, slots=True)
class BatchRow:
    batch: int
    first_position: int
    last_position: int
    prev_hash: str
    hash: str


@dataclass(frozen=True, slots=True)
class ChainPoint:
    """Where a verification stands: the last batch checked, its last position, its hash
    (batch 0, position 0 and GENESIS before the first batch)."""

    batch: int = 0
    position: int = 0
    hash: str = GENESIS


@dataclass(frozen=True, slots=True)
class ChainReport:
    """What `verify_chain` found. `first_broken_batch` is the earliest batch that does not verify."""

    ok: bool
    batches: int
    first_broken_batch: int | None
    detail: str
    #: Hash of the last batch checked; compare with a copy kept elsewhere to detect a cut tail.
    last_hash: str = GENESIS
    events: int = 0


def verify(
    batches: Iterable[BatchRow],
    events: Iterable[StoredEvent],
    start: tuple[int, int, str] = (0, 0, GENESIS),
) -> ChainReport:
    """Walk batches and events (both in order) together and recompute every hash.

    `start` is (batch, last position, hash) of what precedes the first
    stored batch: nothing for a whole log, the anchor of a pruned one.
    """
    event_iter: Iterator[StoredEvent] = iter(events)
    pending: StoredEvent | None = next(event_iter, None)
    start_batch, start_position, prev_hash = start
    expected_batch = start_batch + 1
    expected_position = start_position + 1
    count = 0
    checked = 0

    def broken(batch: int, detail: str) -> ChainReport:
        return ChainReport(False, checked, batch, detail, prev_hash, count)

    for row in batches:
        if row.batch != expected_batch:
            return broken(
                expected_batch, f"batch {expected_batch} is missing (next stored is {row.batch})"
            )
        if row.first_position != expected_position or row.last_position < row.first_position:
            return broken(
                row.batch,
                f"batch {row.batch} covers positions {row.first_position}..{row.last_position}, "
                f"expected to start at {expected_position}",
            )
        if row.prev_hash != prev_hash:
            return broken(
                row.batch,
                f"batch {row.batch}'s prev_hash does not match batch {row.batch - 1}'s hash",
            )
        hashed = _BatchDigest(prev_hash)
        for position in range(row.first_position, row.last_position + 1):
            if pending is None or pending.position != position:
                found = "none" if pending is None else str(pending.position)
                return broken(
                    row.batch, f"event {position} of batch {row.batch} is missing (found {found})"
                )
            hashed.add(stored_event_json(pending))
            pending = next(event_iter, None)
        if hashed.hexdigest() != row.hash:
            return broken(
                row.batch,
                f"batch {row.batch} (positions {row.first_position}..{row.last_position}) "
                "does not match its hash: an event in it was changed",
            )
        prev_hash = row.hash
        count += row.last_position - row.first_position + 1
        checked += 1
        expected_batch += 1
        expected_position = row.last_position + 1
    if pending is not None:
        return broken(
            expected_batch,
            f"event {pending.position} and later are not covered by any batch",
        )
    return ChainReport(
        True,
        checked,
        None,
        f"{checked} batches, {count} events: every hash verifies",
        prev_hash,
        count,
    )
