"""TaintToleration's and NodeAffinity's rejections in numbers: the taint, the labels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eventsched.audit.numbers.figure import Figure
from eventsched.model import NodeTable, Pod

TAINTS = "TaintToleration"
UNSCHEDULABLE = "NodeUnschedulable"
AFFINITY = "NodeAffinity"
#: Upstream's effects a Filter checks (PreferNoSchedule only scores).
_FILTERED_EFFECTS = ("NoSchedule", "NoExecute")


def taint_figures(pod: Pod, table: NodeTable, nodes: Sequence[str], limit: int) -> list[Figure]:
    """Each rejected node's taints no toleration of the pod matches."""
    figures = []
    for name in nodes[:limit]:
        row = table.row_of(name)
        if row is None:
            continue
        untolerated = [
            t
            for t in table.node(row).taints
            if t.effect in _FILTERED_EFFECTS and not any(o.tolerates(t) for o in pod.tolerations)
        ]
        for taint in untolerated:
            shown = (
                f"{taint.key}={taint.value}:{taint.effect}"
                if taint.value
                else f"{taint.key}:{taint.effect}"
            )
            tolerations = len(pod.tolerations)
            figures.append(
                Figure(
                    TAINTS,
                    f"node {name} has taint {shown}; the pod's {tolerations} toleration(s) "
                    "match none",
                    name,
                    {"taint": taint.to_dict(), "tolerations": tolerations},
                )
            )
    return figures


def affinity_figures(pod: Pod, table: NodeTable, nodes: Sequence[str], limit: int) -> list[Figure]:
    """For each rejected node, each label the pod's nodeSelector or required node affinity
    asks about: the node's value against what was asked."""
    asked = _asked(pod)
    figures = []
    for name in nodes[:limit]:
        row = table.row_of(name)
        if row is None:
            continue
        labels = table.node(row).labels
        for key, want in asked:
            have = labels.get(key)
            shown = "no such label" if have is None else f"{key}={have}"
            figures.append(
                Figure(
                    AFFINITY,
                    f"node {name}: {shown}; the pod asks {want}",
                    name,
                    {"label": key, "nodeValue": have, "asked": want},
                )
            )
    return figures


def _asked(pod: Pod) -> list[tuple[str, str]]:
    asked = [(key, f"{key}={value}") for key, value in pod.node_selector.items()]
    required = (pod.affinity.get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or ():
        for expression in term.get("matchExpressions") or ():
            asked.append((str(expression.get("key")), _expression(expression)))
    return asked


def _expression(expression: Mapping[str, Any]) -> str:
    values = ", ".join(str(v) for v in expression.get("values") or ())
    operator = expression.get("operator")
    return f"{expression.get('key')} {operator}" + (f" [{values}]" if values else "")


def cordon_figures(pod: Pod, nodes: Sequence[str], limit: int) -> list[Figure]:
    """A cordoned node: spec.unschedulable, and whether the pod tolerates it."""
    tolerates = any(o.key == _CORDON_TAINT for o in pod.tolerations)
    return [
        Figure(
            UNSCHEDULABLE,
            f"node {name} has spec.unschedulable: true (cordoned); the pod "
            f"{'tolerates' if tolerates else 'has no toleration for'} {_CORDON_TAINT}",
            name,
            {"unschedulable": True, "tolerated": tolerates},
        )
        for name in nodes[:limit]
    ]


_CORDON_TAINT = "node.kubernetes.io/unschedulable"
