"""Pods and nodes decoded with only the fields the scheduler reads.

Most of a listed pod or node is what no scheduling decision reads: its
managedFields (a third of a pod's JSON), a node's conditions, addresses and
nodeInfo, a container's command, environment and probes. Decoding all of it
into dicts was the largest single cost of a restart (a 17 MB list of 10,000
pods). msgspec decodes into the shapes below (TypedDicts) and skips every
other field without building it: plain dicts holding exactly the fields
listed, with their values as the API sent them (an absent field stays absent,
a null stays None), which is what `Pod.from_manifest` and `Node.from_manifest`
read.

The shapes name each field the model reads (tests/cluster/test_slim.py
records every key the model's readers touch and checks it is kept here).
An answer whose shape they do not accept (a field of an unexpected type) is
decoded whole instead: a surprise costs time, never a field.
"""

from __future__ import annotations

from typing import Any, Generic, TypedDict, TypeVar

import msgspec
import orjson

from eventsched.cluster.kube.informer import Decoders
from eventsched.cluster.kube.rest import Decode

# Each shape is a TypedDict with every key optional: msgspec builds the plain dicts
# directly, skipping every key not named, and a key the answer does not have stays
# absent. (Decoding into msgspec Structs and converting them with `to_builtins`
# gave the same dicts in 2.3-2.8x the time: 600-790 ms against 270 ms for a list of
# 10,000 pods.)


class _ObjectMeta(TypedDict, total=False):
    name: Any
    namespace: Any
    uid: Any
    resourceVersion: Any
    #: The conditions the scheduler writes carry it as observedGeneration (v1.34+).
    generation: Any
    labels: Any
    annotations: Any
    ownerReferences: Any
    creationTimestamp: Any
    deletionTimestamp: Any


class _VolumeMount(TypedDict, total=False):
    #: NodeDeclaredFeatures (VolumeBindMountOptions); nothing else of a mount is read.
    bindMountOptions: Any


class _Container(TypedDict, total=False):
    name: Any
    image: Any
    resources: Any
    ports: Any
    restartPolicy: Any
    #: NodeDeclaredFeatures (RestartAllContainersOnContainerExits).
    restartPolicyRules: Any
    volumeMounts: list[_VolumeMount] | None


class _PodSpec(TypedDict, total=False):
    containers: list[_Container] | None
    initContainers: list[_Container] | None
    ephemeralContainers: list[_Container] | None
    #: NodeDeclaredFeatures (UserNamespacesHostNetworkSupport).
    hostNetwork: Any
    hostUsers: Any
    overhead: Any
    priority: Any
    schedulerName: Any
    nodeName: Any
    nodeSelector: Any
    tolerations: Any
    affinity: Any
    schedulingGates: Any
    topologySpreadConstraints: Any
    volumes: Any
    preemptionPolicy: Any
    #: Pod-level resources (PodLevelResources, v1.34 accounting).
    resources: Any


class _ContainerStatus(TypedDict, total=False):
    """What a resized container reports (the v1.33+ accounting of a resized pod)."""

    name: Any
    allocatedResources: Any
    resources: Any


class _PodStatus(TypedDict, total=False):
    phase: Any
    nominatedNodeName: Any
    startTime: Any
    #: PodScheduled (the recorder's condition updates), DisruptionTarget and PodResizePending.
    conditions: Any
    containerStatuses: list[_ContainerStatus] | None
    initContainerStatuses: list[_ContainerStatus] | None
    #: The pod's own allocated and actual resources (InPlacePodLevelResourcesVerticalScaling).
    allocatedResources: Any
    resources: Any
    #: Infeasible marks a resize the node cannot take (v1.27-v1.32).
    resize: Any


class _Pod(TypedDict, total=False):
    metadata: _ObjectMeta | None
    spec: _PodSpec | None
    status: _PodStatus | None


class _NodeMeta(TypedDict, total=False):
    name: Any
    uid: Any
    resourceVersion: Any
    labels: Any


class _NodeSpec(TypedDict, total=False):
    taints: Any
    unschedulable: Any


class _NodeStatus(TypedDict, total=False):
    allocatable: Any
    capacity: Any
    images: Any
    declaredFeatures: Any


class _Node(TypedDict, total=False):
    metadata: _NodeMeta | None
    spec: _NodeSpec | None
    status: _NodeStatus | None


class _ListMeta(TypedDict, total=False):
    resourceVersion: Any


_Item = TypeVar("_Item", _Pod, _Node)


class _List(TypedDict, Generic[_Item], total=False):
    metadata: _ListMeta
    items: list[_Item] | None


class _Event(msgspec.Struct):
    """A watch event's type, and its object left undecoded until the type is known."""

    type: Any = msgspec.UNSET
    object: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET


_ITEM: dict[str, Any] = {"Pod": _Pod, "Node": _Node}
_LIST: dict[str, Any] = {"Pod": _List[_Pod], "Node": _List[_Node]}
#: Watch events whose object is not one of the kind's (a Status, a bookmark's stub).
_WHOLE_EVENTS = frozenset({"ERROR", "BOOKMARK"})


def _with_fallback(decoder: msgspec.json.Decoder[Any]) -> Decode:
    def decode(data: bytes) -> Any:
        try:
            return decoder.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return orjson.loads(data)  # an unexpected shape: all of it, as sent

    return decode


def list_decoder(kind: str) -> Decode:
    """Decodes a list answer of `kind` (Pod or Node) to dicts of the fields read."""
    return _with_fallback(msgspec.json.Decoder(_LIST[kind]))


def item_decoder(kind: str) -> Decode:
    """Decodes one object of `kind` (Pod or Node) to a dict of the fields read."""
    return _with_fallback(msgspec.json.Decoder(_ITEM[kind]))


def event_decoder(kind: str) -> Decode:
    """Decodes a watch event line whose object is a `kind`; ERROR and BOOKMARK events'
    objects are decoded whole (a Status carries the code and message the informer reads)."""
    event = msgspec.json.Decoder(_Event)
    item = item_decoder(kind)

    def decode(line: bytes) -> Any:
        try:
            head = event.decode(line)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return orjson.loads(line)
        if head.object is msgspec.UNSET:
            return orjson.loads(line)
        raw = bytes(head.object)
        obj = orjson.loads(raw) if head.type in _WHOLE_EVENTS else item(raw)
        return {"type": head.type, "object": obj}

    return decode


def slim_decoders(kind: str) -> Decoders:
    """How the informer of `kind` (Pod or Node) reads its lists and watch lines: with only
    the fields the scheduler reads. The prefetched first lists (prefetch.py) are read
    with the same `list`."""
    return Decoders(list=list_decoder(kind), event=event_decoder(kind))
