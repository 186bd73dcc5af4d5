"""PodDisruptionBudgets, as DefaultPreemption reads them (policy/v1, kube-scheduler v1.28).

Preemption prefers victims whose eviction violates no budget
(`filterPodsWithPDBViolation` in `plugins/defaultpreemption`): it reads a
budget's namespace, its selector, `status.disruptionsAllowed` and
`status.disruptedPods` (pods the API server already counted as disrupted).
kube-scheduler lists every budget of every namespace (`getPodDisruptionBudgets`,
the policy/v1 PDB lister); eventsched observes them like the other kinds
(model/objects.py) and keeps only these fields.

A budget the disruption controller has not handled yet has no status: it
allows no disruption (`disruptionsAllowed` 0), as the API server holds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eventsched.model.errors import ManifestError
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

    def to_record(self) -> dict[str, Any]:
        """What `object_observed` logs: selector None is a nil selector, `{...: []}` an empty one."""
        record: dict[str, Any] = {
            "kind": PDB,
            "namespace": self.namespace,
            "name": self.name,
            "selector": None if self.selector is None else self.selector.to_dict(),
            "disruptionsAllowed": self.disruptions_allowed,
        }
        if self.disrupted_pods:
            record["disruptedPods"] = sorted(self.disrupted_pods)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PodDisruptionBudget:
        namespace, name = str(record["namespace"]), str(record["name"])
        raw = record.get("selector")
        where = f"{PDB} {namespace}/{name}"
        return cls(
            namespace,
            name,
            None if raw is None else LabelSelector.parse(raw, where, "selector"),
            int(record.get("disruptionsAllowed", 0)),
            frozenset(str(p) for p in record.get("disruptedPods", ())),
        )

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> PodDisruptionBudget:
        """A policy/v1 PodDisruptionBudget from the API (or a manifest).

        `status.disruptionsAllowed` is an int32 the API server validates as
        non-negative (`ValidatePodDisruptionBudgetStatusUpdate`); `status.disruptedPods`
        maps pod names to the time the eviction was accepted, of which only the names
        count.
        """
        meta = _section(obj, "metadata", PDB)
        namespace = str(meta.get("namespace") or "default")
        name = str(meta.get("name") or "")
        where = f"{PDB} {namespace}/{name}"
        spec = _section(obj, "spec", where)
        status = _section(obj, "status", where)
        raw = spec.get("selector")
        selector = None if raw is None else LabelSelector.parse(raw, where, "spec.selector")
        allowed = status.get("disruptionsAllowed", 0)
        if isinstance(allowed, bool) or not isinstance(allowed, int) or allowed < 0:
            raise ManifestError(
                where,
                "status.disruptionsAllowed",
                f"must be a non-negative integer (got {allowed!r})",
            )
        disrupted = status.get("disruptedPods") or {}
        if not isinstance(disrupted, Mapping):
            raise ManifestError(
                where, "status.disruptedPods", "must be a map of pod name to deletion time"
            )
        return cls(namespace, name, selector, allowed, frozenset(str(p) for p in disrupted))


def _section(obj: Mapping[str, Any], field: str, where: str) -> Mapping[str, Any]:
    value = obj.get(field)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ManifestError(where, field, f"must be a mapping (got {type(value).__name__})")
    return value
