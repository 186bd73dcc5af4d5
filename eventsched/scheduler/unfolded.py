"""First placements made by events appended after the projections were folded.

The log puts a binding cycle's `bound` before any attempt decided after it
was handed to the loop, and replay folds the log in that order. The live
scheduler folds a batch into its projections only once the batch is durable,
so an attempt decided while a `bound` waits in the pending batch (or is
being appended) would not see it, and StickyNode would place a pod that
shares the identity elsewhere than replay does. This overlay holds what
those events do to the first placements, by the same `placement_change` the
projections fold, until their batch is folded.
"""

from __future__ import annotations

from collections.abc import Callable

from eventsched.events import EventRecord, placement_change


class UnfoldedPlacements:
    def __init__(self, folded: Callable[[str], str | None]) -> None:
        self._folded = folded
        #: identity -> (node or None when forgotten, the batch that last changed it)
        self._changes: dict[str, tuple[str | None, int]] = {}
        #: Sequence number of the batch that records are being added to.
        self.batch = 0

    def first_node(self, identity: str) -> str | None:
        """The identity's first node as the log will say once every pending event is folded."""
        change = self._changes.get(identity)
        if change is not None:
            return change[0]
        return self._folded(identity)

    #: The kinds that can change a first placement.
    KINDS = frozenset(("bound", "pod_observed", "maintenance"))

    def note(self, record: EventRecord) -> None:
        """A record was added to the pending batch."""
        if record.kind not in self.KINDS:
            return
        change = placement_change(record.kind, record.data, record.node, record.pod_key)
        if change is None:
            return
        if not change.first_only or self.first_node(change.identity) is None:
            self._changes[change.identity] = (change.node, self.batch)

    def new_batch(self) -> int:
        """Records from now on belong to the next batch; returns its number."""
        self.batch += 1
        return self.batch

    def folded(self, batch: int) -> None:
        """Batches up to `batch` are in the projections: their changes are read there now."""
        stale = [k for k, (_, last) in self._changes.items() if last <= batch]
        for identity in stale:
            del self._changes[identity]
