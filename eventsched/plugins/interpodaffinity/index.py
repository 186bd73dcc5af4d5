"""The placed pods that carry pod (anti-)affinity terms, grouped by term.

kube-scheduler keeps `PodsWithAffinity` and `PodsWithRequiredAntiAffinity`
per node. Here one `ExistingTerms`, made again only when the placed pods
with affinity may have changed (`PodTable.affinity_version`), groups the
placed pods' terms by value: the replicas of a workload share a term, so
"does this existing term select the incoming pod?" is asked once per
distinct term, and the nodes of the pods carrying it are one array.

Rebuilding after the table changed costs nothing per pod without pod
affinity (the PodTable keeps a `with_affinity` row mask, upstream's
PodsWithAffinity), a dict lookup in C per pod with it (its *signature*: the
number of its distinct set of terms, kept per Pod object), one argsort to
group pods by signature, and a parse only for pod objects not seen before.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np

from eventsched.model import IntArray, NodeTable, Pod
from eventsched.model.podaffinity import (
    AffinityTerm,
    PodTerms,
    TermError,
    parse_existing_terms,
    parse_pod_terms,
)

#: Incoming pods whose parsed terms are kept (the attempts of a pod reuse them).
_INCOMING_KEPT = 4096


@dataclass(frozen=True, slots=True)
class TermGroup:
    """One distinct term and the node row of every placed pod that carries it (repeated)."""

    term: AffinityTerm
    weight: int
    node_rows: IntArray


@dataclass(frozen=True, slots=True)
class ExistingTerms:
    #: Existing pods' required anti-affinity terms (the Filter's symmetry check).
    required_anti_affinity: tuple[TermGroup, ...] = ()
    #: Existing pods' required affinity terms, scored with hardPodAffinityWeight (weight 0 here).
    required_affinity: tuple[TermGroup, ...] = ()
    #: Existing pods' preferred terms: weight > 0 for affinity, < 0 for anti-affinity.
    preferred: tuple[TermGroup, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.required_anti_affinity or self.required_affinity or self.preferred)


@dataclass(slots=True)
class _Incoming:
    namespace: str
    affinity: Mapping[str, object]
    terms: PodTerms | TermError


class IncomingCache:
    """The incoming pod's parsed terms by uid, reused while its namespace and affinity hold."""

    def __init__(self) -> None:
        self._entries: dict[str, _Incoming] = {}

    def terms(self, pod: Pod) -> PodTerms:
        """The pod's terms; raises TermError when one is malformed."""
        entry = self._entries.get(pod.uid)
        if entry is None or not _same(entry, pod):
            if len(self._entries) >= _INCOMING_KEPT:
                self._entries.clear()
            try:
                terms: PodTerms | TermError = parse_pod_terms(pod)
            except TermError as exc:
                terms = exc
            entry = self._entries[pod.uid] = _Incoming(pod.namespace, pod.affinity, terms)
        if isinstance(entry.terms, TermError):
            raise entry.terms
        return entry.terms


def _same(entry: _Incoming, pod: Pod) -> bool:
    return entry.namespace == pod.namespace and (
        entry.affinity is pod.affinity or entry.affinity == pod.affinity
    )


class _Signatures:
    """A number per distinct PodTerms: the replicas of a workload share one."""

    def __init__(self) -> None:
        self._numbers: dict[PodTerms, int] = {}
        self.terms: list[PodTerms] = []

    def of(self, terms: PodTerms) -> int:
        number = self._numbers.get(terms)
        if number is None:
            number = self._numbers[terms] = len(self.terms)
            self.terms.append(terms)
        return number

    def __len__(self) -> int:
        return len(self.terms)


@dataclass(slots=True)
class _Groups:
    rows: dict[tuple[AffinityTerm, int], list[IntArray]] = field(default_factory=dict)

    def add(self, term: AffinityTerm, weight: int, node_rows: IntArray) -> None:
        self.rows.setdefault((term, weight), []).append(node_rows)

    def frozen(self) -> tuple[TermGroup, ...]:
        return tuple(
            TermGroup(term, weight, parts[0] if len(parts) == 1 else np.concatenate(parts))
            for (term, weight), parts in self.rows.items()
        )


def group(
    terms_by_signature: list[PodTerms], signatures: IntArray, node_rows: IntArray
) -> ExistingTerms:
    """Every term of every pod, grouped: pods of one signature are one slice after a sort."""
    anti, affinity, preferred = _Groups(), _Groups(), _Groups()
    if len(signatures):
        order = np.argsort(signatures, kind="stable")
        ordered = signatures[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]).tolist()
        for start, end in zip(starts, [*starts[1:], len(order)], strict=True):
            terms = terms_by_signature[int(ordered[start])]
            if terms.empty:
                continue
            rows = node_rows[order[start:end]]
            for term in terms.required_anti_affinity:
                anti.add(term, 0, rows)
            for term in terms.required_affinity:
                affinity.add(term, 0, rows)
            for weighted in terms.preferred_affinity:
                preferred.add(weighted.term, weighted.weight, rows)
            for weighted in terms.preferred_anti_affinity:
                preferred.add(weighted.term, -weighted.weight, rows)
    return ExistingTerms(anti.frozen(), affinity.frozen(), preferred.frozen())


class IndexHolder:
    """The index of one table, rebuilt when its pods with affinity may have changed
    (`PodTable.affinity_version`; a pod without affinity placed or removed does not)."""

    def __init__(self) -> None:
        self.incoming = IncomingCache()
        self._table: weakref.ref[NodeTable] | None = None
        self._version = -1
        self._index = ExistingTerms()
        self._signatures = _Signatures()
        #: id() of each placed Pod object with affinity -> its signature. The objects are
        #: held in `_held`, so an id cannot be reused by another object while it is a key.
        self._signature_of: dict[int, int] = {}
        self._held: list[Pod] = []

    def get(self, table: NodeTable) -> ExistingTerms:
        version = table.placed.affinity_version
        if self._table is None or self._table() is not table or self._version != version:
            self._index = self._rebuild(table)
            self._table = weakref.ref(table)
            self._version = version
        return self._index

    def _rebuild(self, table: NodeTable) -> ExistingTerms:
        placed = table.placed
        rows = np.flatnonzero(placed.with_affinity)
        held = list(map(placed.pods.__getitem__, rows.tolist()))
        ids = list(map(id, held))
        known = self._signature_of
        signatures = np.fromiter(map(known.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))
        for k in np.flatnonzero(signatures < 0).tolist():
            signatures[k] = self._signatures.of(parse_existing_terms(held[k]))
        if len(self._signatures) > 2 * len(held) + 1024:
            signatures = self._compact(signatures)
        self._held = held
        self._signature_of = dict(zip(ids, signatures.tolist(), strict=True))
        return group(self._signatures.terms, signatures, placed.node_rows[rows])

    def _compact(self, signatures: IntArray) -> IntArray:
        """Forget the term sets no placed pod has any more (pods with unique terms come and go)."""
        used, renumbered = np.unique(signatures, return_inverse=True)
        old = self._signatures.terms
        self._signatures = _Signatures()
        for number in used.tolist():
            self._signatures.of(old[number])
        return renumbered.astype(np.int64)
