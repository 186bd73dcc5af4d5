"""After a run: every pod bound once, each with its `bound` event, the hash chain intact."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import kubernetes.client

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.kube import NAMESPACE
from eventsched.events import EventStore


def bound_twice(uids: Iterable[str]) -> dict[str, int]:
    """uid -> number of `bound` events, for the uids logged more than once."""
    return {uid: n for uid, n in Counter(uids).items() if n > 1}


def without_decision(api_bound: Mapping[str, str], logged: Iterable[str]) -> list[str]:
    """Names of pods bound in the API (name -> uid) whose uid has no `bound` event."""
    have = set(logged)
    return sorted(name for name, uid in api_bound.items() if uid not in have)


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

    @property
    def ok(self) -> bool:
        return (
            self.bound_api == self.pods
            and not self.bound_twice
            and not self.conflicts
            and not self.wrong_node
            and not self.without_decision
            and self.chain_ok
        )

    def line(self) -> str:
        return (
            f"bound {self.bound_api}/{self.pods} (API), {self.bound_events} `bound` events; "
            f"bound twice: {len(self.bound_twice)}; 409 on our Bindings: {len(self.conflicts)}; "
            f"log node != API node: {len(self.wrong_node)}; bound without decision: "
            f"{len(self.without_decision)}; hash chain {'verifies' if self.chain_ok else 'BROKEN'}"
        )


def check(cp: ControlPlane, url: str, pods: int) -> Checks:
    """Every pod bound once, each with its `bound` event, on the node the API shows."""
    client = cp.api_client()
    try:
        core: Any = kubernetes.client.CoreV1Api(client)
        raw = core.list_namespaced_pod(NAMESPACE, _preload_content=False)
        listed: list[dict[str, Any]] = json.loads(raw.data)["items"]
    finally:
        client.close()
    on_node = [(p["metadata"], p["spec"]["nodeName"]) for p in listed if p["spec"].get("nodeName")]
    api_node = {str(meta["uid"]): str(node) for meta, node in on_node}
    api_bound = {str(meta["name"]): str(meta["uid"]) for meta, _ in on_node}
    with EventStore.connect(url) as store:
        bound = [e for e in store.read(kinds=["bound"]) if e.namespace == NAMESPACE]
        failed = [e for e in store.read(kinds=["bind_failed"]) if e.namespace == NAMESPACE]
        chain = store.verify_chain()
    return Checks(
        pods=pods,
        bound_api=len(api_bound),
        bound_events=len(bound),
        bound_twice=bound_twice(e.uid or "" for e in bound),
        conflicts=sorted(str(e.name) for e in failed if e.data.get("code") == 409),
        wrong_node=sorted(
            str(e.name) for e in bound if e.uid in api_node and api_node[e.uid] != e.node
        ),
        without_decision=without_decision(api_bound, (e.uid or "" for e in bound)),
        chain_ok=chain.ok,
    )
