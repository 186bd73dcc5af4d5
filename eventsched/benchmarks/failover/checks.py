"""After a run: every pod bound once, each with its `bound` event after its decision, no
reservation left open, no pod left pending that fits, the hash chain intact."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import kubernetes.client

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.kube import NAMESPACE
from eventsched.events import EventStore, StoredEvent, rebuild
from eventsched.model.quantity import parse_milli, parse_quantity


def bound_twice(uids: Iterable[str]) -> dict[str, int]:
    """uid -> number of `bound` events, for the uids logged more than once."""
    return {uid: n for uid, n in Counter(uids).items() if n > 1}


def without_decision(api_bound: Mapping[str, str], logged: Iterable[str]) -> list[str]:
    """Names of pods bound in the API (name -> uid) whose uid has no `bound` event."""
    have = set(logged)
    return sorted(name for name, uid in api_bound.items() if uid not in have)


def bound_before_decided(events: Sequence[StoredEvent]) -> list[str]:
    """Names of pods whose `bound` event has no `reserved` of the same uid before it: a
    Binding whose decision was not in the log first (`events` in log order)."""
    decided: set[str] = set()
    out: list[str] = []
    for e in events:
        if e.kind == "reserved" and e.uid:
            decided.add(e.uid)
        elif e.kind == "bound" and e.uid not in decided:
            out.append(str(e.name))
    return sorted(out)


def unexplained_conflicts(refused: Iterable[str], injected: Collection[str]) -> list[str]:
    """Pods whose Binding was answered 409 more often than a fault proxy answered it so
    (`refused`, `injected`: one pod name per answer)."""
    left = Counter(refused)
    left.subtract(Counter(injected))
    return sorted(name for name, n in left.items() if n > 0)


@dataclass(frozen=True, slots=True)
class Room:
    """What a node has left: millicores, bytes of memory, pods."""

    cpu: int
    memory: int
    pods: int

    def fits(self, need: Room) -> bool:
        return need.cpu <= self.cpu and need.memory <= self.memory and need.pods <= self.pods

    def minus(self, used: Room) -> Room:
        return Room(self.cpu - used.cpu, self.memory - used.memory, self.pods - used.pods)


def _requests(pod: Mapping[str, Any]) -> Room:
    cpu = memory = 0
    for container in pod["spec"].get("containers", ()):
        requests = (container.get("resources") or {}).get("requests") or {}
        cpu += parse_milli(requests.get("cpu", "0"))
        memory += parse_quantity(requests.get("memory", "0"))
    return Room(cpu, memory, 1)


def pending_that_fit(
    nodes: Sequence[Mapping[str, Any]], pods: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Names of unbound pods whose requests fit on some node beside the pods bound to it
    (resources only: the benchmark's pods ask for nothing else)."""
    room: dict[str, Room] = {}
    for node in nodes:
        alloc = node["status"].get("allocatable") or {}
        room[node["metadata"]["name"]] = Room(
            parse_milli(alloc.get("cpu", "0")),
            parse_quantity(alloc.get("memory", "0")),
            parse_quantity(alloc.get("pods", "0")),
        )
    for pod in pods:
        node_name = pod["spec"].get("nodeName")
        if node_name in room:
            room[node_name] = room[node_name].minus(_requests(pod))
    return sorted(
        pod["metadata"]["name"]
        for pod in pods
        if not pod["spec"].get("nodeName")
        and any(left.fits(_requests(pod)) for left in room.values())
    )


@dataclass(slots=True)
class Checks:
    """After the run: counted from the log and the API."""

    pods: int
    bound_api: int = 0
    bound_events: int = 0
    bound_twice: dict[str, int] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)  # our Bindings answered 409
    wrong_node: list[str] = field(default_factory=list)  # log's node != API's node
    without_decision: list[str] = field(default_factory=list)
    chain_ok: bool = False
    #: pods with a reservation the log leaves open (its `reserved` not closed by `bound`
    #: or `unreserved`), as the projections fold it
    open_reservations: list[str] = field(default_factory=list)
    #: unbound pods that fit on a node
    pending_that_fit: list[str] = field(default_factory=list)
    #: pods whose `bound` event has no `reserved` before it in the log
    bound_before_decided: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            self.bound_api == self.pods
            and not self.bound_twice
            and not self.conflicts
            and not self.wrong_node
            and not self.without_decision
            and self.chain_ok
            and not self.open_reservations
            and not self.pending_that_fit
            and not self.bound_before_decided
        )

    def line(self) -> str:
        return (
            f"bound {self.bound_api}/{self.pods} (API), {self.bound_events} `bound` events; "
            f"bound twice: {len(self.bound_twice)}; 409 on our Bindings: {len(self.conflicts)}; "
            f"log node != API node: {len(self.wrong_node)}; bound without decision: "
            f"{len(self.without_decision)}; bound before its decision was logged: "
            f"{len(self.bound_before_decided)}; open reservations: "
            f"{len(self.open_reservations)}; pending that fit: {len(self.pending_that_fit)}; "
            f"hash chain {'verifies' if self.chain_ok else 'BROKEN'}"
        )


def _list(cp: ControlPlane) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(nodes, the benchmark's pods) as the API lists them."""
    client = cp.api_client()
    try:
        core: Any = kubernetes.client.CoreV1Api(client)
        pods = json.loads(core.list_namespaced_pod(NAMESPACE, _preload_content=False).data)
        nodes = json.loads(core.list_node(_preload_content=False).data)
    finally:
        client.close()
    return nodes["items"], pods["items"]


def check(cp: ControlPlane, url: str, pods: int, injected_409: Collection[str] = ()) -> Checks:
    """Every pod bound once, each with its `bound` event after its decision, on the node the
    API shows; no reservation open, no pod pending that fits. `injected_409`: the pods
    whose Binding a fault proxy answered 409 (once per answer), not counted as conflicts."""
    nodes, listed = _list(cp)
    on_node = [(p["metadata"], p["spec"]["nodeName"]) for p in listed if p["spec"].get("nodeName")]
    api_node = {str(meta["uid"]): str(node) for meta, node in on_node}
    api_bound = {str(meta["name"]): str(meta["uid"]) for meta, _ in on_node}
    with EventStore.connect(url) as store:
        ours = [
            e
            for e in store.read(kinds=["reserved", "bound", "bind_failed"])
            if e.namespace == NAMESPACE
        ]
        chain = store.verify_chain()
        still_open = rebuild(store.reader).open_reservations.values()
    bound = [e for e in ours if e.kind == "bound"]
    refused = [str(e.name) for e in ours if e.kind == "bind_failed" and e.data.get("code") == 409]
    return Checks(
        pods=pods,
        bound_api=len(api_bound),
        bound_events=len(bound),
        bound_twice=bound_twice(e.uid or "" for e in bound),
        conflicts=unexplained_conflicts(refused, injected_409),
        wrong_node=sorted(
            str(e.name) for e in bound if e.uid in api_node and api_node[e.uid] != e.node
        ),
        without_decision=without_decision(api_bound, (e.uid or "" for e in bound)),
        chain_ok=chain.ok,
        open_reservations=sorted(str(r.name) for r in still_open if r.namespace == NAMESPACE),
        pending_that_fit=pending_that_fit(nodes, listed),
        bound_before_decided=bound_before_decided(ours),
    )
