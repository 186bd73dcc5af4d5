"""Counterfactual replay: the recorded history run under other profiles.

The observations are the log's; the pods our attempts decided are placed
where the other profiles decide, so one different decision changes the
view the later ones see. Writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from eventsched.audit.base import from_base
from eventsched.audit.replay import skipped_attempt, vars_of
from eventsched.audit.replayer import Replayer, walk
from eventsched.audit.servedverbs import extender_call
from eventsched.events.reader import EventReader
from eventsched.events.record import StoredEvent
from eventsched.events.vocabulary import is_process_start
from eventsched.framework import Framework, Profile, Registry


@dataclass(slots=True)
class PodOutcome:
    pod: str
    recorded: str | None
    counterfactual: str | None
    #: Tells apart pods of one name: one deleted and created again is another pod.
    uid: str = ""


@dataclass(slots=True)
class CounterfactualReport:
    """What another configuration would have done with the same recorded history."""

    attempts: int = 0
    pods: list[PodOutcome] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def moved(self) -> list[PodOutcome]:
        return [
            p
            for p in self.pods
            if p.recorded and p.counterfactual and p.recorded != p.counterfactual
        ]

    def became_unschedulable(self) -> list[PodOutcome]:
        return [p for p in self.pods if p.recorded and not p.counterfactual]

    def became_schedulable(self) -> list[PodOutcome]:
        return [p for p in self.pods if p.counterfactual and not p.recorded]

    def load(self) -> dict[str, tuple[int, int]]:
        """Node -> (pods placed there as recorded, pods placed there counterfactually)."""
        nodes: dict[str, list[int]] = {}
        for p in self.pods:
            if p.recorded:
                nodes.setdefault(p.recorded, [0, 0])[0] += 1
            if p.counterfactual:
                nodes.setdefault(p.counterfactual, [0, 0])[1] += 1
        return {n: (a, b) for n, (a, b) in sorted(nodes.items())}

    def to_dict(self) -> dict[str, Any]:
        return {
            "attempts": self.attempts,
            "moved": [vars_of(p) for p in self.moved()],
            "becameUnschedulable": [vars_of(p) for p in self.became_unschedulable()],
            "becameSchedulable": [vars_of(p) for p in self.became_schedulable()],
            "load": {n: {"recorded": a, "counterfactual": b} for n, (a, b) in self.load().items()},
            "skipped": self.skipped,
        }


class CounterfactualReplayer:
    """Replays the recorded inputs under other profiles, placing pods where *they* decide.

    The observations (nodes, other schedulers' pods, pods coming and going)
    are the log's, folded by `replayer`; the placements of the pods our
    attempts decided are this run's own, so a different decision early on
    changes the view later on, as it would have in the cluster.
    """

    def __init__(self, replayer: Replayer, profiles: Iterable[Profile]) -> None:
        self.replayer = replayer
        self.alternatives = {
            p.scheduler_name: Framework(p, replayer.registry, replayer.handle) for p in profiles
        }
        #: Our pods: this run places them, not the log (the view leaves them to us).
        self.ours: set[str] = set()
        replayer.view.placed_by_caller = self.ours
        self.recorded: dict[str, tuple[str, str | None]] = {}
        self.placed: dict[str, str | None] = {}

    def fold(self, event: StoredEvent) -> None:
        """Fold one event as replay does, noting recorded placements; a scheduler process
        started begins the alternative profiles' plugins empty, as it did the recorded ones."""
        self.replayer.fold(event)
        if event.kind == "bound" and event.uid:
            self.recorded[event.uid] = (event.pod_key or event.uid, event.node)
        if is_process_start(event.kind, event.data):
            self.alternatives = {
                name: Framework(fw.profile, self.replayer.registry, self.replayer.handle)
                for name, fw in self.alternatives.items()
            }

    def decide(self, events: list[StoredEvent]) -> str:
        """Run the attempt under the alternative profile; '' when it ran, else why not."""
        started = events[0]
        pod = self.replayer.pods.get(started.uid or "")
        if pod is None:
            return "the pod was never observed before its attempt"
        if extender_call(started.data) is not None:
            return "an extender call: kube-scheduler placed the pod, not a profile of ours"
        fw = self.alternatives.get(started.scheduler)
        if fw is None:
            return f"the other configuration has no profile named {started.scheduler!r}"
        self.ours.add(pod.uid)
        self.recorded.setdefault(pod.uid, (pod.key, None))
        if self.placed.get(pod.uid):
            return ""  # already placed by an earlier counterfactual attempt
        node, _ = self.replayer.decide_again(fw, pod, events)
        self.placed[pod.uid] = node
        view = self.replayer.view
        if node is not None and view.cache.node_of(pod.uid) is None:
            view.cache.assume(pod, node)
        return ""


def counterfactual(
    reader: EventReader,
    registry: Registry,
    profiles: Iterable[Profile],
    progress: Callable[[int], None] | None = None,
    *,
    until: int | None = None,
) -> CounterfactualReport:
    """Run `profiles` over the recorded history (up to position `until`); writes nothing."""
    replayer = CounterfactualReplayer(Replayer(registry, *from_base(reader)), profiles)
    report = CounterfactualReport()
    for events in walk(reader.read(until=until), replayer.fold, progress):
        report.attempts += 1
        why = replayer.decide(events)
        if why:
            report.skipped.append(skipped_attempt(events[0], why))
    for uid, (key, node) in replayer.recorded.items():
        report.pods.append(PodOutcome(key, node, replayer.placed.get(uid), uid))
    report.pods.sort(key=lambda p: (p.pod, p.uid))
    return report
