"""PodDisruptionBudgets, as DefaultPreemption reads them (policy/v1, kube-scheduler v1.28).

Preemption prefers victims whose eviction violates no budget
(`filterPodsWithPDBViolation` in `plugins/defaultpreemption`): it reads a
budget's namespace, its selector, `status.disruptionsAllowed` and
`status.disruptedPods` (pods the API server already counted as disrupted).
"""

from __future__ import annotations

from dataclasses import dataclass

from eventsched.model.pod import Pod
from eventsched.model.selectors import LabelSelector

PDB = "PodDisruptionBudget"


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    namespace: str
    name: str
    #: `spec.selector`; None is a nil selector.
    selector: LabelSelector | None = None
    #: `status.disruptionsAllowed`.
    disruptions_allowed: int = 0
    #: Names of the pods in `status.disruptedPods`.
    disrupted_pods: frozenset[str] = frozenset()
    kind: str = PDB

    @property
    def key(self) -> str:
        return f"{PDB}/{self.namespace}/{self.name}"

    def selects(self, pod: Pod) -> bool:
        """Whether preemption counts `pod` against this budget (`filterPodsWithPDBViolation`):
        same namespace, and a selector that is neither nil nor empty matches its labels (a
        pod without labels matches no budget)."""
        if pod.namespace != self.namespace or not pod.labels:
            return False
        selector = self.selector
        if selector is None or selector.nothing or selector.is_everything:
            return False
        return selector.matches(pod.labels)
