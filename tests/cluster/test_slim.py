"""Pods and nodes decoded slim (cluster/kube/slim.py) read exactly as decoded whole.

The shapes name the fields kept; a field the model reads but the shapes
leave out would be silently missing on a real cluster. So the model's
readers are run over a manifest that records every key they touch, and each
key must be one the shapes keep.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any

import orjson
import pytest
from hypothesis import given

from eventsched.cluster.kube import slim
from eventsched.config.featuregates import REFERENCES, features_for
from eventsched.model import Node, Pod
from eventsched.model.accounting import (
    RESIZE_ACTUAL,
    RESIZE_ALLOCATED,
    Accounting,
)
from tests.fuzz.strategies import (
    NODE_PATHS,
    POD_PATHS,
    RESOURCE_PATHS,
    RICH_NODE,
    RICH_POD,
    mutated,
    resized_pod,
    valid_node,
    valid_pod,
)

Path = tuple[str, ...]

#: Each reference version's accounting, and the older resize forms (v1.27-v1.32 read
#: `status.resize`): every field any of them reads must be kept.
ACCOUNTINGS = [
    *(features_for(v, {"InPlacePodVerticalScaling": True}).accounting for v in REFERENCES),
    Accounting(resize=RESIZE_ALLOCATED),
    Accounting(resize=RESIZE_ACTUAL, non_missing=True),
]
EVERY_KEY = "*"  # a mapping read whole (iterated)
ITEM = "[]"  # an element of a list

#: What the adapter reads of a listed pod besides the model: the informer's key, the
#: resourceVersion Events refer to, and the PodScheduled condition it updates.
ADAPTER_READS: list[Path] = [
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("metadata", "resourceVersion"),
    ("status", "conditions"),
]


class Recorded(Mapping[str, Any]):
    """A manifest that notes the path of every key read from it."""

    def __init__(self, data: Mapping[str, Any], path: Path, seen: set[Path]) -> None:
        self._data, self._path, self._seen = data, path, seen

    def __getitem__(self, key: str) -> Any:
        self._seen.add((*self._path, key))
        return recorded(self._data[key], (*self._path, key), self._seen)

    def __iter__(self) -> Iterator[str]:
        self._seen.add((*self._path, EVERY_KEY))
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def recorded(value: Any, path: Path, seen: set[Path]) -> Any:
    if isinstance(value, Mapping):
        return Recorded(value, path, seen)
    if isinstance(value, list):
        return [recorded(item, (*path, ITEM), seen) for item in value]
    return value


def paths_read(reader: Callable[[Any], Any], manifest: Mapping[str, Any]) -> set[Path]:
    seen: set[Path] = set()
    reader(recorded(manifest, (), seen))
    return seen


def kept(struct: Any, path: Path) -> bool:
    """Whether decoding into `struct` (a TypedDict, a list or union of them, Any) keeps
    what is at `path`."""
    if not path or struct is Any:
        return True
    origin = typing.get_origin(struct)
    if origin in (typing.Union, types.UnionType):
        return any(kept(t, path) for t in typing.get_args(struct) if t is not type(None))
    if origin is list:
        return path[0] == ITEM and kept(typing.get_args(struct)[0], path[1:])
    if typing.is_typeddict(struct):
        fields = typing.get_type_hints(struct)
        return path[0] in fields and kept(fields[path[0]], path[1:])
    return False


@pytest.mark.parametrize("accounting", ACCOUNTINGS, ids=str)
def test_every_field_the_scheduler_reads_of_a_pod_is_kept(accounting: Accounting) -> None:
    reader = partial(Pod.from_manifest, accounting=accounting)
    read = paths_read(reader, RICH_POD) | set(ADAPTER_READS)
    assert ("spec", "containers", ITEM, "resources") in read  # the recording works
    if accounting.uses_status:
        assert ("status", "containerStatuses", ITEM, "allocatedResources") in read
    missing = sorted(p for p in read if not kept(slim._Pod, p))
    assert missing == []


def test_every_field_the_scheduler_reads_of_a_node_is_kept() -> None:
    read = paths_read(Node.from_manifest, RICH_NODE) | {("metadata", "resourceVersion")}
    assert ("status", "allocatable", EVERY_KEY) in read
    missing = sorted(p for p in read if not kept(slim._Node, p))
    assert missing == []


def test_what_no_decision_reads_is_left_out() -> None:
    listed = {"metadata": {"resourceVersion": "9"}, "items": [RICH_POD]}
    (pod,) = slim.list_decoder("Pod")(orjson.dumps(listed))["items"]
    assert "managedFields" not in pod["metadata"] and "qosClass" not in pod["status"]
    assert set(pod["spec"]["containers"][0]) == {"name", "image", "resources", "ports"}
    assert pod["status"]["conditions"] == RICH_POD["status"]["conditions"]  # nulls kept
    assert set(pod["status"]["containerStatuses"][0]) == {"name", "allocatedResources", "resources"}
    for accounting in ACCOUNTINGS:
        assert Pod.from_manifest(pod, accounting=accounting) == Pod.from_manifest(
            RICH_POD, accounting=accounting
        )
    (node,) = slim.list_decoder("Node")(orjson.dumps({"items": [RICH_NODE]}))["items"]
    assert set(node["status"]) == {"capacity", "allocatable", "images", "declaredFeatures"}
    assert Node.from_manifest(node) == Node.from_manifest(RICH_NODE)


def outcome(reader: Callable[[Any], Any], manifest: Any) -> Any:
    """What the model makes of a manifest: the object, or the refusal's text."""
    try:
        return reader(manifest)
    except (ValueError, TypeError, AttributeError) as exc:
        return f"{type(exc).__name__}: {exc}"


def same_either_way(kind: str, reader: Callable[[Any], Any], manifest: Any) -> None:
    try:
        data = orjson.dumps({"items": [manifest]})
    except orjson.JSONEncodeError:
        return  # an integer beyond 64 bits: JSON from the API server has none
    whole = orjson.loads(data)["items"][0]
    (item,) = slim.list_decoder(kind)(data)["items"]
    assert outcome(reader, item) == outcome(reader, whole)
    event = orjson.dumps({"type": "MODIFIED", "object": manifest})
    assert outcome(reader, slim.event_decoder(kind)(event)["object"]) == outcome(reader, whole)


@given(mutated(valid_pod("odd"), POD_PATHS))
def test_any_pod_reads_the_same_slim_or_whole(manifest: dict[str, Any]) -> None:
    same_either_way("Pod", Pod.from_manifest, manifest)


@given(mutated(resized_pod("odd"), RESOURCE_PATHS))
def test_any_pod_counted_by_its_status_reads_the_same_slim_or_whole(
    manifest: dict[str, Any],
) -> None:
    for accounting in ACCOUNTINGS:
        same_either_way("Pod", partial(Pod.from_manifest, accounting=accounting), manifest)


@given(mutated(valid_node("odd"), NODE_PATHS))
def test_any_node_reads_the_same_slim_or_whole(manifest: dict[str, Any]) -> None:
    same_either_way("Node", Node.from_manifest, manifest)


def test_a_shape_slim_refuses_is_decoded_whole() -> None:
    odd = {**valid_pod("odd"), "spec": {"containers": "not a list"}}
    listed = orjson.dumps({"metadata": {"resourceVersion": "3"}, "items": [odd]})
    assert slim.list_decoder("Pod")(listed) == orjson.loads(listed)


def test_error_and_bookmark_events_keep_their_whole_object() -> None:
    decode = slim.event_decoder("Pod")
    gone = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}
    assert decode(orjson.dumps({"type": "ERROR", "object": gone})) == {
        "type": "ERROR",
        "object": gone,
    }
    mark = {"kind": "Pod", "metadata": {"resourceVersion": "12", "annotations": {"k8s.io/x": ""}}}
    assert decode(orjson.dumps({"type": "BOOKMARK", "object": mark}))["object"] == mark
