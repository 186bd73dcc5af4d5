"""Helpers to run one plugin over a small NodeTable."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from eventsched.framework import LEGACY_FEATURES, CycleState, Features, Handle, Status
from eventsched.model import Node, NodeTable, Pod
from eventsched.plugins import full_registry


def make_node(
    name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", **extra: Any
) -> Node:
    labels = extra.pop("labels", {})
    spec = {"taints": extra.pop("taints", []), "unschedulable": extra.pop("unschedulable", False)}
    allocatable = {"cpu": cpu, "memory": memory, "pods": pods, **extra}
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": labels},
            "spec": spec,
            "status": {"allocatable": allocatable},
        }
    )


def make_pod(name: str = "p", requests: dict[str, Any] | None = None, **spec: Any) -> Pod:
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    container = {"name": "c", "resources": {"requests": requests or {}}}
    return Pod.from_manifest({"metadata": meta, "spec": {"containers": [container], **spec}})


def plugin(
    name: str,
    args: dict[str, Any] | None = None,
    table: NodeTable | None = None,
    features: Features = LEGACY_FEATURES,
) -> Any:
    return full_registry().factory(name)(args or {}, Handle(table), features)


def run_filter(
    name: str,
    pod: Pod,
    table: NodeTable,
    args: dict[str, Any] | None = None,
    features: Features = LEGACY_FEATURES,
) -> list[Status | None]:
    """Per node: None when it passes, else its status (PreFilter run first, as the runtime does)."""
    p = plugin(name, args, table, features)
    state = CycleState()
    if hasattr(p, "pre_filter"):
        _, status = p.pre_filter(state, pod, table)
        if status is not None and status.is_skip:
            return [None] * len(table)
    result = p.filter_batch(state, pod, table, np.arange(len(table)))
    return [None if v < 0 else result.statuses[v] for v in result.verdict]


def run_score(
    name: str,
    pod: Pod,
    table: NodeTable,
    args: dict[str, Any] | None = None,
    features: Features = LEGACY_FEATURES,
) -> tuple[list[int], list[int]]:
    """Raw and normalized scores for every node (both 0 where PreScore Skips)."""
    p = plugin(name, args, table, features)
    state = CycleState()
    rows = np.arange(len(table))
    if hasattr(p, "pre_filter"):
        p.pre_filter(state, pod, table)
    if hasattr(p, "pre_score"):
        status = p.pre_score(state, pod, table, rows)
        if status is not None and status.is_skip:
            return [0] * len(table), [0] * len(table)
    raw = p.score_batch(state, pod, table, rows)
    normalized = (
        p.normalize_score(state, pod, raw.copy(), rows) if hasattr(p, "normalize_score") else raw
    )
    return [int(x) for x in raw], [int(x) for x in normalized]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)
