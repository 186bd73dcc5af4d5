"""The pods a shadowed scheduler preempted, by node, seen before its preemptor's nomination.

kube-scheduler's preemption marks each victim (DisruptionTarget, reason
PreemptionByScheduler) and deletes it, then writes the preemptor's nomination: the watch
shows the victims first. They are kept by node until the nomination on that node is
decided, so the verdict names them. A victim whose deletion is immediate (grace period 0,
or never running) would leave the view before the preemptor is decided: such deletions
are held back (not folded) until then too, or for at most `hold` seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from eventsched.model import Pod
from eventsched.model.changes import ClusterChange

#: The reason kube-scheduler gives a victim's DisruptionTarget condition.
PREEMPTED_BY_SCHEDULER = "PreemptionByScheduler"


@dataclass(slots=True)
class _Node:
    """One node's victims since its last nomination, and the deletions held."""

    since: float
    victims: dict[str, Pod] = field(default_factory=dict)
    deletions: list[ClusterChange] = field(default_factory=list)


class Victims:
    """Preemption victims seen, by node."""

    def __init__(self, hold: float) -> None:
        self.hold = hold
        self._nodes: dict[str, _Node] = {}

    def seen(self, change: ClusterChange, node: str | None, now: float) -> bool:
        """Note a pod change: a victim marked or deleted on `node` (where the view has it).
        True when the change is a deletion held back (to be folded by `release`)."""
        pod = change.obj
        if not isinstance(pod, Pod) or pod.disruption_target != PREEMPTED_BY_SCHEDULER:
            return False
        if node is None:
            return False
        held = self._nodes.setdefault(node, _Node(now))
        held.victims[pod.uid] = pod
        if change.type == "DELETED":
            held.deletions.append(change)
            return True
        return False

    def on(self, node: str) -> list[Pod]:
        """The victims seen on `node` since its last nomination."""
        held = self._nodes.get(node)
        return [] if held is None else list(held.victims.values())

    def release(self, node: str) -> list[ClusterChange]:
        """The nomination on `node` is decided: its deletions held, to fold now."""
        held = self._nodes.pop(node, None)
        return [] if held is None else held.deletions

    def expired(self, now: float) -> list[ClusterChange]:
        """The deletions held longer than `hold` (no nomination came), to fold now."""
        late = [node for node, held in self._nodes.items() if now - held.since >= self.hold]
        return [change for node in late for change in self.release(node)]

    def all(self) -> list[ClusterChange]:
        return [change for node in list(self._nodes) for change in self.release(node)]
