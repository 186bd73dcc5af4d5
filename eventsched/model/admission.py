"""What the API server writes into a pod's spec when it creates it, for the pods eventsched
reads from manifests (`eventsched simulate`) rather than from an API server.

`pkg/registry/core/pod/strategy.go` PrepareForCreate merges label keys into selectors:

- `mutatePodAffinity` (MatchLabelKeysInPodAffinity: alpha 1.29, on from 1.31): for each pod
  (anti-)affinity term, required and preferred, with a `labelSelector`, each
  `matchLabelKeys` key the pod has a label for appends `{key, In, [value]}` to
  `labelSelector.matchExpressions`, each `mismatchLabelKeys` key `{key, NotIn, [value]}`;
- `mutateTopologySpreadConstraints` (MatchLabelKeysInPodTopologySpread and
  MatchLabelKeysInPodTopologySpreadSelectorMerge, both on from 1.34): each topology spread
  constraint with a `labelSelector` gets `{key, In, [value]}` per `matchLabelKeys` key.

A term or constraint without a labelSelector (it selects nothing) is left alone, and so
is a key the pod has no label for; the keys lists stay as they are.

Pods read from a real cluster already carry what their API server merged, and
kube-scheduler reads the selectors as stored: InterPodAffinity reads no matchLabelKeys
at all, PodTopologySpread merges them again (the same requirement twice, which selects
the same pods). So eventsched applies the merge to manifest pods only, and only at the
versions and gates whose API server would have, so that a simulation sees the pods a
cluster of that version would hold: without it, a manifest's pod affinity
`matchLabelKeys` would be ignored from 1.31 on, as an unmerged pod's is by
kube-scheduler.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_AFFINITY_KINDS = ("podAffinity", "podAntiAffinity")
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


@dataclass(frozen=True, slots=True)
class Admission:
    """Which of PrepareForCreate's merges the API server of the version decided as does."""

    topology_spread: bool = False
    pod_affinity: bool = False

    @property
    def merges(self) -> bool:
        return self.topology_spread or self.pod_affinity


def admitted(obj: Mapping[str, Any], admission: Admission) -> dict[str, Any]:
    """The Pod manifest `obj` as the API server would store it at creation (a copy when
    anything changes; `obj` itself is never changed)."""
    spec = obj.get("spec")
    if not admission.merges or not isinstance(spec, Mapping):
        return dict(obj)
    labels = (obj.get("metadata") or {}).get("labels") or {}
    spec = copy.deepcopy(dict(spec))
    if admission.pod_affinity:
        _merge_affinity(spec.get("affinity"), labels)
    if admission.topology_spread:
        for constraint in spec.get("topologySpreadConstraints") or ():
            if isinstance(constraint, dict):
                _apply(
                    constraint.get("labelSelector"), constraint.get("matchLabelKeys"), "In", labels
                )
    return {**obj, "spec": spec}


def _merge_affinity(affinity: Any, labels: Mapping[str, Any]) -> None:
    if not isinstance(affinity, dict):
        return
    for kind in _AFFINITY_KINDS:
        section = affinity.get(kind)
        if not isinstance(section, dict):
            continue
        terms = [t for t in section.get(_REQUIRED) or () if isinstance(t, dict)]
        terms += [
            w["podAffinityTerm"]
            for w in section.get(_PREFERRED) or ()
            if isinstance(w, dict) and isinstance(w.get("podAffinityTerm"), dict)
        ]
        for term in terms:
            selector = term.get("labelSelector")
            _apply(selector, term.get("matchLabelKeys"), "In", labels)
            _apply(selector, term.get("mismatchLabelKeys"), "NotIn", labels)


def _apply(selector: Any, keys: Any, operator: str, labels: Mapping[str, Any]) -> None:
    """`applyLabelKeysToLabelSelector`: one requirement per key the pod has a label for."""
    if not isinstance(selector, dict) or not isinstance(keys, list):
        return
    for key in keys:
        if isinstance(key, str) and key in labels:
            expressions = selector.get("matchExpressions")
            if not isinstance(expressions, list):
                expressions = selector["matchExpressions"] = []
            expressions.append({"key": key, "operator": operator, "values": [str(labels[key])]})
