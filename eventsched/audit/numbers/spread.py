"""PodTopologySpread's rejections in numbers: the skew the pod would make, per domain.

For each DoNotSchedule constraint: the pods in the pod's namespace its selector
matches, counted per domain (the value of `topologyKey`) over the nodes that
pass the pod's nodeSelector and required node affinity (nodeAffinityPolicy
Honor, the default) and carry the key; the skew placing the pod in a rejected
node's domain would make (that domain's count + 1 - the smallest count) against
`maxSkew`. matchLabelKeys, minDomains and nodeTaintsPolicy are not reflected.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from eventsched.audit.numbers.figure import Figure
from eventsched.model import ManifestError, NodeTable, Pod
from eventsched.model.nodeaffinity import parse_required
from eventsched.model.selectors import LabelSelector

PLUGIN = "PodTopologySpread"


def spread_figures(pod: Pod, table: NodeTable, nodes: Sequence[str], limit: int) -> list[Figure]:
    figures: list[Figure] = []
    eligible = _eligible_rows(pod, table)
    for constraint in pod.topology_spread:
        if constraint.get("whenUnsatisfiable", "DoNotSchedule") != "DoNotSchedule":
            continue
        figures.extend(_constraint_figures(pod, table, eligible, constraint, nodes, limit))
    return figures


def _eligible_rows(pod: Pod, table: NodeTable) -> list[int]:
    rows = np.arange(len(table))
    try:
        required = parse_required(pod.node_selector, pod.affinity)
    except ManifestError:
        return list(rows)
    return [int(r) for r in rows[required.matches(table, rows)]]


def _constraint_figures(
    pod: Pod,
    table: NodeTable,
    eligible: Sequence[int],
    constraint: Mapping[str, Any],
    nodes: Sequence[str],
    limit: int,
) -> list[Figure]:
    key = str(constraint.get("topologyKey", ""))
    max_skew = int(constraint.get("maxSkew", 1))
    try:
        selector = LabelSelector.parse(constraint.get("labelSelector"), "pod", "labelSelector")
    except ManifestError:
        return []
    counts: Counter[str] = Counter()
    for row in eligible:
        domain = table.node(row).labels.get(key)
        if domain is None:
            continue
        counts[domain] += sum(
            1
            for p in table.pods[row].values()
            if p.namespace == pod.namespace and selector.matches(p.labels)
        )
    if not counts:
        return []
    smallest = min(counts.values())
    shown = ", ".join(f"{d}: {c}" for d, c in sorted(counts.items()))
    figures = [
        Figure(
            PLUGIN,
            f"{key}: matching pods per domain {shown}; maxSkew {max_skew}",
            "",
            {"topologyKey": key, "maxSkew": max_skew, "counts": dict(counts)},
        )
    ]
    for name in nodes[:limit]:
        found = table.row_of(name)
        domain = table.node(found).labels.get(key) if found is not None else None
        if domain is None:
            figures.append(Figure(PLUGIN, f"node {name} has no label {key}", name))
            continue
        skew = counts.get(domain, 0) + 1 - smallest
        figures.append(
            Figure(
                PLUGIN,
                f"node {name} ({key}={domain}): the pod would make skew {skew} "
                f"({counts.get(domain, 0)} + 1 - {smallest}) > maxSkew {max_skew}",
                name,
                {"domain": domain, "skew": skew, "maxSkew": max_skew},
            )
        )
    return figures
