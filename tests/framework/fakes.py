"""Upstream's fake plugins (pkg/scheduler/testing/framework/fake_plugins.go and the ones
schedule_one_test.go defines), for porting its test tables: each is built under the name
it is registered with, its behaviour from the test case's arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from eventsched.framework import (
    LEGACY_FEATURES,
    Code,
    CycleState,
    Features,
    Framework,
    Handle,
    NodeInfo,
    PluginRef,
    PreFilterResult,
    Profile,
    QueuedPodInfo,
    Registry,
    Status,
    default_normalize_score,
)
from eventsched.model import Node, NodeTable, Pod

#: `tf.ErrReasonFake`.
ERR_REASON_FAKE = "Nodes failed the fake plugin"


class Sort:
    name = "Sort"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.timestamp < b.timestamp


class FakePreFilter:
    """`tf.NewFakePreFilterPlugin(name, result, status)`: `nodes` (absent: all nodes),
    `code` and `message` (absent: Success)."""

    def __init__(self, name: str, args: Mapping[str, Any]) -> None:
        self.name = name
        nodes = args.get("nodes")
        self.result = None if nodes is None else PreFilterResult(frozenset(nodes))
        code = args.get("code")
        reasons = (args["message"],) if "message" in args else ()
        self.status = None if code is None else Status(Code.from_label(code), reasons)

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        return self.result, self.status


class FakeFilter:
    """`tf.NewFakeFilterPlugin(map[node]code)`: "injecting failure for pod <name>"."""

    def __init__(self, name: str, args: Mapping[str, Any]) -> None:
        self.name = name
        self.codes = {node: Code.from_label(code) for node, code in args.get("codes", {}).items()}

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        code = self.codes.get(node.name)
        if code is None:
            return None
        return Status(code, (f"injecting failure for pod {pod.name}",))


class FalseFilter:
    """`tf.FalseFilterPlugin`: every node Unschedulable with ErrReasonFake."""

    def __init__(self, name: str, args: Mapping[str, Any]) -> None:
        self.name = name

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        return Status.unschedulable(ERR_REASON_FAKE)


class TrueFilter:
    def __init__(self, name: str, args: Mapping[str, Any]) -> None:
        self.name = name

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        return None


class MatchFilter:
    """`tf.MatchFilterPlugin`: a node passes when it is named as the pod is."""

    def __init__(self, name: str, args: Mapping[str, Any]) -> None:
        self.name = name

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        return None if node.name == pod.name else Status.unschedulable(ERR_REASON_FAKE)


class NumericMap:
    """schedule_one_test.go's numericMapPlugin: the node's name read as a number;
    `reverse`: reverseNumericMapPlugin (normalized so the smallest number scores 100)."""

    def __init__(self, name: str, args: Mapping[str, Any]) -> None:
        self.name = name
        self.reverse = bool(args.get("reverse", False))

    def score_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray
    ) -> np.ndarray:
        return np.array([int(table.names[int(r)]) for r in rows], dtype=np.int64)

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: np.ndarray, rows: np.ndarray
    ) -> np.ndarray:
        if not self.reverse:
            return scores
        return default_normalize_score(100, True, scores)


class EqualPrioritizer:
    """`tf.NewEqualPrioritizerPlugin`: every node scores 1."""

    def __init__(self, name: str, args: Mapping[str, Any]) -> None:
        self.name = name

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> int:
        return 1


class SkippedFilter:
    """schedule_one_test.go's "FakeFilter2": PreFilter answers Skip, so its Filter, which
    would fail every node with an Error, must not run."""

    def __init__(self, name: str, args: Mapping[str, Any]) -> None:
        self.name = name

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        return None, Status(Code.SKIP)

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        return Status.as_error("this Filter should have been skipped")


class FakePostFilter:
    """A PostFilter answering `code` with `message` (and no result)."""

    def __init__(self, name: str, args: Mapping[str, Any]) -> None:
        self.name = name
        self.status = Status(Code.from_label(args["code"]), (args["message"],))
        self.seen: list[dict[str, Status]] = []

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[None, Status]:
        self.seen.append(dict(statuses))
        return None, self.status


KINDS: dict[str, type] = {
    "SkippedFilter": SkippedFilter,
    "FakePostFilter": FakePostFilter,
    "FakePreFilter": FakePreFilter,
    "FakeFilter": FakeFilter,
    "FalseFilter": FalseFilter,
    "TrueFilter": TrueFilter,
    "MatchFilter": MatchFilter,
    "NumericMap": NumericMap,
    "EqualPrioritizer": EqualPrioritizer,
}


def _factory(kind: type, name: str) -> Any:
    return lambda args, handle, features=None: kind(name, args)


def framework(
    table: NodeTable,
    plugins: Mapping[str, tuple[str, Mapping[str, Any]]],
    points: Mapping[str, tuple[str, ...]],
    features: Features = LEGACY_FEATURES,
) -> Framework:
    """A profile of fakes: `plugins` name -> (kind, args); `points` extension point ->
    plugin names (scores weigh 1). The plugin under each name is built as that name."""
    factories: dict[str, Any] = {"Sort": lambda args, handle, features=None: Sort()}
    for name, (kind, _) in plugins.items():
        factories[name] = _factory(KINDS[kind], name)
    refs = {point: tuple(PluginRef(n) for n in names) for point, names in points.items()}
    profile = Profile(
        scheduler_name="test",
        plugins={"queueSort": (PluginRef("Sort"),), **refs},
        plugin_args={name: dict(args) for name, (_, args) in plugins.items()},
        features=features,
    )
    return Framework(profile, Registry(factories), Handle(table))


def nodes(*names: str) -> NodeTable:
    return NodeTable([Node(n, {"cpu": 4000, "memory": 8 << 30, "pods": 110}) for n in names])


def pod(name: str) -> Pod:
    return Pod(uid=name, namespace="default", name=name, scheduler_name="test")
