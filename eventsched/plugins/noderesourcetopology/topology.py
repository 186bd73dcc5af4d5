"""NodeResourceTopology objects (`topology.node.k8s.io/v1alpha2`), as NodeResourceTopologyMatch
reads them (kubernetes-sigs/scheduler-plugins v0.28.9), and their declaration as a custom
kind (`NODE_RESOURCE_TOPOLOGIES`).

A NodeResourceTopology is cluster-scoped and named after the node it describes.
Its `zones` list the node's NUMA cells (type `Node`, named `node-<id>`) with, per
resource, the capacity, allocatable and available amounts, and the distances
(`costs`) to the other cells; `attributes` carry the kubelet's topology manager
`topologyManagerPolicy` and `topologyManagerScope`; the deprecated
`topologyPolicies` carries both in one word (`SingleNUMANodeContainerLevel`...).

Amounts are integers as everywhere in eventsched (model/quantity.py): CPU in
millicores, everything else in base units. The plugin reads only a zone's name,
type, costs and the `available` amount of each resource, and only the two
topology-manager attributes, so only those are logged (`to_record`); capacity
and allocatable are kept from the manifest for display and compare as equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.model.customkinds import CustomKind
from eventsched.model.errors import ManifestError
from eventsched.model.quantity import QuantityError, parse_milli, parse_quantity
from eventsched.model.resources import CPU

NRT = "NodeResourceTopology"
API_VERSION = "topology.node.k8s.io/v1alpha2"
ATTRIBUTE_POLICY = "topologyManagerPolicy"
ATTRIBUTE_SCOPE = "topologyManagerScope"
#: The attributes a decision reads; the others are dropped when parsing.
_READ_ATTRIBUTES = (ATTRIBUTE_POLICY, ATTRIBUTE_SCOPE)


@dataclass(frozen=True, slots=True)
class ZoneResource:
    """One entry of a zone's `resources`; amounts in eventsched units (CPU millicores)."""

    name: str
    available: int
    capacity: int = field(default=0, compare=False)
    allocatable: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Zone:
    name: str
    type: str
    #: `costs`: (zone name, distance) in the object's order.
    costs: tuple[tuple[str, int], ...] = ()
    resources: tuple[ZoneResource, ...] = ()

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.costs:
            record["costs"] = [{"name": n, "value": v} for n, v in self.costs]
        if self.resources:
            record["resources"] = [
                {"name": r.name, "available": r.available} for r in self.resources
            ]
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Zone:
        return cls(
            str(record["name"]),
            str(record.get("type", "")),
            tuple((str(c["name"]), int(c["value"])) for c in record.get("costs", ())),
            tuple(
                ZoneResource(str(r["name"]), int(r["available"]))
                for r in record.get("resources", ())
            ),
        )


@dataclass(frozen=True, slots=True)
class NodeResourceTopology:
    #: The node's name.
    name: str
    zones: tuple[Zone, ...] = ()
    #: The `topologyManagerPolicy` / `topologyManagerScope` attributes, in the object's order.
    attributes: tuple[tuple[str, str], ...] = ()
    #: The deprecated `topologyPolicies`.
    topology_policies: tuple[str, ...] = ()
    kind: str = NRT

    @property
    def namespace(self) -> str:
        """Cluster-scoped: none."""
        return ""

    @property
    def key(self) -> str:
        return f"{NRT}/{self.name}"

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "kind": NRT,
            "name": self.name,
            "zones": [z.to_record() for z in self.zones],
        }
        if self.attributes:
            record["attributes"] = [{"name": n, "value": v} for n, v in self.attributes]
        if self.topology_policies:
            record["topologyPolicies"] = list(self.topology_policies)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> NodeResourceTopology:
        return cls(
            str(record["name"]),
            tuple(Zone.from_record(z) for z in record.get("zones", ())),
            tuple((str(a["name"]), str(a["value"])) for a in record.get("attributes", ())),
            tuple(str(p) for p in record.get("topologyPolicies", ())),
        )

    @classmethod
    def from_manifest(cls, obj: Mapping[str, Any]) -> NodeResourceTopology:
        """A NodeResourceTopology from the API (or a manifest), checked as its CRD schema
        checks it: `zones` is required, a zone needs a name and a type, a resource its
        name and three quantities, a cost its name and an integer value."""
        meta = obj.get("metadata")
        if meta is not None and not isinstance(meta, Mapping):
            raise ManifestError(NRT, "metadata", "must be a mapping")
        name = (meta or {}).get("name")
        if not name or not isinstance(name, str):
            raise ManifestError(NRT, "metadata.name", "is required (the node's name)")
        where = f"{NRT} {name}"
        zones = obj.get("zones")
        if not isinstance(zones, list):
            raise ManifestError(where, "zones", "is required: a list of zones")
        return cls(
            name,
            tuple(_zone(z, where, f"zones[{i}]") for i, z in enumerate(zones)),
            _attributes(obj.get("attributes"), where),
            _policies(obj.get("topologyPolicies"), where),
        )


def _list(raw: Any, where: str, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ManifestError(where, path, f"must be a list (got {type(raw).__name__})")
    return raw


def _string(item: Mapping[str, Any], key: str, where: str, path: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise ManifestError(where, f"{path}.{key}", f"is required: a string (got {value!r})")
    return value


def _mapping(item: Any, where: str, path: str) -> Mapping[str, Any]:
    if not isinstance(item, Mapping):
        raise ManifestError(where, path, f"must be a mapping (got {type(item).__name__})")
    return item


def _zone(raw: Any, where: str, path: str) -> Zone:
    zone = _mapping(raw, where, path)
    costs = []
    for i, item in enumerate(_list(zone.get("costs"), where, f"{path}.costs")):
        cost = _mapping(item, where, f"{path}.costs[{i}]")
        value = cost.get("value")
        if isinstance(value, bool) or not isinstance(value, int):
            raise ManifestError(
                where, f"{path}.costs[{i}].value", f"is required: an integer (got {value!r})"
            )
        costs.append((_string(cost, "name", where, f"{path}.costs[{i}]"), value))
    resources = []
    for i, item in enumerate(_list(zone.get("resources"), where, f"{path}.resources")):
        at = f"{path}.resources[{i}]"
        resource = _mapping(item, where, at)
        rname = _string(resource, "name", where, at)
        amounts = [_amount(rname, resource, key, where, at) for key in _AMOUNTS]
        resources.append(ZoneResource(rname, amounts[2], amounts[0], amounts[1]))
    return Zone(
        _string(zone, "name", where, path),
        _string(zone, "type", where, path),
        tuple(costs),
        tuple(resources),
    )


_AMOUNTS = ("capacity", "allocatable", "available")


def _amount(name: str, resource: Mapping[str, Any], key: str, where: str, path: str) -> int:
    raw = resource.get(key)
    if raw is None or isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise ManifestError(where, f"{path}.{key}", f"is required: a quantity (got {raw!r})")
    try:
        return parse_milli(raw) if name == CPU else parse_quantity(raw)
    except QuantityError as exc:
        raise ManifestError(where, f"{path}.{key}", str(exc)) from exc


def _attributes(raw: Any, where: str) -> tuple[tuple[str, str], ...]:
    found = []
    for i, item in enumerate(_list(raw, where, "attributes")):
        attribute = _mapping(item, where, f"attributes[{i}]")
        name = _string(attribute, "name", where, f"attributes[{i}]")
        value = _string(attribute, "value", where, f"attributes[{i}]")
        if name in _READ_ATTRIBUTES:
            found.append((name, value))
    return tuple(found)


def _policies(raw: Any, where: str) -> tuple[str, ...]:
    policies = _list(raw, where, "topologyPolicies")
    for i, policy in enumerate(policies):
        if not isinstance(policy, str):
            raise ManifestError(
                where, f"topologyPolicies[{i}]", f"must be a string (got {policy!r})"
            )
    return tuple(policies)


#: NodeResourceTopology as a custom kind: watched when a profile enables
#: NodeResourceTopologyMatch; cluster-scoped, one per node, named after it.
NODE_RESOURCE_TOPOLOGIES = CustomKind(
    kind=NRT,
    group="topology.node.k8s.io",
    version="v1alpha2",
    plural="noderesourcetopologies",
    namespaced=False,
    from_manifest=NodeResourceTopology.from_manifest,
    from_record=NodeResourceTopology.from_record,
    crd_file="deploy/crds/noderesourcetopologies.yaml",
)
