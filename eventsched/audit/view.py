"""Replay's view of the cluster as data: what a pruned log's base keeps, and seeding from it.

The view (nodes in table order, every observed pod, the cache's placements
with assumed ones, recorded plugin inputs, profiles by digest) is exactly
what `Replayer.fold` builds; saving it at a cut and seeding a replayer
from it must make every later attempt replay as if the whole log were
there (tests replay both ways).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from eventsched.events import EventStore, LogBase, read_base
from eventsched.events.projections import Projections
from eventsched.framework import Profile
from eventsched.model import Node, Pod

if TYPE_CHECKING:
    from eventsched.audit.replay import Replayer

__all__ = ["seed", "seeded", "view_state"]

R = TypeVar("R", bound="Replayer")


def view_state(replayer: Replayer) -> dict[str, Any]:
    """The replayer's view as JSON-ready data (what a base stores under "replay")."""
    return {
        "nodes": [node.to_record() for node in replayer.cache.table],
        "pods": [pod.to_record() for pod in replayer.pods.values()],
        "placements": [
            {"pod": pod.to_record(), "node": node, "assumed": assumed, "finished": finished}
            for pod, node, assumed, finished in replayer.cache.placements()
        ],
        "inputs": [
            {"plugin": plugin, "key": key, "value": value}
            for (plugin, key), value in replayer.inputs.items()
        ],
        "profiles": {d: p.to_record() for d, p in replayer.profiles.items()},
    }


def seed(replayer: Replayer, base: LogBase) -> None:
    """Start `replayer` where the pruned log starts: the view and projections of its base."""
    view = base.replay
    for record in view.get("nodes", []):
        replayer.cache.upsert_node(Node.from_record(record))
    for record in view.get("pods", []):
        pod = Pod.from_record(record)
        replayer.pods[pod.uid] = pod
    for placed in view.get("placements", []):
        replayer.cache.restore(
            Pod.from_record(placed["pod"]),
            str(placed["node"]),
            bool(placed["assumed"]),
            bool(placed["finished"]),
        )
    for item in view.get("inputs", []):
        if isinstance(item.get("value"), Mapping):
            replayer.inputs[(str(item["plugin"]), str(item["key"]))] = item["value"]
    for digest, record in (view.get("profiles") or {}).items():
        replayer.profiles[str(digest)] = Profile.from_record(record)
    replayer.projections = Projections.from_state(base.projections)


def seeded(replayer: R, store: EventStore) -> R:
    """`replayer`, seeded from the log's base when the log was pruned."""
    base = read_base(store)
    if base is not None:
        seed(replayer, base)
    return replayer
