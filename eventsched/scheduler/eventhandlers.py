"""Cluster changes become events, the view follows the events, the queue moves.

As kube-scheduler's `eventhandlers.go`: a node or pod added, updated or
deleted is logged (`node_observed`, `pod_observed`, `pod_removed`, ...) unless
the log already says it, applied to the view by the same fold replay uses
(the journal's batch applies it), and moves the pods that plugins registered
for that kind of change. Pods of our profiles that are pending enter the
scheduling queue.
"""

from __future__ import annotations

from eventsched.events import Projections, encode, plain_digest
from eventsched.events.canonical import Encoded
from eventsched.framework import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    ASSIGNED_POD_UPDATE,
    NODE_ADD,
    NODE_DELETE,
    NODE_UPDATE,
    ClusterEvent,
    Handle,
)
from eventsched.model import Node, Pod
from eventsched.model.cache import Cache
from eventsched.model.objects import object_from_record
from eventsched.scheduler.attempts import Attempts
from eventsched.scheduler.failure import Failures
from eventsched.scheduler.journal import Journal
from eventsched.scheduler.moves import QueueMoves
from eventsched.scheduler.ports import Cluster, ClusterChange
from eventsched.scheduler.profiles import Profiles
from eventsched.scheduler.queue import SchedulingQueue
from eventsched.view import ClusterView
from eventsched.view.relist import Relist


class EventHandlers:
    """Turns the cluster's changes into observations, queue entries and queue moves."""

    def __init__(
        self,
        journal: Journal,
        view: ClusterView,
        queue: SchedulingQueue,
        moves: QueueMoves,
        profiles: Profiles,
        cluster: Cluster,
        handle: Handle,
        attempts: Attempts,
        failures: Failures,
        *,
        queue_pending: bool = True,
    ) -> None:
        self.journal = journal
        self.view = view
        self.queue = queue
        self.moves = moves
        self.profiles = profiles
        self.cluster = cluster
        #: Its waiting pods: a pod deleted while waiting at Permit is rejected.
        self.handle = handle
        self.attempts = attempts
        self.failures = failures
        #: False where another scheduler schedules our profiles' pods (the extender): a
        #: pending pod is observed, never queued.
        self.queue_pending = queue_pending
        #: Pods that set a field no plugin of their profile honours, with the warning given.
        self.ignored: dict[str, tuple[Pod, str]] = {}
        #: Pods seen on the node their in-flight Binding names, not logged (see
        #: _implied_by_our_binding) unless that Binding fails.
        self._held_observations: dict[str, dict] = {}
        #: Pods deleted while their binding cycle ran: a failed Binding must not requeue them.
        self._deleted_in_flight: set[str] = set()

    @property
    def projections(self) -> Projections:
        return self.journal.projections

    @property
    def cache(self) -> Cache:
        """Nodes and placed pods as this process's view holds them."""
        return self.view.cache

    def on_change(self, change: ClusterChange) -> None:
        """A node, pod or other object added, updated or deleted."""
        obj = change.obj
        if isinstance(obj, Node):
            self.node_changed(change)
        elif isinstance(obj, Pod):
            self.pod_changed(change)
        else:
            self.object_changed(change)

    def observe(
        self,
        kind: str,
        key: str,
        record: dict,
        *,
        known: bool = True,
        encoded: Encoded | None = None,
        **where: object,
    ) -> bool:
        """Log an observation unless it is identical to the last one for that object.

        An object the view does not hold (`known` False) is always logged: the
        last logged observation may have been removed since, in a batch not yet
        folded into the projections.

        An unchanged record is recognized from the digest of its plain JSON text
        (`plain_digest`); a record that does not match so is normalized and dumped
        once: the digest compared here, the text the store writes and the digest the
        projections keep all come from that one encoding.
        """
        last = self.projections.observed.get(key) if known else None
        if last is not None and encoded is None and plain_digest(record) == last:
            return False
        encoded = encoded or encode(record)
        if last is not None and encoded.digest == last:
            return False
        self.journal.pending.add(kind, encoded.data, encoded=encoded, **where)  # type: ignore[arg-type]
        return True

    def observe_pending(self, pod: Pod) -> Pod:
        """A pending pod another scheduler decides: observed (with the annotations our
        plugins read), never queued. The pod as the view holds it now."""
        pod = pod.keeping_annotations(self.profiles.annotation_keys)
        self.observe(
            "pod_observed",
            f"pod/{pod.uid}",
            pod.to_record(),
            known=pod.uid in self.view.pods,
            pod=pod,
        )
        return self.view.pods.get(pod.uid, pod)

    def binding_answered(self, pod: Pod, ok: bool) -> None:
        """The pod's Binding was answered: an observation held for it is logged if it failed
        (replay needs it then: a rival bound the pod to the same node)."""
        held = self._held_observations.pop(pod.uid, None)
        if held is not None and not ok:
            self.observe("pod_observed", f"pod/{pod.uid}", held, pod=pod, node=held["nodeName"])

    def deleted_while_binding(self, uid: str) -> bool:
        """Whether the pod was deleted while its binding cycle ran (asked once)."""
        if uid in self._deleted_in_flight:
            self._deleted_in_flight.discard(uid)
            return True
        return False

    def _implied_by_our_binding(self, pod: Pod, key: str, record: dict) -> bool:
        """The pod as last logged, now on the node our own Binding gave it.

        The log says that already (`reserved` on the node, then `bound`), and
        replay places the pod from those, so a second `pod_observed` that
        differs only in nodeName adds nothing. A restarted process does not
        have the pod in its cache yet, so there the observation is logged.
        """
        node = pod.node_name
        if not node or self.cache.node_of(pod.uid) != node:
            return False
        if pod.uid not in self.projections.bound and not self.cache.is_assumed(pod.uid):
            return False
        return logged_unassigned(self.projections.observed.get(key), record)

    def _relisted_on_our_node(self, pod: Pod, relisting: Relist) -> bool:
        """A pod a restarted process lists on the node a `bound` of ours gave it, whose last
        observation came before that binding (its record without the node): gathered as
        listed, on that node. Only that record is made: most of a restart's pods are these.
        """
        node = pod.node_name
        if not node or self.projections.bound.get(pod.uid) != node:
            return False
        digest = self.projections.observed.get(f"pod/{pod.uid}")
        if digest is None or not _digested_as(pod.to_record(node=False), digest):
            return False
        relisting.put_pod(pod, placed_on=node)
        return True

    def _relist_pod(self, pod: Pod, key: str, record: dict, relisting: Relist) -> None:
        """A pod a restarted process lists (not as our binding left it): gathered as listed
        when the log's last observation says so, else logged. The pod gathered is the
        listed one: the one its record reads back as."""
        if not self.observe("pod_observed", key, record, pod=pod, node=pod.node_name or None):
            relisting.put_pod(pod)

    def node_changed(self, change: ClusterChange) -> None:
        node = change.obj
        assert isinstance(node, Node)
        if change.type == "DELETED":
            self.journal.pending.add("node_removed", {"uid": node.uid}, node=node.name)
            self.moves.on_event(NODE_DELETE, "NodeDelete")
            return
        key, record = f"node/{node.name}", node.to_record()
        relisting = self.view.relisting
        if relisting is not None:
            # A fresh process's view is empty: each node listed is an add to it. Unchanged,
            # the node listed is gathered: the one its record reads back as.
            again = node.name in relisting.nodes
            if not self.observe("node_observed", key, record, node=node.name):
                relisting.nodes[node.name] = node
            self.moves.on_event(
                NODE_UPDATE if again else NODE_ADD, "NodeUpdate" if again else "NodeAdd"
            )
            return
        known = self.view.table.row_of(node.name) is not None
        changed = self.observe("node_observed", key, record, known=known, node=node.name)
        if changed:
            self.moves.on_event(
                NODE_UPDATE if known else NODE_ADD, "NodeUpdate" if known else "NodeAdd"
            )
        elif not self.view.table.image_summary_current(node.name):
            # kube-scheduler's UpdateNode gives the node its image summary afresh at every
            # update, even one that changes nothing eventsched keeps (a status heartbeat):
            # logged again when that changes the summary (image holders came or went).
            self.observe("node_observed", key, record, known=False, node=node.name)

    def object_changed(self, change: ClusterChange) -> None:
        """Another kind plugins read: logged and folded.

        A change moves the pods whose plugins registered its kind and action, as
        kube-scheduler adds a handler for a kind and action only when a plugin registered
        it: a PersistentVolumeClaim, PersistentVolume, StorageClass or CSINode added or
        changed (VolumeBinding, VolumeZone, ...; none registers their deletion), an
        ElasticQuota added, changed or deleted (CapacityScheduling). A Namespace, workload
        or PodDisruptionBudget moves no pod (no plugin registers them).
        """
        obj = change.obj
        assert not isinstance(obj, Node | Pod)
        key = f"object/{obj.key}"
        if change.type == "DELETED":
            self.journal.pending.add("object_removed", obj.to_record())
            self._move_registered(ClusterEvent(obj.kind, "Delete"))
            return
        relisting = self.view.relisting
        if relisting is not None:
            record = obj.to_record()
            encoded = encode(record)
            if not self.observe("object_observed", key, record, encoded=encoded):
                relisting.objects[obj.key] = object_from_record(encoded.data)
            self._move_registered(ClusterEvent(obj.kind, "Add"))
            return
        known = self.view.table.objects.has(obj)
        changed = self.observe("object_observed", key, obj.to_record(), known=known)
        if changed:
            self._move_registered(ClusterEvent(obj.kind, "Update" if known else "Add"))

    def _move_registered(self, event: ClusterEvent) -> None:
        registered = (e for events in self.profiles.plugin_events.values() for e in events)
        if any(e.matches(event) and e.resource != "*" for e in registered):
            self.moves.on_event(event, f"{event.resource}{event.action}")

    def pod_changed(self, change: ClusterChange) -> None:
        assert isinstance(change.obj, Pod)
        if change.type != "DELETED" and not change.obj.node_name and not self.queue_pending:
            self.observe_pending(change.obj)
            return
        pod = change.obj.keeping_annotations(self.profiles.annotation_keys)
        if change.type == "DELETED":
            self.failures.forget(pod.uid)
            self.attempts.forget(pod.uid)
            self._pod_deleted(pod)
            return
        was_assumed = self.cache.is_assumed(pod.uid)
        was_placed = self.cache.node_of(pod.uid) is not None
        self._observe_pod(pod)
        if pod.node_name:
            self.queue.delete(pod.uid)
            # Our own binding confirmed is an assigned pod added too: upstream's assigned-pod
            # informer first sees it here (addPodToCache -> AssignedPodAdded), and a pod
            # whose required pod affinity it satisfies moves.
            event = ASSIGNED_POD_UPDATE if was_placed and not was_assumed else ASSIGNED_POD_ADD
            namespace = self.view.table.objects.namespaces.get(pod.namespace)
            self.moves.on_assigned_pod(event, pod, namespace.labels if namespace else {})
            return
        if pod.scheduler_name not in self.profiles or pod.is_terminal or pod.deleting:
            return
        if self.cache.is_assumed(pod.uid):
            return  # its binding is in flight; the bound pod will be observed
        if pod.uid in self.queue:
            move = self.queue.update(pod)
            if move is not None and move.source == "gated":
                # Its gates lifted: the pod enters the queue, and the log says when (a
                # gated pod's page reads ungated, queued, placed). A move out of the
                # unschedulable pool on an update is still not logged.
                self.moves.record([move])
            return
        backoff = self.projections.backoff.get(pod.uid)
        where = (
            self.queue.restore(pod, backoff.attempts, backoff.backoff_until)
            if backoff is not None
            else self.queue.add(pod)
        )
        if where is not None:
            self.journal.pending.add(
                "queued", {"queue": where, "event": "PodAdd"}, pod=pod, scheduler=pod.scheduler_name
            )
            self._warn_ignored(pod)

    def _observe_pod(self, pod: Pod) -> None:
        """Log the pod's record unless the log says it already (a restarted process
        gathers it as listed then)."""
        relisting = self.view.relisting
        if relisting is not None and self._relisted_on_our_node(pod, relisting):
            return
        record = pod.to_record()
        key = f"pod/{pod.uid}"
        if self._placed_elsewhere(pod):
            # Bound while we were down, or by hand: still its first placement (sticky).
            record["firstPlacement"] = True
        if relisting is not None:
            self._relist_pod(pod, key, record, relisting)
        elif not self._implied_by_our_binding(pod, key, record):
            known = pod.uid in self.view.pods
            self.observe(
                "pod_observed", key, record, known=known, pod=pod, node=pod.node_name or None
            )
        elif self.cache.is_assumed(pod.uid) and not self.cache.binding_finished(pod.uid):
            # Seen bound before our Binding's answer: if that answer is a failure (a
            # rival bound it to the same node), replay needs this observation after all.
            self._held_observations[pod.uid] = record

    def _warn_ignored(self, pod: Pod) -> None:
        """Say so, in the log and on the pod, when the pod sets a field no plugin here honours.

        It is placed as if the field were absent: never silently.
        """
        fw = self.profiles[pod.scheduler_name]
        ignored = fw.ignored_fields(pod)
        if not ignored or pod.uid in self.ignored:
            return
        fields = [i.field for i in ignored]
        plugins = sorted({i.plugin for i in ignored})
        message = (
            f"{', '.join(fields)} not honoured: profile {fw.name} has no "
            f"{' or '.join(plugins)} plugin; the pod is placed as if "
            f"{'it were' if len(fields) == 1 else 'they were'} absent"
        )
        self.ignored[pod.uid] = (pod, message)
        self.journal.pending.add(
            "input_recorded",
            {"key": "ignoredFields", "value": {"fields": fields, "plugins": plugins}},
            pod=pod,
            scheduler=pod.scheduler_name,
        )
        self.journal.after(
            lambda: self.cluster.emit_event(pod, "Warning", "FieldsIgnored", "Scheduling", message)
        )

    def _placed_elsewhere(self, pod: Pod) -> bool:
        """An assigned pod of ours that no `bound` of ours placed, and whose identity has no placement."""
        return (
            bool(pod.node_name)
            and pod.scheduler_name in self.profiles
            and pod.uid not in self.projections.bound
            and not self.cache.is_assumed(pod.uid)
            and pod.uid not in self.projections.open_reservations
            and pod.key not in self.projections.first_placements
        )

    def _pod_deleted(self, pod: Pod) -> None:
        self._held_observations.pop(pod.uid, None)
        known = f"pod/{pod.uid}" in self.projections.observed or pod.uid in self.queue
        waiting = self.handle.waiting_pods.get(pod.uid)
        if waiting is not None:
            waiting.reject("", "pod was deleted while waiting at Permit")
        self.queue.delete(pod.uid)
        if self.cache.is_assumed(pod.uid) and not self.cache.binding_finished(pod.uid):
            self._deleted_in_flight.add(pod.uid)
        placed = self.cache.node_of(pod.uid) is not None
        if known or placed or pod.uid in self.view.pods:
            self.journal.pending.add(
                "pod_removed", {"nodeName": pod.node_name}, pod=pod, node=pod.node_name or None
            )
        if placed:
            self.moves.on_event(ASSIGNED_POD_DELETE, "AssignedPodDelete")


def logged_unassigned(digest: str | None, record: dict) -> bool:
    """Whether `digest` (the log's last for the pod) is that of its record without its node,
    as the log has it when our Binding placed the pod."""
    if digest is None:
        return False
    unassigned = dict(record)
    unassigned.pop("nodeName", None)
    return _digested_as(unassigned, digest)


def _digested_as(record: dict, digest: str) -> bool:
    """Whether `record` encodes to `digest` (its plain text's digest tried first)."""
    return plain_digest(record) == digest or encode(record).digest == digest
