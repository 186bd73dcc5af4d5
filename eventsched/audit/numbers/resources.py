"""NodeResourcesFit's rejections in numbers: the pod's request against each node's room."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from eventsched.audit.numbers.figure import Figure, amount
from eventsched.model import NodeTable, Pod
from eventsched.model.resources import PODS

PLUGIN = "NodeResourcesFit"
_INSUFFICIENT = "Insufficient "
_TOO_MANY_PODS = "Too many pods"


@dataclass(frozen=True, slots=True)
class Room:
    node: str
    allocatable: int
    requested: int

    @property
    def free(self) -> int:
        return self.allocatable - self.requested


def resource_figures(
    pod: Pod, table: NodeTable, rejected: Sequence[tuple[str, Sequence[str]]], limit: int
) -> list[Figure]:
    """For each resource a rejection names, the `limit` rejected nodes with the most room:
    "cpu: requests 64, node worker-2 has 15.89 allocatable, 4.25 requested, 11.64 free"."""
    by_resource: dict[str, list[str]] = {}
    for node, reasons in rejected:
        for reason in reasons:
            resource = _resource_of(reason)
            if resource is not None:
                by_resource.setdefault(resource, []).append(node)
    figures: list[Figure] = []
    for resource, nodes in by_resource.items():
        asked = 1 if resource == PODS else int(pod.requests.get(resource, 0))
        rooms = sorted(
            (_room(table, node, resource) for node in nodes),
            key=lambda r: (-r.free, r.node),
        )
        for room in rooms[:limit]:
            figures.append(_figure(resource, asked, room))
        if len(rooms) > limit:
            figures.append(
                Figure(PLUGIN, f"{resource}: {len(rooms) - limit} more node(s) with less free")
            )
    return figures


def _resource_of(reason: str) -> str | None:
    if reason == _TOO_MANY_PODS:
        return PODS
    if reason.startswith(_INSUFFICIENT):
        return reason[len(_INSUFFICIENT) :]
    return None


def _room(table: NodeTable, node: str, resource: str) -> Room:
    row = table.row_of(node)
    col = table.column(resource)
    if row is None or col is None:
        return Room(node, 0, 0)
    return Room(node, int(table.allocatable[row, col]), int(table.requested[row, col]))


def _figure(resource: str, asked: int, room: Room) -> Figure:
    verb = "asks 1 more pod" if resource == PODS else f"requests {amount(resource, asked)}"
    text = (
        f"{resource}: {verb}, node {room.node} has {amount(resource, room.allocatable)} "
        f"allocatable, {amount(resource, room.requested)} requested, "
        f"{amount(resource, room.free)} free"
    )
    values = {
        "resource": resource,
        "request": asked,
        "allocatable": room.allocatable,
        "requested": room.requested,
        "free": room.free,
    }
    return Figure(PLUGIN, text, room.node, values)
