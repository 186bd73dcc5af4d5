"""kube-scheduler's families as each version exports them (its pkg/scheduler/metrics).

`kubescheduler.TABLE` is v1.28's. Later versions renamed one family, dropped one, promoted
five from ALPHA to BETA and reworded four HELP texts; `at_version` gives a v1.28 family as a
version exports it (None: not exported), read off each version's metrics.go (1.28.0 to
1.37.2) and checked against scrapes of the real v1.28.0 and v1.37.2
(tests/scheduler/metricsref/). A deprecated family is still shown in the release that
deprecates it and hidden from the next (component-base's rule), then removed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from eventsched.metrics import kubescheduler as k
from eventsched.metrics.family import Family, Stability

#: v1.28 family -> ((from minor, stability), ...): promoted at that minor.
_PROMOTED: dict[Family[Any], tuple[int, Stability]] = {
    k.ALGORITHM_DURATION: (37, "BETA"),
    k.PLUGIN_EXECUTION_DURATION: (37, "BETA"),
    k.PLUGIN_EVALUATION: (36, "BETA"),
    k.UNSCHEDULABLE_PODS: (36, "BETA"),
    k.PERMIT_WAIT_DURATION: (36, "BETA"),
}
#: v1.28 family -> (from minor, HELP from then on).
_REWORDED: dict[Family[Any], tuple[int, str]] = {
    k.PLUGIN_EVALUATION: (
        30,
        "Number of attempts to schedule pods by each plugin and the extension point "
        "(available only in PreFilter, Filter, PreScore, and Score).",
    ),
    k.POD_SCHEDULING_SLI_DURATION: (
        31,
        "E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
        "queue and might involve multiple scheduling attempts.",
    ),
    k.PENDING_PODS: (
        37,
        "Number of pending pods, by the queue type. 'active' means number of pods in "
        "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number "
        "of pods in unschedulableEntities that the scheduler attempted to schedule and "
        "failed; 'gated' is the number of unschedulable pods that the scheduler never "
        "attempted to schedule because they are gated; 'incomplete' means number of pods in "
        "incompletePodGroupPods; 'pending' means number of pods in pendingPodGroupPods.",
    ),
    k.PREEMPTION_VICTIMS: (
        37,
        "Number of selected preemption victims for preemption initiated by a single pod",
    ),
}
#: `scheduler_cache_size`: v1.33 added it beside the old name, which it deprecated.
CACHE_SIZE_133 = replace(k.CACHE_SIZE, name="scheduler_cache_size")


def minor_of(version: str) -> int:
    """28 for "1.28"."""
    return int(version.split(".")[1])


def at_version(family: Family[Any], version: str) -> Family[Any] | None:
    """`family`, a row of v1.28's table, as kube-scheduler `version` exports it."""
    minor = minor_of(version)
    if family is k.POD_SCHEDULING_DURATION:
        # Deprecated since 1.28.0: shown in 1.28, hidden from 1.29 (1.30-1.32 say 1.29.0),
        # removed in 1.33.
        return family if minor == 28 else None
    if family is k.CACHE_SIZE:
        if minor >= 34:
            return None
        return replace(family, deprecated_since="1.33.0") if minor == 33 else family
    changed = family
    promoted = _PROMOTED.get(family)
    if promoted is not None and minor >= promoted[0]:
        changed = replace(changed, stability=promoted[1])
    reworded = _REWORDED.get(family)
    if reworded is not None and minor >= reworded[0]:
        changed = replace(changed, help=reworded[1])
    return changed


def table_at(version: str) -> dict[Family[Any], Family[Any]]:
    """v1.28's rows -> what `version` exports for each, the ones it exports, in a scrape's
    order; `scheduler_cache_size` (from 1.33) under the old cache size's row's key
    `CACHE_SIZE_133`."""
    rows: dict[Family[Any], Family[Any]] = {}
    for family in k.TABLE:
        exported = at_version(family, version)
        if exported is not None:
            rows[family] = exported
        if family is k.CACHE_SIZE and minor_of(version) >= 33:
            rows[CACHE_SIZE_133] = CACHE_SIZE_133
    return rows
