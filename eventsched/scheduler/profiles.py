"""The scheduler's profiles: one Framework per `schedulerName`, and what follows from them.

As kube-scheduler's `profile.Map`: the frameworks built once at start, each with its
configuration's digest (`config_loaded`), the pod annotations their plugins read (the only
ones kept and logged), and the cluster events their plugins registered (which changes
move which pods out of the unschedulable pool).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from eventsched.config import profile_digest
from eventsched.framework import (
    ClusterEvent,
    Framework,
    FrameworkObservers,
    Handle,
    Profile,
    QueuedPodInfo,
    Registry,
    Status,
)
from eventsched.metrics import SchedulerMetrics
from eventsched.model import Pod
from eventsched.scheduler.batch import AttemptSink, Batch


class Profiles:
    """The frameworks by scheduler name, and what the event handlers and the queue read of them."""

    def __init__(
        self,
        profiles: Sequence[Profile],
        registry: Registry,
        handle: Handle,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        if not profiles:
            raise ValueError("at least one profile is needed")
        observers = (
            None
            if metrics is None
            else FrameworkObservers(
                observe=metrics.observe_extension_point,
                observe_permit_wait=metrics.permit_waited,
                plugin_metrics=metrics,
            )
        )
        self.frameworks: dict[str, Framework] = {
            p.scheduler_name: Framework(p, registry, handle, observers) for p in profiles
        }
        #: Each profile's configuration digest, as its `config_loaded` carries it.
        self.digests: dict[str, str] = {
            name: profile_digest(fw.profile) for name, fw in self.frameworks.items()
        }
        #: The only pod annotations kept (and logged): those a configured plugin reads.
        self.annotation_keys: frozenset[str] = frozenset().union(
            *(fw.annotations_read() for fw in self.frameworks.values())
        )
        #: Plugins' events to register (QueueingHint's map): which changes move which pods.
        self.plugin_events: dict[str, list[ClusterEvent]] = {}
        for fw in self.frameworks.values():
            self.plugin_events.update(fw.events_to_register())

    @property
    def first(self) -> Framework:
        """The first profile's framework (the one an extender serves)."""
        return next(iter(self.frameworks.values()))

    def queue_less(self) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
        """The queue's order: every profile's queueSort plugin must be the same, as
        kube-scheduler requires."""
        sorts = {fw.profile.at("queueSort") for fw in self.frameworks.values()}
        if len(sorts) > 1:
            raise ValueError(
                "all profiles must use the same queueSort plugin (as kube-scheduler requires)"
            )
        return self.first.queue_less

    def run_pre_enqueue(self, pod: Pod, batch: Batch) -> Status:
        """The pod's profile's PreEnqueue plugins (Success for a pod of no profile here).

        What they record (a malformed annotation, say) joins `batch` as this pod's.
        """
        fw = self.frameworks.get(pod.scheduler_name)
        if fw is None:
            return Status()
        return fw.run_pre_enqueue(pod, AttemptSink(batch, pod, fw.name, None))

    def __contains__(self, scheduler_name: object) -> bool:
        return scheduler_name in self.frameworks

    def __getitem__(self, scheduler_name: str) -> Framework:
        return self.frameworks[scheduler_name]
