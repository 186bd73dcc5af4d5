"""Pods and nodes decoded with only the fields the scheduler reads.

Most of a listed pod or node is what no scheduling decision reads: its
managedFields (a third of a pod's JSON), a node's conditions, addresses and
nodeInfo, a container's command, environment and probes. Decoding all of it
into dicts was the largest single cost of a restart (a 17 MB list of 10,000
pods). msgspec decodes into the structs below and skips every other field
without building it; `to_builtins` then gives back plain dicts holding
exactly the fields listed, with their values as the API sent them (an absent
field stays absent, a null stays None), which is what `Pod.from_manifest` and
`Node.from_manifest` read.

The structs name each field the model reads (tests/cluster/test_slim.py
records every key the model's readers touch and checks it is kept here).
An answer whose shape the structs do not accept (a field of an unexpected
type) is decoded whole instead: a surprise costs time, never a field.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import msgspec
import orjson

from eventsched.cluster.kube.informer import Decoders
from eventsched.cluster.kube.rest import Decode

#: An absent field stays absent (omitted by `to_builtins`); any value, null included, is kept.
_ABSENT: Any = msgspec.UNSET


class _Struct(msgspec.Struct, omit_defaults=True):
    """Fields not named are skipped by the decoder."""


class _ObjectMeta(_Struct):
    name: Any = _ABSENT
    namespace: Any = _ABSENT
    uid: Any = _ABSENT
    resourceVersion: Any = _ABSENT
    labels: Any = _ABSENT
    annotations: Any = _ABSENT
    ownerReferences: Any = _ABSENT
    creationTimestamp: Any = _ABSENT
    deletionTimestamp: Any = _ABSENT


class _Container(_Struct):
    name: Any = _ABSENT
    image: Any = _ABSENT
    resources: Any = _ABSENT
    ports: Any = _ABSENT
    restartPolicy: Any = _ABSENT


class _PodSpec(_Struct):
    containers: list[_Container] | msgspec.UnsetType | None = _ABSENT
    initContainers: list[_Container] | msgspec.UnsetType | None = _ABSENT
    overhead: Any = _ABSENT
    priority: Any = _ABSENT
    schedulerName: Any = _ABSENT
    nodeName: Any = _ABSENT
    nodeSelector: Any = _ABSENT
    tolerations: Any = _ABSENT
    affinity: Any = _ABSENT
    schedulingGates: Any = _ABSENT
    topologySpreadConstraints: Any = _ABSENT
    volumes: Any = _ABSENT
    preemptionPolicy: Any = _ABSENT


class _PodStatus(_Struct):
    phase: Any = _ABSENT
    nominatedNodeName: Any = _ABSENT
    startTime: Any = _ABSENT
    #: PodScheduled (the recorder's condition updates) and DisruptionTarget.
    conditions: Any = _ABSENT


class _Pod(_Struct):
    metadata: _ObjectMeta | msgspec.UnsetType | None = _ABSENT
    spec: _PodSpec | msgspec.UnsetType | None = _ABSENT
    status: _PodStatus | msgspec.UnsetType | None = _ABSENT


class _NodeMeta(_Struct):
    name: Any = _ABSENT
    uid: Any = _ABSENT
    resourceVersion: Any = _ABSENT
    labels: Any = _ABSENT


class _NodeSpec(_Struct):
    taints: Any = _ABSENT
    unschedulable: Any = _ABSENT


class _NodeStatus(_Struct):
    allocatable: Any = _ABSENT
    capacity: Any = _ABSENT
    images: Any = _ABSENT


class _Node(_Struct):
    metadata: _NodeMeta | msgspec.UnsetType | None = _ABSENT
    spec: _NodeSpec | msgspec.UnsetType | None = _ABSENT
    status: _NodeStatus | msgspec.UnsetType | None = _ABSENT


class _ListMeta(_Struct):
    resourceVersion: Any = _ABSENT


_Item = TypeVar("_Item", _Pod, _Node)


class _List(_Struct, Generic[_Item]):
    metadata: _ListMeta | msgspec.UnsetType = _ABSENT
    items: list[_Item] | msgspec.UnsetType | None = _ABSENT


class _Event(_Struct):
    type: Any = _ABSENT
    object: msgspec.Raw | msgspec.UnsetType = _ABSENT


_ITEM = {"Pod": _Pod, "Node": _Node}
_LIST = {"Pod": _List[_Pod], "Node": _List[_Node]}
#: Watch events whose object is not one of the kind's (a Status, a bookmark's stub).
_WHOLE_EVENTS = frozenset({"ERROR", "BOOKMARK"})


def _with_fallback(decoder: msgspec.json.Decoder[Any]) -> Decode:
    def decode(data: bytes) -> Any:
        try:
            return msgspec.to_builtins(decoder.decode(data))
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
