"""A candidate node's victims as the extender protocol carries them (k8s.io/kube-scheduler
extender/v1 `MetaVictims`): pod UIDs, and how many of them violate a PodDisruptionBudget.

Both directions use it: eventsched serving the preempt verb (framework/servedpreempt.py)
and eventsched calling an extender's preempt verb (framework/preemption/extenders.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class NodeVictims:
    """One candidate node's victims (pod UIDs) and how many of them violate a PDB."""

    node: str
    uids: tuple[str, ...]
    pdb_violations: int

    def to_record(self) -> dict[str, Any]:
        return {"node": self.node, "victims": list(self.uids), "pdbViolations": self.pdb_violations}

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> NodeVictims:
        return cls(str(data["node"]), tuple(data["victims"]), int(data["pdbViolations"]))
