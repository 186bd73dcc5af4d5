"""An in-tree PersistentVolume's node affinity once translated to CSI (csi-translation-lib, v1.28).

VolumeBinding checks a bound volume's node affinity (Filter's
`checkBoundClaims`, PreBind's `checkBindings`) on the volume
`tryTranslatePVToCSI` gives: an in-tree volume whose plugin's migration is
on (`isCSIMigrationOnForPlugin`: AWS EBS, GCE PD, Azure Disk and Cinder in
v1.28; Portworx's gate is off) and which the node's CSINode names in its
`storage.alpha.kubernetes.io/migrated-plugins` annotation is checked as
`TranslateInTreePVToCSI` rewrites it; any other volume, or on any other node,
as written.

The rewrite of the node affinity (`translateTopologyFromInTreeToCSI`), for
AWS EBS, GCE PD and Cinder (Azure Disk's translation leaves the topology as
it is): the zone key in use (`getTopologyLabel`: the GA zone key in the
node affinity, else the beta one, else the PV's GA zone label, else its beta
one) becomes the driver's topology key in every term's `matchExpressions`;
when no expression has it, the PV's zone label (zones joined by `__`) is
added to every term as `In` (one term made when there is none). A beta
region key in the affinity becomes the GA one.

A translation can fail: an AWS volume ID that is not `aws://ZONE/vol-...`
or a GCE PD whose zone label names zones of several regions. `Untranslatable`
carries upstream's message.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from eventsched.model.csimigration import AWS_EBS, CINDER, GCE_PD, IN_TREE, ebs_volume_id
from eventsched.model.volumeclass import CSINode
from eventsched.model.volumes import PersistentVolume

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
#: `labelMultiZoneDelimiter`.
ZONE_DELIMITER = "__"

#: The CSI topology key each source's translation rewrites zones to (`AWSEBSTopologyKey`,
#: `GCEPDTopologyKey`, `CinderTopologyKey`).
CSI_ZONE_KEYS: dict[str, str] = {
    AWS_EBS: "topology.ebs.csi.aws.com/zone",
    GCE_PD: "topology.gke.io/zone",
    CINDER: "topology.cinder.csi.openstack.org/zone",
}

#: Node selector terms as a PersistentVolume keeps them (`PersistentVolume.node_affinity`).
Terms = tuple[Mapping[str, Any], ...]


class Untranslatable(Exception):
    """`TranslateInTreePVToCSI`'s error, worded as csi-translation-lib's."""


def migrated_plugin(volume: PersistentVolume) -> str | None:
    """The in-tree plugin of a volume `tryTranslatePVToCSI` would translate on a node that
    lists it (`IsPVMigratable` and `isCSIMigrationOnForPlugin`); None for any other."""
    plugin = IN_TREE.get(volume.source)
    return plugin.name if plugin is not None and plugin.migrated else None


def migrated_on(plugin: str, csi_node: CSINode | None) -> bool:
    """`isPluginMigratedToCSIOnNode`: the node's CSINode lists the plugin."""
    return csi_node is not None and plugin in csi_node.migrated_plugins


def affinity_on(volume: PersistentVolume, csi_node: CSINode | None) -> Terms | None:
    """The node affinity VolumeBinding checks on a node with this CSINode (None: the node has
    none): `tryTranslatePVToCSI`'s volume's. Raises Untranslatable."""
    plugin = migrated_plugin(volume)
    if plugin is None or not migrated_on(plugin, csi_node):
        return volume.node_affinity
    return translated_affinity(volume)


def translated_affinity(volume: PersistentVolume) -> Terms | None:
    """The node affinity of `TranslateInTreePVToCSI`'s volume. Raises Untranslatable."""
    _check_translatable(volume)
    key = CSI_ZONE_KEYS.get(volume.source)
    if key is None:
        return volume.node_affinity
    return _translate_topology(volume.node_affinity, volume.labels, key)


def _check_translatable(volume: PersistentVolume) -> None:
    if volume.source == AWS_EBS and ebs_volume_id(volume.volume_id) is None:
        raise Untranslatable(
            "failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume "
            f"({volume.volume_id})"
        )
    if volume.source == GCE_PD:
        zones = (volume.labels.get(BETA_ZONE) or volume.labels.get(ZONE) or "").split(
            ZONE_DELIMITER
        )
        if len(zones) > 1:
            problem = _gce_region_problem(zones)
            if problem is not None:
                raise Untranslatable(f"failed to get region from zones: {problem}")


def _gce_region_problem(zones: Sequence[str]) -> str | None:
    """`getRegionFromZones`' error (GCE PD): every zone is {locale}-{region}-{zone}, in one
    region."""
    regions: set[str] = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            return (
                f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {zone}"
            )
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        listed = " ".join(f"{r}:{{}}" for r in sorted(regions))
        return f"multiple or no regions gotten from zones, got: map[{listed}]"
    return None


def _translate_topology(terms: Terms | None, labels: Mapping[str, str], key: str) -> Terms | None:
    """`translateTopologyFromInTreeToCSI` on the node affinity."""
    zone, region = _topology_labels(terms, labels)
    if _values(terms, zone):
        terms = _replace(terms, zone, key)
    elif zone in labels:
        terms = _add(terms, key, labels[zone].split(ZONE_DELIMITER))
    if region == BETA_REGION and _values(terms, region):
        terms = _replace(terms, region, REGION)
    return terms


def _topology_labels(terms: Terms | None, labels: Mapping[str, str]) -> tuple[str, str]:
    """`getTopologyLabel`: the zone and region keys the volume uses."""
    keys = {str(e.get("key")) for e in _expressions(terms)}
    if ZONE in keys:
        return ZONE, REGION
    if BETA_ZONE in keys:
        return BETA_ZONE, BETA_REGION
    if ZONE in labels:
        return ZONE, REGION
    if BETA_ZONE in labels:
        return BETA_ZONE, BETA_REGION
    return ZONE, REGION


def _expressions(terms: Terms | None) -> Iterable[Mapping[str, Any]]:
    for term in terms or ():
        for expr in term.get("matchExpressions") or ():
            if isinstance(expr, Mapping):
                yield expr


def _values(terms: Terms | None, key: str) -> list[str]:
    """`getTopologyValues`: the values of every expression on `key`."""
    return sorted({str(v) for e in _expressions(terms) if e.get("key") == key for v in _list(e)})


def _list(expr: Mapping[str, Any]) -> list[Any]:
    values = expr.get("values")
    return values if isinstance(values, list) else []


def _replace(terms: Terms | None, old: str, new: str) -> Terms | None:
    """`replaceTopology`: every expression on `old` is on `new` instead."""
    if not terms:
        return terms
    return tuple(
        {
            **term,
            "matchExpressions": [
                {**e, "key": new} if isinstance(e, Mapping) and e.get("key") == old else e
                for e in term.get("matchExpressions") or ()
            ],
        }
        if term.get("matchExpressions")
        else term
        for term in terms
    )


def _add(terms: Terms | None, key: str, zones: Sequence[str]) -> Terms | None:
    """`addTopology`: `key In zones` (trimmed, sorted, unique) added to every term; nothing
    when no zone is left (upstream's error, which its caller ignores)."""
    values = sorted({z.strip() for z in zones if z.strip()})
    if not values:
        return terms
    requirement = {"key": key, "operator": "In", "values": values}
    return tuple(
        {**term, "matchExpressions": [*(term.get("matchExpressions") or ()), requirement]}
        for term in (terms or ({},))
    )
