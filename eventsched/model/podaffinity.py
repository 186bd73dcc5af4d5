"""A pod's pod-affinity terms: `framework.AffinityTerm` and `WeightedAffinityTerm`, parsed once
per pod; read by InterPodAffinity and by the queue (`AssignedPodAdded` moves the pods whose
required affinity a newly assigned pod satisfies).

A pod's `spec.affinity.podAffinity` / `podAntiAffinity` hold required terms
(`requiredDuringSchedulingIgnoredDuringExecution`) and weighted preferred
terms (`preferredDuringSchedulingIgnoredDuringExecution`). As upstream's
`newAffinityTerm`: a term without `namespaces` and without
`namespaceSelector` means the pod's own namespace; a nil `labelSelector` or
`namespaceSelector` selects nothing, an empty one (`{}`) everything.

The incoming pod's terms are *merged* before use
(`mergeAffinityTermNamespacesIfNotEmpty`): a non-empty namespaceSelector is
unrolled into the names of the known namespaces it selects, so matching a
placed pod is one namespace-and-labels test (`MergedTerm`). Existing pods'
terms keep their selector and are matched against the incoming pod with
its namespace's labels (`AffinityTerm.matches`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eventsched.model import ManifestError, Pod, label_key_problem, label_value_problem
from eventsched.model.objects import ClusterObjects
from eventsched.model.selectors import IN, NOT_IN, LabelSelector

AFFINITY = "podAffinity"
ANTI_AFFINITY = "podAntiAffinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


class TermError(ValueError):
    """A term that cannot be read: `field` is its path in the pod, `problem` what is wrong."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """`framework.AffinityTerm`: hashable, so the replicas of a workload share one."""

    selector: LabelSelector
    namespaces: frozenset[str]
    namespace_selector: LabelSelector
    topology_key: str

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str]) -> bool:
        """`AffinityTerm.Matches`: the pod's namespace is listed or selected, and its labels match."""
        if pod.namespace in self.namespaces or self.namespace_selector.matches(namespace_labels):
            return self.selector.matches(pod.labels)
        return False

    def merged(self, objects: ClusterObjects) -> MergedTerm:
        """The term with its namespaceSelector unrolled over the known namespaces."""
        if self.namespace_selector.is_everything:
            return MergedTerm(self.selector, None, self.topology_key)
        names = set(self.namespaces)
        if not self.namespace_selector.nothing:
            names.update(
                name
                for name, namespace in objects.namespaces.items()
                if self.namespace_selector.matches(namespace.labels)
            )
        return MergedTerm(self.selector, frozenset(names), self.topology_key)


@dataclass(frozen=True, slots=True)
class MergedTerm:
    """An incoming pod's term after the merge; `namespaces` None means every namespace."""

    selector: LabelSelector
    namespaces: frozenset[str] | None
    topology_key: str

    def matches(self, pod: Pod) -> bool:
        if self.namespaces is not None and pod.namespace not in self.namespaces:
            return False
        return self.selector.matches(pod.labels)


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    term: AffinityTerm
    weight: int


@dataclass(frozen=True, slots=True)
class PodTerms:
    """`PodInfo`'s four term lists."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedTerm, ...] = ()

    @property
    def empty(self) -> bool:
        return not (
            self.required_affinity
            or self.required_anti_affinity
            or self.preferred_affinity
            or self.preferred_anti_affinity
        )

    @property
    def has_preferred(self) -> bool:
        return bool(self.preferred_affinity or self.preferred_anti_affinity)


NO_TERMS = PodTerms()


def has_pod_affinity(pod: Pod) -> bool:
    """Whether the pod sets podAffinity or podAntiAffinity (`NodeInfo.PodsWithAffinity`)."""
    affinity = pod.affinity
    return bool(affinity) and bool(affinity.get(AFFINITY) or affinity.get(ANTI_AFFINITY))


def parse_pod_terms(pod: Pod) -> PodTerms:
    """The incoming pod's terms; raises TermError naming the first field that is wrong."""
    if not has_pod_affinity(pod):
        return NO_TERMS
    return PodTerms(*(read(pod, key) for key, read in _LISTS))


def parse_existing_terms(pod: Pod) -> PodTerms:
    """A placed pod's terms. As `framework.NewPodInfo` for a pod in the snapshot, a list
    that cannot be parsed is dropped (the error is ignored there) and the others kept."""
    if not has_pod_affinity(pod):
        return NO_TERMS
    parts: list[Any] = []
    for key, read in _LISTS:
        try:
            parts.append(read(pod, key))
        except TermError:
            parts.append(())
    return PodTerms(*parts)


def _items(pod: Pod, key: str, field: str) -> tuple[str, list[Any]]:
    """The list under `spec.affinity.<key>.<field>` and its path ([] when absent)."""
    path = f"spec.affinity.{key}"
    section = pod.affinity.get(key) or {}
    if not isinstance(section, Mapping):
        raise TermError(path, "must be a map")
    path = f"{path}.{field}"
    items = section.get(field)
    if items is None:
        return path, []
    if not isinstance(items, list):
        raise TermError(path, "must be a list")
    return path, items


def _required(pod: Pod, key: str) -> tuple[AffinityTerm, ...]:
    path, items = _items(pod, key, REQUIRED)
    return tuple(_term(pod, raw, f"{path}[{i}]") for i, raw in enumerate(items))


def _preferred(pod: Pod, key: str) -> tuple[WeightedTerm, ...]:
    path, items = _items(pod, key, PREFERRED)
    return tuple(_weighted(pod, raw, f"{path}[{i}]") for i, raw in enumerate(items))


def _weighted(pod: Pod, raw: Any, where: str) -> WeightedTerm:
    if not isinstance(raw, Mapping):
        raise TermError(where, "must be a map with weight and podAffinityTerm")
    weight = raw.get("weight")
    if isinstance(weight, bool) or not isinstance(weight, int):
        raise TermError(f"{where}.weight", f"must be an integer (got {weight!r})")
    return WeightedTerm(_term(pod, raw.get("podAffinityTerm"), f"{where}.podAffinityTerm"), weight)


#: PodTerms' fields in order: upstream parses them in this order and reports the first error.
_LISTS: tuple[tuple[str, Any], ...] = (
    (AFFINITY, _required),
    (ANTI_AFFINITY, _required),
    (AFFINITY, _preferred),
    (ANTI_AFFINITY, _preferred),
)


def _term(pod: Pod, raw: Any, where: str) -> AffinityTerm:
    if not isinstance(raw, Mapping):
        raise TermError(where, "must be a map with labelSelector and topologyKey")
    # The API server requires a topologyKey; the scheduler itself treats a missing
    # one as "" (no node has it), and upstream's tests rely on that.
    topology_key = raw.get("topologyKey", "")
    if not isinstance(topology_key, str):
        raise TermError(f"{where}.topologyKey", f"must be a node label key (got {topology_key!r})")
    names = raw.get("namespaces") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TermError(f"{where}.namespaces", "must be a list of namespace names")
    raw_ns_selector = raw.get("namespaceSelector")
    selector = _selector(raw.get("labelSelector"), f"{where}.labelSelector")
    namespace_selector = _selector(raw_ns_selector, f"{where}.namespaceSelector")
    if not names and raw_ns_selector is None:
        names = [pod.namespace]
    return AffinityTerm(selector, frozenset(names), namespace_selector, topology_key)


def _selector(raw: Any, field: str) -> LabelSelector:
    """`metav1.LabelSelectorAsSelector`, including its check of label keys and values."""
    try:
        selector = LabelSelector.parse(raw, "", field)
    except ManifestError as exc:
        raise TermError(exc.field, exc.problem) from exc
    for requirement in selector.requirements:
        problem = label_key_problem(requirement.key)
        if problem is None and requirement.operator in (IN, NOT_IN):
            problem = next(
                (p for v in sorted(requirement.values) if (p := label_value_problem(v))), None
            )
        if problem is not None:
            raise TermError(field, problem)
    return selector
