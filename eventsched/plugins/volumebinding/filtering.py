"""VolumeBinding's Filter: binder.go `FindPodVolumes`, per node, over the NodeTable at once.

- a bound claim's volume must admit the node (`checkBoundClaims`): "node(s)
  had volume node affinity conflict" ("node(s) didn't match PersistentVolume's node
  affinity" from 1.33); an in-tree volume is checked as CSI
  translation rewrites it on nodes whose CSINode lists its plugin as migrated
  (`tryTranslatePVToCSI`, model/csitopology.py), and a translation that fails
  there is the Filter's Error ("could not translate pv: ..."); a missing volume: "node(s) unavailable
  due to one or more pvc(s) bound to non-existent pv(s)";
- an unbound WaitForFirstConsumer claim whose `volume.kubernetes.io/selected-node`
  names another node fails there at once; the others are matched with
  available volumes (`findMatchingVolumes`, model/volumematching.py, which
  reads the PV assume cache: a volume another pod's reservation assumed is
  taken). A node where every claim found one passes, with those static
  bindings kept for Reserve (`podVolumesByNode`). A claim that found none, and
  every claim whose selected node is this one, is to be provisioned
  (`checkVolumeProvisions`): where its class cannot provision (no provisioner,
  or allowedTopologies exclude the node), "node(s) didn't find available
  persistent volumes to bind"; where its provisioner is a CSIDriver with
  `storageCapacity: true` and no CSIStorageCapacity of the class whose
  `nodeTopology` matches the node holds the claim's size (`hasEnoughCapacity`:
  maximumVolumeSize, else capacity), "node(s) did not have enough free
  storage"; else the node passes, the claim among its dynamic provisions,
  which Reserve assumes with the node selected.

All UnschedulableAndUnresolvable, reasons in upstream's order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from eventsched.framework import BatchFilterResult, Code, Status
from eventsched.model import BoolArray, Indexes, IntArray, NodeTable
from eventsched.model.csitopology import Untranslatable, migrated_plugin, translated_affinity
from eventsched.model.volumematching import Matches, match_claims, unsupported_attributes_class
from eventsched.model.volumes import PersistentVolume, PersistentVolumeClaim, StorageClass
from eventsched.model.volumetopology import NodeSelector, selector_mask, topology_mask
from eventsched.plugins.volumebinding.binder import BindingInfo, PodVolumes
from eventsched.plugins.volumebinding.claims import PodVolumeClaims

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
#: `ErrReasonNodeConflict` from 1.33 (kubernetes#129887).
ERR_REASON_NODE_CONFLICT_1_33 = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)
NO_PROVISIONER = "kubernetes.io/no-provisioner"

#: FindPodVolumes' reasons, in the order it appends them.
_REASONS = (
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
)

#: What each node that passed would bind and provision (`podVolumesByNode`).
NodeBindings = dict[str, PodVolumes]


@dataclass(slots=True)
class _Verdicts:
    """Each candidate row's reasons (flags), error or refusal (an index into `others`),
    turned into shared statuses at the end, as arrays."""

    node_conflict: BoolArray
    bind_conflict: BoolArray
    no_space: BoolArray
    pv_missing: BoolArray
    other: IntArray
    others: list[Status]

    def set_other(self, rows: BoolArray, status: Status) -> None:
        if rows.any():
            self.others.append(status)
            self.other[rows] = len(self.others) - 1

    @classmethod
    def empty(cls, count: int) -> _Verdicts:
        no = np.zeros(count, dtype=bool)
        return cls(no, no.copy(), no.copy(), no.copy(), np.full(count, -1, dtype=np.int64), [])

    def result(self, reasons: tuple[str, ...] = _REASONS) -> BatchFilterResult:
        """An error wins; else the reasons (UnschedulableAndUnresolvable, `reasons` in
        FindPodVolumes' order); else a refusal."""
        flags = (
            self.node_conflict.astype(np.int64)
            | (self.bind_conflict.astype(np.int64) << 1)
            | (self.no_space.astype(np.int64) << 2)
            | (self.pv_missing.astype(np.int64) << 3)
        )
        errors = np.array([s.code == Code.ERROR for s in self.others], dtype=bool)
        is_error = np.zeros(len(flags), dtype=bool)
        if self.others:
            is_error = (self.other >= 0) & errors[np.maximum(self.other, 0)]
        statuses = list(self.others)
        verdict = np.where(is_error | ((flags == 0) & (self.other >= 0)), self.other, -1)
        for combination in np.unique(flags[~is_error & (flags > 0)]):
            said = [r for bit, r in enumerate(reasons) if combination >> bit & 1]
            statuses.append(Status.unresolvable(*said))
            verdict[~is_error & (flags == combination)] = len(statuses) - 1
        return BatchFilterResult(verdict.astype(np.int64), statuses)


class Masks:
    """Boolean masks over every row (a volume's node affinity, a class's topologies),
    kept until nodes or storage objects change."""

    def __init__(self) -> None:
        self._masks: dict[str, BoolArray] = {}
        self._stamp: tuple[int, int] = (-1, -1)

    def cached(self, table: NodeTable, key: str, compute: Callable[[], BoolArray]) -> BoolArray:
        stamp = (table.node_generation, table.objects.storage.generation)
        if stamp != self._stamp:
            self._masks.clear()
            self._stamp = stamp
        mask = self._masks.get(key)
        if mask is None:
            mask = self._masks[key] = compute()
        return mask

    def affinity(self, table: NodeTable, volume: PersistentVolume) -> BoolArray:
        """Where the volume's node affinity admits the node (`CheckNodeAffinity`)."""
        affinity = volume.node_affinity
        if affinity is None:
            return self.cached(table, "", lambda: np.ones(len(table), dtype=bool))
        return self.cached(
            table,
            f"PersistentVolume/{volume.name}",
            lambda: NodeSelector.compile(affinity).mask(table),
        )

    def migrated(self, table: NodeTable, plugin: str) -> BoolArray:
        """Where the node's CSINode lists the in-tree plugin as migrated."""

        def compute() -> BoolArray:
            csi_nodes = table.objects.storage.csi_nodes
            return np.array(
                [
                    name in csi_nodes and plugin in csi_nodes[name].migrated_plugins
                    for name in table.names
                ],
                dtype=bool,
            )

        return self.cached(table, f"migrated/{plugin}", compute)

    def bound_affinity(self, table: NodeTable, volume: PersistentVolume) -> BoolArray:
        """Where a bound volume admits the node as `checkBoundClaims` checks it: translated
        to CSI where its plugin is migrated (model/csitopology.py). Raises Untranslatable
        when some node would translate it and the translation fails."""
        plain = self.affinity(table, volume)
        plugin = migrated_plugin(volume)
        if plugin is None:
            return plain
        migrated = self.migrated(table, plugin)
        if not migrated.any():
            return plain
        terms = translated_affinity(volume)

        def compute() -> BoolArray:
            admits = np.ones(len(table), dtype=bool)
            if terms is not None:
                admits = NodeSelector.compile(terms).mask(table)
            return np.where(migrated, admits, plain)

        return self.cached(table, f"translated/{volume.name}", compute)


@dataclass(frozen=True, slots=True)
class VersionRules:
    """What changes with the version: `ErrReasonNodeConflict`'s words, and whether volume
    attributes classes are matched (None: not at all, v1.28; else the gate's value)."""

    node_conflict: str = ERR_REASON_NODE_CONFLICT
    attributes_classes: bool | None = None


def find_pod_volumes(
    claims: PodVolumeClaims,
    table: NodeTable,
    rows: Indexes,
    masks: Masks,
    found: NodeBindings,
    rules: VersionRules = VersionRules(),
) -> BatchFilterResult:
    """`FindPodVolumes` on `rows`; the static bindings of the rows that pass go to `found`."""
    verdicts = _Verdicts.empty(len(rows))
    _check_bound(claims.bound, table, rows, masks, verdicts)
    if claims.delayed:
        _check_delayed(claims.delayed, table, rows, masks, verdicts, found, rules)
    return verdicts.result((rules.node_conflict, *_REASONS[1:]))


def _check_bound(
    bound: Sequence[PersistentVolumeClaim],
    table: NodeTable,
    rows: Indexes,
    masks: Masks,
    verdicts: _Verdicts,
) -> None:
    """`checkBoundClaims`: the first claim whose volume is missing, cannot be translated to
    CSI where its plugin is migrated, or does not admit the node decides; a missing volume
    ends the check on every node not decided before."""
    storage = table.objects.storage
    decided = np.zeros(len(rows), dtype=bool)
    for claim in bound:
        volume = storage.volume(claim.volume_name)
        if volume is None:
            verdicts.pv_missing |= ~decided
            return
        try:
            admits = masks.bound_affinity(table, volume)
        except Untranslatable as exc:
            plugin = migrated_plugin(volume)
            assert plugin is not None
            failing = ~decided & masks.migrated(table, plugin)[rows]
            verdicts.set_other(failing, Status.as_error(f"could not translate pv: {exc}"))
            decided |= failing
            admits = masks.affinity(table, volume)
        mismatch = ~decided & ~admits[rows]
        verdicts.node_conflict |= mismatch
        decided |= mismatch


def _check_delayed(
    delayed: Sequence[PersistentVolumeClaim],
    table: NodeTable,
    rows: Indexes,
    masks: Masks,
    verdicts: _Verdicts,
    found: NodeBindings,
    rules: VersionRules,
) -> None:
    """The unbound WaitForFirstConsumer claims: the selected-node fast path, matching
    available volumes, then provisioning what found none."""
    names = np.array([table.names[r] for r in rows], dtype=object)
    alive = np.ones(len(rows), dtype=bool)
    selected = [c for c in delayed if c.selected_node]
    for claim in selected:
        alive &= names == claim.selected_node
    verdicts.bind_conflict |= ~alive
    to_match = [c for c in delayed if not c.selected_node]
    unsupported = unsupported_attributes_class(to_match, rules.attributes_classes)
    if unsupported is not None:
        verdicts.set_other(alive, Status.as_error(unsupported))
        return
    matches = match_claims(
        to_match,
        table.objects.storage,
        rows,
        lambda v: masks.affinity(table, v),
        rules.attributes_classes,
    )
    unmatched = np.array([picks < 0 for picks in matches.chosen], dtype=bool).reshape(
        len(matches.claims), len(rows)
    )
    # Nodes with the same claims left unmatched provision the same claims: one pass each.
    patterns, group = np.unique(unmatched, axis=1, return_inverse=True)
    for g in range(patterns.shape[1]):
        members = alive & (group.reshape(-1) == g)
        if not members.any():
            continue
        flags = patterns[:, g]
        left = [c for c, flag in zip(matches.claims, flags, strict=True) if flag]
        to_provision = (*selected, *left)
        if to_provision:
            members = _provision(table, rows, members, masks, to_provision, verdicts)
        _keep_bindings(table, rows, members, matches, flags, to_provision, found)


def _keep_bindings(
    table: NodeTable,
    rows: Indexes,
    members: BoolArray,
    matches: Matches,
    unmatched: BoolArray,
    to_provision: Sequence[PersistentVolumeClaim],
    found: NodeBindings,
) -> None:
    """These rows pass: each node's static bindings (the claims that matched a volume)
    and dynamic provisions."""
    for i in np.flatnonzero(members):
        static = tuple(
            BindingInfo(claim, matches.volumes[picks[i]])
            for claim, picks, left in zip(matches.claims, matches.chosen, unmatched, strict=True)
            if not left
        )
        found[table.names[rows[i]]] = PodVolumes(static, tuple(to_provision))


def _provision(
    table: NodeTable,
    rows: Indexes,
    members: BoolArray,
    masks: Masks,
    claims: Sequence[PersistentVolumeClaim],
    verdicts: _Verdicts,
) -> BoolArray:
    """`checkVolumeProvisions` on the `members` rows: an error, a bind conflict or too
    little storage where a claim cannot be provisioned; the rows where every claim can."""
    storage = table.objects.storage
    none = np.zeros(len(members), dtype=bool)
    for claim in claims:
        if not claim.storage_class:
            error = Status.as_error(f'no class for claim "{claim.namespace}/{claim.name}"')
            verdicts.set_other(members, error)
            return none
        storage_class = storage.classes.get(claim.storage_class)
        if storage_class is None:
            error = Status.as_error(f'failed to find storage class "{claim.storage_class}"')
            verdicts.set_other(members, error)
            return none
        provisioner = storage_class.provisioner
        if not provisioner or provisioner == NO_PROVISIONER:
            verdicts.bind_conflict |= members
            return none
        compute = partial(topology_mask, storage_class.allowed_topologies, table)
        allowed = masks.cached(table, storage_class.key, compute)[rows]
        verdicts.bind_conflict |= members & ~allowed
        members = members & allowed
        room = _capacity(table, masks, claim, storage_class)[rows]
        verdicts.no_space |= members & ~room
        members = members & room
    return members


def _capacity(
    table: NodeTable, masks: Masks, claim: PersistentVolumeClaim, storage_class: StorageClass
) -> BoolArray:
    """`hasEnoughCapacity` over every row: True where the claim's size needs no check (none
    requested, or the provisioner is no CSIDriver with storageCapacity) or fits some
    CSIStorageCapacity of the class whose nodeTopology matches the node."""
    storage = table.objects.storage
    driver = storage.csi_drivers.get(storage_class.provisioner)
    if not claim.storage or driver is None or not driver.storage_capacity:
        return masks.cached(table, "", lambda: np.ones(len(table), dtype=bool))

    def compute() -> BoolArray:
        room = np.zeros(len(table), dtype=bool)
        for capacity in storage.capacities.values():
            topology = capacity.node_topology
            if (
                capacity.storage_class == storage_class.name
                and topology is not None
                and capacity.holds(claim.storage)
            ):
                room |= selector_mask(topology, table)
        return room

    return masks.cached(table, f"capacity/{storage_class.name}/{claim.storage}", compute)
