"""Which pods to evict from one node (v1.28 `SelectVictimsOnNode`, default_preemption.go).

Given the preemptor, the pods on the node, the PodDisruptionBudgets and a
`FitsWithout` callback (the preemptor's filter status on the node with some of
its pods removed: upstream's `RunFilterPluginsWithNominatedPods` over a NodeInfo
copy), `select_victims_on_node` removes every lower-priority pod; if the
preemptor then fits, it adds them back one by one (PDB-violating ones first,
each group most important first, `util.MoreImportantPod`) and keeps as victims
those without which the preemptor no longer fits.

Upstream sorts with `sort.Slice`, which is not stable: pods of equal priority
and equal (or missing) start time come out in an unspecified order. Here the
sort is stable, so such pods keep the order they were given in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Protocol

from eventsched.framework.status import Code, Status
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.model.pod import Pod

#: `util.GetPodStartTime` of a pod without `status.startTime` is `time.Now()`: later
#: than any recorded start. All such pods get this one value here.
NOT_STARTED_NS = 2**63 - 1
NO_VICTIMS = "No preemption victims found for incoming pod"


class FitsWithout(Protocol):
    """The preemptor's filter status on the node once `removed` are taken off it."""

    def __call__(self, removed: Sequence[Pod]) -> Status: ...


@dataclass(frozen=True, slots=True)
class VictimSelection:
    """`SelectVictimsOnNode`'s result: victims in the order found, how many violate a
    PDB, and the status (success, or why this node cannot host the preemptor)."""

    victims: tuple[Pod, ...]
    num_pdb_violations: int
    status: Status

    @property
    def is_success(self) -> bool:
        return self.status.is_success


#: A node without a pod of lower priority than the preemptor's.
NO_LOWER_PRIORITY_PODS = VictimSelection(
    (), 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NO_VICTIMS,))
)


def start_time_ns(pod: Pod) -> int:
    """`status.startTime` in Unix nanoseconds; NOT_STARTED_NS when it is unset or unreadable."""
    text = pod.start_time
    if not text:
        return NOT_STARTED_NS
    try:
        return _rfc3339_ns(text)
    except ValueError:
        return NOT_STARTED_NS


@lru_cache(maxsize=1 << 16)
def _rfc3339_ns(text: str) -> int:
    """RFC 3339 with up to nanosecond fractions (metav1.Time / MicroTime) to Unix ns
    (kept per text: pods started in the same second share one, and the dry run asks
    again for every pod it orders)."""
    head, frac, zone = text, "", ""
    for sep in ("Z", "z", "+"):
        if sep in text[10:]:
            i = text.index(sep, 10)
            head, zone = text[:i], text[i:]
            break
    else:
        i = text.rfind("-")
        if i > 10:
            head, zone = text[:i], text[i:]
    if "." in head:
        head, frac = head.split(".", 1)
        if not frac.isdigit() or len(frac) > 9:
            raise ValueError(text)
    zone = "+00:00" if zone in ("Z", "z") else zone
    seconds = datetime.fromisoformat(head + zone).timestamp()
    return int(seconds) * 1_000_000_000 + int(frac.ljust(9, "0") or 0)


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """`util.MoreImportantPod`: higher priority; at equal priority, the earlier start."""
    if pod1.priority != pod2.priority:
        return pod1.priority > pod2.priority
    return start_time_ns(pod1) < start_time_ns(pod2)


def importance_order(pods: Sequence[Pod]) -> list[Pod]:
    """`pods` most important first (stable, see the module docstring)."""
    return sorted(pods, key=lambda p: (-p.priority, start_time_ns(p)))


def filter_pods_with_pdb_violation(
    pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[Pod], list[Pod]]:
    """`filterPodsWithPDBViolation`: (violating, non-violating), each in the given order.

    Each budget starts at its `disruptionsAllowed`; a pod it selects and that is not in
    its `disruptedPods` (already counted by the API server) takes one off it, and the pod
    violates when some budget it takes from goes below zero.
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for pod in pods:
        violated = False
        for i, pdb in enumerate(pdbs):
            if not pdb.selects(pod) or pod.name in pdb.disrupted_pods:
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


def select_victims_on_node(
    preemptor: Pod,
    node_pods: Sequence[Pod],
    pdbs: Sequence[PodDisruptionBudget],
    fits: FitsWithout,
) -> VictimSelection:
    """`SelectVictimsOnNode`: the fewest pods to remove so the preemptor fits, PDBs spared first."""
    potential = [p for p in node_pods if p.priority < preemptor.priority]
    if not potential:
        return NO_LOWER_PRIORITY_PODS
    removed = list(potential)
    status = fits(tuple(removed))
    if not status.is_success:
        return VictimSelection((), 0, status)
    violating, non_violating = filter_pods_with_pdb_violation(importance_order(potential), pdbs)
    victims: list[Pod] = []
    num_violating = 0
    for group, counts in ((violating, True), (non_violating, False)):
        for pod in group:
            removed = [r for r in removed if r is not pod]
            if fits(tuple(removed)).is_success:
                continue
            removed.append(pod)
            victims.append(pod)
            num_violating += counts
    return VictimSelection(tuple(victims), num_violating, Status())
