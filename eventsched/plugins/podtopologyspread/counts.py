"""What PodTopologySpread counts, as arrays over the NodeTable.

- which nodes count for a constraint (`nodeLabelsMatchSpreadConstraints`,
  `matchNodeInclusionPolicies`): boolean columns over every node row;
- how many placed pods each node holds that a selector matches
  (`countPodsMatchSelector`): one `PodTable.matching` and one bincount;
- per topology domain sums: a bincount over the node rows' label codes.

kube-scheduler loops over nodes and, per node, over its pods; here each step
is a handful of numpy operations whatever the cluster's size. Only tainted
nodes are visited one by one (and each distinct taint set once), as
TaintToleration does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eventsched.model import BoolArray, IntArray, NodeTable, Pod
from eventsched.model.nodeaffinity import RequiredAffinity, parse_required
from eventsched.model.selectors import LabelSelector
from eventsched.model.taints import NO_EXECUTE, NO_SCHEDULE, find_untolerated
from eventsched.model.taintsets import group_by_taint_set
from eventsched.plugins.podtopologyspread.constraints import Constraint


def required_affinity(pod: Pod) -> RequiredAffinity:
    """`nodeaffinity.GetRequiredNodeAffinity`, parse errors ignored as upstream ignores them.

    Upstream's lazy selector tries the terms in order and stops, not matching,
    at the first term that does not parse: only the terms before it count.
    (NodeAffinity's own Filter rejects such a pod anyway.)
    """
    try:
        return parse_required(pod.node_selector, pod.affinity)
    except (ValueError, TypeError, AttributeError):
        pass
    terms = _raw_terms(pod.affinity)
    parsed = parse_required(pod.node_selector, _with_terms([]))
    for end in range(1, len(terms) + 1):
        try:
            parsed = parse_required(pod.node_selector, _with_terms(terms[:end]))
        except (ValueError, TypeError, AttributeError):
            break
    return parsed


def _raw_terms(affinity: Mapping[str, Any]) -> list[Any]:
    node_affinity = affinity.get("nodeAffinity")
    required = (
        node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node_affinity, Mapping)
        else None
    )
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    return list(terms) if isinstance(terms, list) else []


def _with_terms(terms: Sequence[Any]) -> dict[str, Any]:
    required = {"nodeSelectorTerms": list(terms)}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}


@dataclass
class NodeMasks:
    """The node columns a cycle's constraints share, each computed on first use."""

    pod: Pod
    table: NodeTable
    _affinity: BoolArray | None = None
    _tolerated: BoolArray | None = None
    _matching: dict[LabelSelector, IntArray] = field(default_factory=dict)

    def has_keys(self, constraints: Sequence[Constraint]) -> BoolArray:
        """Nodes carrying every constraint's topology key (`nodeLabelsMatchSpreadConstraints`)."""
        out = np.ones(len(self.table), dtype=bool)
        for key in {c.topology_key for c in constraints}:
            out &= self.table.label_codes(key)[1] >= 0
        return out

    def included(self, constraint: Constraint) -> BoolArray:
        """`matchNodeInclusionPolicies`: the nodes whose pods count for this constraint."""
        out = np.ones(len(self.table), dtype=bool)
        if constraint.honor_affinity:
            out &= self.affinity()
        if constraint.honor_taints:
            out &= self.tolerated()
        return out

    def affinity(self) -> BoolArray:
        """Nodes matching the pod's nodeSelector and required node affinity."""
        if self._affinity is None:
            rows = np.arange(len(self.table))
            self._affinity = required_affinity(self.pod).matches(self.table, rows)
        return self._affinity

    def tolerated(self) -> BoolArray:
        """Nodes without a NoSchedule/NoExecute taint the pod does not tolerate."""
        if self._tolerated is None:
            out = np.ones(len(self.table), dtype=bool)
            groups = group_by_taint_set(self.table)
            tolerations = self.pod.tolerations
            groups.spread(
                [
                    find_untolerated(taints, tolerations, (NO_SCHEDULE, NO_EXECUTE)) is None
                    for taints in groups.sets
                ],
                out,
            )
            self._tolerated = out
        return self._tolerated

    def matching(self, constraint: Constraint) -> IntArray:
        """Per node row: placed pods of the pod's namespace the selector matches, not terminating."""
        selector = constraint.selector
        counts = self._matching.get(selector)
        if counts is None:
            counts = self._matching[selector] = matching_per_node(
                self.table, selector, self.pod.namespace
            )
        return counts


def matching_per_node(table: NodeTable, selector: LabelSelector, namespace: str) -> IntArray:
    """`countPodsMatchSelector` for every node at once.

    v1.28 counts nothing for an empty selector (`selector.Empty()`), and
    skips terminating pods and pods of other namespaces.
    """
    if selector.is_everything or selector.nothing:
        return np.zeros(len(table), dtype=np.int64)
    placed = table.placed
    mask = placed.matching(selector, frozenset({namespace}))
    mask &= ~placed.deleting
    return placed.count_per_node(mask, len(table))


@dataclass(frozen=True, slots=True)
class DomainSums:
    """Per topology domain (label code): matching pods, and whether any node counted."""

    counts: IntArray
    present: BoolArray

    @property
    def domains(self) -> int:
        return int(self.present.sum())


def domain_sums(
    domain: IntArray, included: BoolArray, per_node: IntArray, num_domains: int
) -> DomainSums:
    """Sum `per_node` over the included nodes of each domain (codes < 0 are left out)."""
    chosen = included & (domain >= 0)
    codes = domain[chosen]
    present = np.bincount(codes, minlength=num_domains) > 0
    counts = np.bincount(codes, weights=per_node[chosen], minlength=num_domains)
    return DomainSums(counts.astype(np.int64), present)
