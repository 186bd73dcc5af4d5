"""What a starting process logs before it schedules: who it is, its configuration, and
the reservations a previous process left open, settled from what the cluster shows."""

from __future__ import annotations

from collections.abc import Mapping

from eventsched.events import scheduler_started
from eventsched.framework import Framework
from eventsched.model import Pod
from eventsched.scheduler.journal import Journal


def record_start(
    journal: Journal, instance: str, frameworks: Mapping[str, Framework], digests: Mapping[str, str]
) -> None:
    """`scheduler_started` (the view starts empty), and each profile's configuration
    unless the log's last `config_loaded` for it has the same digest.

    The view learns every configuration the log holds first (replay's view has them
    all); what this process lists next is all it knows of the cluster (`listed`), and
    replay's view is made of the same objects at the same event.
    """
    journal.pending.add("maintenance", scheduler_started(instance))
    last: dict[str, str] = {}
    for event in journal.store.read(kinds=["config_loaded"]):
        last[event.scheduler] = event.data.get("digest", "")
        journal.view.apply(event)
    for name, fw in frameworks.items():
        if last.get(name) != digests[name]:
            journal.pending.add(
                "config_loaded",
                {"digest": digests[name], "profile": fw.profile.to_record()},
                scheduler=name,
            )


def record_listed(journal: Journal) -> None:
    """The lists are in: `listed` names what they held, and its fold makes that the view."""
    relisting = journal.view.relisting
    if relisting is not None:
        journal.pending.add("maintenance", relisting.listed())


def reconcile_reservations(journal: Journal) -> None:
    """Close reservations a previous process left open, from what the cluster shows now:
    `bound` where the pod is on the reserved node, else `unreserved`."""
    cache = journal.view.cache
    for uid, reservation in list(journal.projections.open_reservations.items()):
        node = cache.node_of(uid)
        pod = Pod(uid=uid, namespace=reservation.namespace or "", name=reservation.name or "")
        if node == reservation.node and not cache.is_assumed(uid):
            identity = reservation.identity or pod.key
            kind, data = "bound", {"identity": identity, "reconciled": True}
        else:
            kind, data = (
                "unreserved",
                {
                    "reason": "reconciled on start: no binding to this node was confirmed",
                    "reconciled": True,
                },
            )
        journal.pending.add(
            kind,
            data,
            pod=pod,
            scheduler=reservation.scheduler,
            attempt=reservation.attempt,
            node=reservation.node,
        )
