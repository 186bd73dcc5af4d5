"""`ClusterView`: the view every scheduling decision reads, changed only by events."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from eventsched.events.vocabulary import is_listed, starts_empty_view, starts_relist
from eventsched.framework import Profile
from eventsched.model import Cache, Node, NodeTable, Pod
from eventsched.model.imagestates import ImageSummary
from eventsched.model.nominator import Nominator
from eventsched.model.objects import object_from_record
from eventsched.model.pvbinding import assumption_from_record
from eventsched.model.storage import StorageObjects
from eventsched.view.relist import Relist


class Fact(Protocol):
    """What the fold reads of an event: a stored event, or a record about to be appended."""

    @property
    def kind(self) -> str: ...
    @property
    def data(self) -> Mapping[str, Any]: ...
    @property
    def uid(self) -> str | None: ...
    @property
    def node(self) -> str | None: ...
    @property
    def plugin(self) -> str | None: ...


class ClusterView:
    """Nodes, pods, placements, plugin inputs and profiles, as the events applied so far say."""

    def __init__(self) -> None:
        self.cache = Cache()
        #: Every pod observed and not removed, by uid, as its last observation says.
        self.pods: dict[str, Pod] = {}
        #: The latest value each plugin recorded under each key (replay feeds them back).
        self.inputs: dict[tuple[str, str], Mapping[str, Any]] = {}
        #: Every configuration loaded, by digest.
        self.profiles: dict[str, Profile] = {}
        #: None: placements follow the log. A set (counterfactual replay): the caller
        #: places these pods itself, so the log's reservations and bindings are not
        #: applied, nor the node of these pods' observations.
        self.placed_by_caller: set[str] | None = None
        #: Between a `scheduler_started {view: listed}` and its `listed`: what the new
        #: process has listed so far (observations go here, not to the view, until then).
        self.relisting: Relist | None = None

    @property
    def table(self) -> NodeTable:
        return self.cache.table

    def apply(self, event: Fact) -> None:
        """Change the view as `event` says; kinds that say nothing about it are ignored."""
        fold = _FOLDS.get(event.kind)
        if fold is not None:
            fold(self, event)

    # -- the folds ----------------------------------------------------------------------

    def _node_observed(self, e: Fact) -> None:
        node = Node.from_record(e.data)
        if self.relisting is not None:
            self.relisting.nodes[node.name] = node
        else:
            self.cache.upsert_node(node)

    def _node_removed(self, e: Fact) -> None:
        if self.relisting is not None and e.node:
            self.relisting.nodes.pop(e.node, None)
        if e.node:
            self.cache.remove_node(e.node)

    def _pod_observed(self, e: Fact) -> None:
        pod = Pod.from_record(e.data)
        if self.relisting is not None:
            self.relisting.put_pod(pod)
        else:
            self._add_pod(pod)

    def _add_pod(self, pod: Pod) -> None:
        if self._hold_pod(pod):
            self.cache.add_or_update_pod(pod)

    def _hold_pod(self, pod: Pod) -> bool:
        """The pod as the view now has it, nominated as it says; True when the cache is to
        place it (on its node, and not placed by the caller)."""
        old = self.pods.get(pod.uid)
        self.pods[pod.uid] = pod
        if self._schedules(pod):
            self.nominated.observed(old, pod)
        return bool(pod.node_name) and not self._placed_by_caller(pod.uid)

    def _pod_removed(self, e: Fact) -> None:
        if self.relisting is not None and e.uid:
            self.relisting.drop_pod(e.uid)
        if e.uid:
            self.pods.pop(e.uid, None)
            self.cache.remove_pod(e.uid)
            self.nominated.delete(e.uid)

    def _schedules(self, pod: Pod) -> bool:
        """Whether a profile loaded so far schedules `pod`: only such pods can be nominated."""
        return any(p.scheduler_name == pod.scheduler_name for p in self.profiles.values())

    @property
    def nominated(self) -> Nominator:
        return self.table.nominated

    def _unschedulable(self, e: Fact) -> None:
        """A failed attempt: its PostFilter's nomination (`nominatedNodeName`, "" clears),
        or without one the pod's own status.nominatedNodeName."""
        pod = self.pods.get(e.uid or "")
        if pod is not None:
            override = e.data.get("nominatedNodeName")
            self.nominated.post_filtered(pod, None if override is None else str(override))

    def _preempted(self, e: Fact) -> None:
        """Lower-priority pods nominated to the node lose their nomination."""
        for lower in e.data.get("lowerNominated") or ():
            self.nominated.delete(str(lower.get("uid", "")))

    def _object_observed(self, e: Fact) -> None:
        obj = object_from_record(e.data)
        if self.relisting is not None:
            self.relisting.objects[obj.key] = obj
        else:
            self.table.objects.upsert(obj)

    def _object_removed(self, e: Fact) -> None:
        obj = object_from_record(e.data)
        if self.relisting is not None:
            self.relisting.objects.pop(obj.key, None)
        self.table.objects.remove(obj)

    def _reserved(self, e: Fact) -> None:
        pod = self.pods.get(e.uid or "")
        if self.placed_by_caller is not None or pod is None or not e.node:
            return
        self.nominated.delete(pod.uid)
        if self.cache.node_of(pod.uid) is None:
            self.cache.assume(pod, e.node)
        volumes = e.data.get("volumes") or ()
        self.storage.assume(pod.uid, (assumption_from_record(v) for v in volumes))

    def _unreserved(self, e: Fact) -> None:
        if e.uid and self.placed_by_caller is None:
            self.cache.forget(e.uid)
            self.storage.forget(e.uid)

    @property
    def storage(self) -> StorageObjects:
        return self.table.objects.storage

    def _bound(self, e: Fact) -> None:
        if e.uid and self.placed_by_caller is None:
            self.cache.finish_binding(e.uid)

    def _input_recorded(self, e: Fact) -> None:
        value = e.data.get("value")
        if e.plugin and isinstance(value, Mapping):
            self.inputs[(e.plugin, str(e.data.get("key", "")))] = value

    def _config_loaded(self, e: Fact) -> None:
        digest = str(e.data.get("digest", ""))
        if digest and digest not in self.profiles:
            self.profiles[digest] = Profile.from_record(e.data["profile"])

    def _maintenance(self, e: Fact) -> None:
        """A process that starts from an empty view: what it lists next is all there is.

        One that starts by listing (`view: listed`) gathers what it lists, starting from
        the view as the log had it (each object as last observed), until `listed` says
        which of them the view holds now, and in what order.
        """
        if is_listed(e.kind, e.data):
            if self.relisting is not None:
                self._install(self.relisting, e.data)
            return
        if not starts_empty_view(e.kind, e.data):
            return
        if not starts_relist(e.kind, e.data):
            self.relisting = None
        elif self.relisting is None:  # else a process stopped before its lists were in
            self.relisting = Relist.carried(self.cache.table, self.pods, self.table.objects)
        # Pods the caller places (counterfactual replay) stay where it put them:
        # the new process lists them again, and their observations place nothing.
        kept = [p for p in self.cache.placements() if self._placed_by_caller(p[0].uid)]
        self.cache.clear()
        self.nominated.clear()
        self.table.objects.clear()
        self.pods.clear()
        self.inputs.clear()
        for pod, node, assumed, finished in kept:
            self.cache.restore(pod, node, assumed, finished)  # counted once its node is back

    def _install(self, relisting: Relist, data: Mapping[str, Any]) -> None:
        """The lists are in: objects, nodes, then pods, each in the order listed."""
        listed = relisting.installed(data)
        self.relisting = None
        for obj in listed.objects:
            self.table.objects.upsert(obj)
        for node in listed.nodes:
            self.cache.upsert_node(node)
        placed = []
        for pod in listed.pods:
            if self._hold_pod(pod):
                placed.append(pod)
        # Placed all at once: 10,000 pods one by one cost a restart about 0.1 s more.
        self.cache.add_pods(placed)

    def _placed_by_caller(self, uid: str) -> bool:
        return self.placed_by_caller is not None and uid in self.placed_by_caller

    # -- saved form ---------------------------------------------------------------------

    def to_state(self) -> dict[str, Any]:
        """The view as JSON-ready data: what a pruned log's base keeps, and what tests compare."""
        return {
            "nodes": [node.to_record() for node in self.cache.table],
            "images": self._image_state(),
            "objects": [obj.to_record() for obj in self.table.objects],
            "assumedVolumes": [
                {"pod": pod_uid, **assumption.to_record()}
                for pod_uid, assumption in self.storage.assumptions()
            ],
            "pods": [pod.to_record() for pod in self.pods.values()],
            "placements": [
                {"pod": pod.to_record(), "node": node, "assumed": assumed, "finished": finished}
                for pod, node, assumed, finished in self.cache.placements()
            ],
            "inputs": [
                {"plugin": plugin, "key": key, "value": value}
                for (plugin, key), value in self.inputs.items()
            ],
            "profiles": {d: p.to_record() for d, p in self.profiles.items()},
            "nominations": [{"pod": pod.uid, "node": node} for pod, node in self.nominated],
            **({} if self.relisting is None else {"relisting": self.relisting.to_record()}),
        }

    def _image_state(self) -> dict[str, Any]:
        """What re-adding the saved nodes in row order would not give back: the size of
        each image state (its creating node may be gone) and each node's summary (the
        counts as of its last add or update); the holders follow from the nodes."""
        table = self.table
        return {
            "sizes": table.images.sizes(),
            "summaries": {
                name: summary.to_record()
                for name, summary in zip(table.names, table.image_summaries, strict=True)
                if len(summary)
            },
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> ClusterView:
        """The view `to_state` saved."""
        view = cls()
        for record in state.get("nodes", []):
            view.cache.upsert_node(Node.from_record(record))
        images = state.get("images")
        if images is not None:
            view.table.restore_images(
                {str(name): int(size) for name, size in images["sizes"].items()},
                {
                    str(name): ImageSummary.from_record(record)
                    for name, record in images["summaries"].items()
                },
            )
        for record in state.get("objects", []):
            view.table.objects.upsert(object_from_record(record))
        for record in state.get("assumedVolumes", []):
            view.storage.assume(str(record["pod"]), [assumption_from_record(record)])
        for record in state.get("pods", []):
            pod = Pod.from_record(record)
            view.pods[pod.uid] = pod
        for placed in state.get("placements", []):
            view.cache.restore(
                Pod.from_record(placed["pod"]),
                str(placed["node"]),
                bool(placed["assumed"]),
                bool(placed["finished"]),
            )
        for item in state.get("inputs", []):
            if isinstance(item.get("value"), Mapping):
                view.inputs[(str(item["plugin"]), str(item["key"]))] = item["value"]
        for digest, record in (state.get("profiles") or {}).items():
            view.profiles[str(digest)] = Profile.from_record(record)
        for item in state.get("nominations") or ():
            nominee = view.pods.get(str(item["pod"]))
            if nominee is not None:
                view.nominated.nominate(nominee, str(item["node"]))
        if state.get("relisting") is not None:
            view.relisting = Relist.from_record(state["relisting"])
        return view


#: The event kinds that change the view; the others are ignored by `apply`.
FOLDED_KINDS: frozenset[str]

_FOLDS: dict[str, Callable[[ClusterView, Fact], None]] = {
    "node_observed": ClusterView._node_observed,
    "node_removed": ClusterView._node_removed,
    "pod_observed": ClusterView._pod_observed,
    "pod_removed": ClusterView._pod_removed,
    "object_observed": ClusterView._object_observed,
    "object_removed": ClusterView._object_removed,
    "reserved": ClusterView._reserved,
    "unreserved": ClusterView._unreserved,
    "unschedulable": ClusterView._unschedulable,
    "preempted": ClusterView._preempted,
    "bound": ClusterView._bound,
    "input_recorded": ClusterView._input_recorded,
    "config_loaded": ClusterView._config_loaded,
    "maintenance": ClusterView._maintenance,
}
FOLDED_KINDS = frozenset(_FOLDS)
