"""InterPodAffinity's rejections in numbers: the pods that match a term on the rejected node.

For the pod's required anti-affinity terms, the pods in the rejected node's
topology domain (nodes with the same value of `topologyKey`) that the term's
selector matches in its namespaces (the pod's own when none are named); for its
required affinity terms, how many such pods the domain has (none: rejected).
namespaceSelector is not reflected, nor existing pods' anti-affinity to this one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eventsched.audit.numbers.figure import Figure
from eventsched.model import ManifestError, NodeTable, Pod
from eventsched.model.selectors import LabelSelector

PLUGIN = "InterPodAffinity"
#: Pods named per figure.
NAMED = 5


def affinity_pod_figures(
    pod: Pod, table: NodeTable, nodes: Sequence[str], limit: int
) -> list[Figure]:
    figures: list[Figure] = []
    for kind in ("podAntiAffinity", "podAffinity"):
        section = pod.affinity.get(kind) or {}
        for term in section.get("requiredDuringSchedulingIgnoredDuringExecution") or ():
            for name in nodes[:limit]:
                figure = _term_figure(pod, table, kind, term, name)
                if figure is not None:
                    figures.append(figure)
    return figures


def _term_figure(
    pod: Pod, table: NodeTable, kind: str, term: Mapping[str, Any], node: str
) -> Figure | None:
    row = table.row_of(node)
    key = str(term.get("topologyKey", ""))
    if row is None:
        return None
    domain = table.node(row).labels.get(key)
    try:
        selector = LabelSelector.parse(term.get("labelSelector"), "pod", "labelSelector")
    except ManifestError:
        return None
    namespaces = set(term.get("namespaces") or ()) or {pod.namespace}
    matching = sorted(
        f"{p.namespace}/{p.name}"
        for r in range(len(table))
        if domain is not None and table.node(r).labels.get(key) == domain
        for p in table.pods[r].values()
        if p.namespace in namespaces and selector.matches(p.labels)
    )
    where = f"{key}={domain}" if domain is not None else f"no label {key}"
    named = ", ".join(matching[:NAMED]) + (
        f" and {len(matching) - NAMED} more" if len(matching) > NAMED else ""
    )
    if kind == "podAntiAffinity":
        text = f"node {node} ({where}): {len(matching)} pod(s) match the anti-affinity term" + (
            f": {named}" if matching else ""
        )
    else:
        text = f"node {node} ({where}): {len(matching)} pod(s) match the affinity term" + (
            f": {named}" if matching else " (it needs one)"
        )
    return Figure(PLUGIN, text, node, {"term": kind, "domain": domain, "matching": matching})
