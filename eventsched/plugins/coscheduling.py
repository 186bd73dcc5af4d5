"""Coscheduling: gang scheduling, all of a pod group's min-available members or none.

Modelled on kubernetes-sigs/scheduler-plugins' Coscheduling, without the
PodGroup CRD: a gang is the pods of one namespace carrying the same
`scheduling.x-k8s.io/pod-group` label, and its min-available count comes
from the pods' `scheduling.x-k8s.io/min-available` annotation (or the
`defaultMinAvailable` arg).

- QueueSort (upstream's `Less`, so a profile that disables PrioritySort, as
  scheduler-plugins' chart does, has one): higher priority first; then the earlier of the
  pods' group times (a gang's: the earliest queue time of its members the plugin has
  compared, standing for upstream's PodGroup creation time; a lone pod's: its first
  attempt's); then by namespace/name.
- PreEnqueue: never gates; it notes each gang pod that enters the queue, so
  PreFilter can count pending members (upstream lists them with a pod lister,
  which plugins here do not have).
- PreFilter: rejects (UnschedulableAndUnresolvable) a pod whose group has
  fewer known pods than min-available, or whose min-available is missing or
  malformed, before it reserves room it cannot use.
- Permit: when the group's reserved members (bound, assumed, waiting) plus
  this pod reach min-available, approves this pod and allows every waiting
  member; otherwise Wait with `permitWaitingTimeSeconds`.
- PostFilter (upstream's): a pod outside any gang gets "can not find pod group"; a
  gang already at min-available, or within 10% of it, gets a bare Unschedulable;
  otherwise its waiting members are rejected ("optimistic rejection in PostFilter") and
  the pod gets "PodGroup NS/NAME gets rejected due to Pod P is unschedulable even after
  PostFilter". None of these nominates a node.
- Unreserve: a member that fails after Reserve (timed out, rejected, binding
  failed) makes every waiting member of its group fail too, so no partial
  gang keeps its reservations.

What the plugin reads beyond the snapshot (the pending members it noted, the
waiting pods) is recorded as `input_recorded` before it decides, so the log
shows why a pod waited or was approved and replay feeds the same counts back.
Waits, approvals and rejections themselves are the scheduler's `permitted`
events (decision wait / approve / deny / timeout, plugin Coscheduling).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from eventsched.framework import (
    LEGACY_FEATURES,
    Code,
    CycleState,
    Features,
    Handle,
    PluginArgsError,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
    Status,
    check_args,
)
from eventsched.model import NodeTable, Pod
from eventsched.model.podgroup import MIN_AVAILABLE_ANNOTATION, POD_GROUP_LABEL, group_of

#: upstream CoschedulingArgs.permitWaitingTimeSeconds default.
DEFAULT_PERMIT_WAITING_SECONDS = 60
#: kube-scheduler caps any Permit wait at 15 minutes (`maxTimeout`); a longer arg would be cut silently.
MAX_PERMIT_WAITING_SECONDS = 15 * 60
#: A noted pending member not seen again (queued, prefiltered, permitted) for this long is
#: forgotten: pods deleted while pending leave no other trace, and a pending pod is retried
#: at least every 5 minutes (the unschedulable pool's flush), so a live one is seen again.
FORGET_PENDING_AFTER = 15 * 60.0

#: CycleState key: the group's placed members PreFilter found, reused by Permit in the
#: same cycle (the snapshot changes only between cycles, apart from this pod's assume).
_PLACED_KEY = "Coscheduling/placed"

KNOWN_ARGS = ("permitWaitingTimeSeconds", "defaultMinAvailable")


class Coscheduling:
    name = "Coscheduling"

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args, KNOWN_ARGS)
        self.handle = handle
        self.timeout = float(
            _positive(
                args, "permitWaitingTimeSeconds", DEFAULT_PERMIT_WAITING_SECONDS, seconds=True
            )
        )
        if self.timeout > MAX_PERMIT_WAITING_SECONDS:
            raise PluginArgsError(
                "permitWaitingTimeSeconds",
                f"must be at most {MAX_PERMIT_WAITING_SECONDS} (kube-scheduler's longest Permit "
                f"wait; got {args['permitWaitingTimeSeconds']!r})",
            )
        default = args.get("defaultMinAvailable")
        self.default_min: int | None = (
            None if default is None else int(_positive(args, "defaultMinAvailable", 1))
        )
        self._monotonic: Callable[[], float] = handle.monotonic
        self._lock = threading.Lock()
        #: group -> uid -> when last seen; pending members this plugin has noted.
        self._pending: dict[str, dict[str, float]] = {}
        #: Members that failed after Reserve and may still be in the snapshot (as
        #: assumed) until the scheduler forgets them: they must not count for the gang.
        self._failed: set[str] = set()
        #: group -> the earliest queue time of its members QueueSort has compared.
        self._group_since: dict[str, float] = {}

    def annotations_read(self) -> tuple[str, ...]:
        return (MIN_AVAILABLE_ANNOTATION,)

    # -- gang of a pod ------------------------------------------------------------

    def min_available(self, pod: Pod) -> tuple[int | None, str]:
        """The pod's min-available, or None and the reason it has none usable."""
        raw = pod.annotations.get(MIN_AVAILABLE_ANNOTATION)
        if raw is None:
            if self.default_min is not None:
                return self.default_min, ""
            return None, (
                f"pod group {group_of(pod)} has no minAvailable: set the annotation "
                f"{MIN_AVAILABLE_ANNOTATION} on its pods or the {self.name} arg defaultMinAvailable"
            )
        text = raw.strip()
        if text.isascii() and text.isdigit() and int(text) > 0:
            return int(text), ""
        return None, (
            f"annotation {MIN_AVAILABLE_ANNOTATION} must be a positive integer (got {raw!r})"
        )

    # -- QueueSort ------------------------------------------------------------------

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        if a.pod.priority != b.pod.priority:
            return a.pod.priority > b.pod.priority
        since_a, since_b = self._since(a), self._since(b)
        if since_a == since_b:
            return f"{a.pod.namespace}/{a.pod.name}" < f"{b.pod.namespace}/{b.pod.name}"
        return since_a < since_b

    def _since(self, info: QueuedPodInfo) -> float:
        """`GetCreationTimestamp`: the group's time for a gang member, else the first attempt's."""
        own = info.initial_attempt_timestamp
        own = info.timestamp if own is None else own
        group = group_of(info.pod)
        if group is None:
            return own
        with self._lock:
            since = min(self._group_since.get(group, own), own)
            self._group_since[group] = since
        return since

    # -- PreEnqueue -----------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Never gates; notes a pending gang member so PreFilter can count it."""
        group = group_of(pod)
        if group is not None:
            self._note(group, pod.uid)
        return None

    def _note(self, group: str, uid: str) -> None:
        now = self._monotonic()
        with self._lock:
            members = self._pending.setdefault(group, {})
            members[uid] = now
            stale = [u for u, seen in members.items() if now - seen > FORGET_PENDING_AFTER]
            for u in stale:
                del members[u]

    def _refresh(self, group: str, uid: str) -> bool:
        """Mark a noted member as seen now; False when PreEnqueue never noted it."""
        with self._lock:
            members = self._pending.get(group)
            if members is None or uid not in members:
                return False
            members[uid] = self._monotonic()
            return True

    # -- PreFilter ------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        group = group_of(pod)
        if group is None:
            return None, None
        with self._lock:
            self._failed.discard(pod.uid)  # a new attempt: its earlier failure is over
        minimum, problem = self.min_available(pod)
        if minimum is None:
            return None, Status.unresolvable(problem)
        key = f"podgroup/{group}/preFilter"
        view: Mapping[str, Any] | None
        if self.handle.replaying:
            view = self.handle.recorded_input(self.name, key)
        elif self._refresh(group, pod.uid):
            view = self._pre_filter_view(state, group, pod, table, minimum)
        else:
            # PreEnqueue is not enabled for this profile: the pending members are
            # unknown, and counting only placed ones would reject every first member.
            view = None
        if view is None:
            return None, None
        state.record_input(self.name, key, view)
        known = int(view["pods"])
        if known < minimum:
            return None, Status.unresolvable(
                f"pod group {group} has {known} pods, fewer than minAvailable {minimum}"
            )
        return None, None

    def _pre_filter_view(
        self, state: CycleState, group: str, pod: Pod, table: NodeTable, minimum: int
    ) -> dict[str, Any]:
        with self._lock:
            pending = set(self._pending.get(group, {}))
        placed = _placed_members(table.pods, group)
        state.write(_PLACED_KEY, placed)
        waiting = {w.pod.uid for w in self.handle.waiting_pods if group_of(w.pod) == group}
        pods = pending | placed | waiting | {pod.uid}
        return {"pods": len(pods), "pending": len(pending), "minAvailable": minimum}

    # -- Reserve / Unreserve ------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """A member failed after Reserve: every waiting member of its group fails with it.

        Runs on binder threads too, so it records nothing itself: each rejected
        member's binding cycle logs `permitted` (deny, this message), `bind_failed`
        and `unreserved` for it.
        """
        group = group_of(pod)
        if group is None:
            return
        with self._lock:
            self._failed.add(pod.uid)
        message = f"pod group {group} rejected: member {pod.key} failed"
        for waiting in self.handle.waiting_pods:
            if waiting.pod.uid != pod.uid and group_of(waiting.pod) == group:
                with self._lock:
                    self._failed.add(waiting.pod.uid)
                waiting.reject(self.name, message)

    # -- PostFilter -----------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        group = group_of(pod)
        minimum = None if group is None else self.min_available(pod)[0]
        if group is None or minimum is None:
            return None, Status.unschedulable("can not find pod group")
        assigned = len(_placed_members(self.handle.table.pods, group))
        if assigned >= minimum:
            return None, Status(Code.UNSCHEDULABLE)
        # upstream compares in float32: float32(min-assigned)/float32(min) <= 0.1
        if np.float32(minimum - assigned) / np.float32(minimum) <= np.float32(0.1):
            return None, Status(Code.UNSCHEDULABLE)
        for waiting in self.handle.waiting_pods:
            if group_of(waiting.pod) == group:
                waiting.reject(self.name, "optimistic rejection in PostFilter")
        return None, Status.unschedulable(
            f"PodGroup {group} gets rejected due to Pod {pod.name} is unschedulable even "
            "after PostFilter"
        )

    # -- Permit ---------------------------------------------------------------------

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        group = group_of(pod)
        if group is None:
            return None, 0.0
        minimum, problem = self.min_available(pod)
        if minimum is None:
            return Status.unschedulable(problem), 0.0
        with self._lock:
            self._failed.discard(pod.uid)
        self._refresh(group, pod.uid)
        view = self._input(
            state, f"podgroup/{group}/permit", lambda: self._permit_view(state, group, pod, minimum)
        )
        reserved = int(view["reserved"])
        if reserved < minimum:
            return Status(
                Code.WAIT,
                (f"pod group {group}: {reserved} of minAvailable {minimum} members reserved",),
            ), self.timeout
        for waiting in self.handle.waiting_pods:
            if group_of(waiting.pod) == group:
                waiting.allow(self.name)
        return None, 0.0

    def _permit_view(self, state: CycleState, group: str, pod: Pod, minimum: int) -> dict[str, Any]:
        """Members that hold a reservation: placed (bound or assumed) and waiting, not failed."""
        with self._lock:
            failed = set(self._failed)
        placed: set[str] | None = state.get(_PLACED_KEY)
        if placed is None:
            placed = _placed_members(self.handle.table.pods, group)
        waiting = {
            w.pod.uid: w.pod.key for w in self.handle.waiting_pods if group_of(w.pod) == group
        }
        members = (placed | set(waiting) | {pod.uid}) - (failed - {pod.uid})
        live_waiting = sorted(key for uid, key in waiting.items() if uid not in failed)
        return {"reserved": len(members), "waiting": live_waiting, "minAvailable": minimum}

    # -- recorded inputs ------------------------------------------------------------

    def _input(
        self, state: CycleState, key: str, read: Callable[[], dict[str, Any]]
    ) -> Mapping[str, Any]:
        """What the plugin read beyond the snapshot, into the log; replay reads it back."""
        value: Mapping[str, Any] | None = None
        if self.handle.replaying:
            value = self.handle.recorded_input(self.name, key)
        if value is None:
            value = read()
        state.record_input(self.name, key, value)
        return value


def _placed_members(rows: Iterable[Mapping[str, Pod]], group: str) -> set[str]:
    """uids of the group's pods on nodes in the snapshot (bound and assumed).

    A scan of every placed pod (about 1 µs each), done once per attempt of a
    gang member: PreFilter leaves the result in CycleState for Permit.
    """
    namespace, _, name = group.partition("/")
    return {
        uid
        for pods in rows
        for uid, p in pods.items()
        if p.labels.get(POD_GROUP_LABEL) == name and p.namespace == namespace
    }


def _positive(args: Mapping[str, Any], key: str, default: int, seconds: bool = False) -> float:
    value = args.get(key, default)
    if seconds:
        ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
        what = "a positive number of seconds"
    else:
        ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
        what = "a positive integer"
    if not ok:
        raise PluginArgsError(key, f"must be {what} (got {value!r})")
    return float(value)
