"""CapacityScheduling's preemption (scheduler-plugins v0.28.9 `CapacityScheduling.PostFilter`).

kube-scheduler's `preemption.Evaluator` with CapacityScheduling's own answers:

- every potential node is a candidate (`GetOffsetAndNumCandidates` is 0, n);
- `PodEligibleToPreemptOthers` looks at terminating pods on the pod's nominated node
  with the quotas in mind (`eligible`);
- `SelectVictimsOnNode` picks victims by quota (`select_victims`): when the preemptor's
  namespace is over its min with the pod (and its nominated peers), the lower-priority
  pods of its own namespace; when it is not, pods of other quota namespaces that are over
  their min, whatever their priority; a preemptor without a quota takes lower-priority
  pods of namespaces without one. A pod of a namespace without a quota is never the
  victim of a preemptor with one, and the other way round.

The node's pods are visited least important first and each potential victim is taken off
its namespace's usage as it is chosen, so a namespace that drops to its min stops giving
victims. The rest (candidate choice, the FitError message, the `preempted` decision the
scheduler acts on) is DefaultPreemption's. Unlike DefaultPreemption, its messages carry
no "preemption: " prefix (upstream returns the Evaluator's status as it is).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from eventsched.framework import CycleState, FilterRunner, PostFilterResult, Status
from eventsched.framework.preemption.candidates import (
    NEVER_POLICY,
    TERMINATING_VICTIM,
    DryRun,
    Eligibility,
    fit_error_message,
    nodes_where_preemption_might_help,
)
from eventsched.framework.preemption.evaluator import Narrow, NodePods, conclude
from eventsched.framework.preemption.victims import (
    FitsWithout,
    VictimSelection,
    filter_pods_with_pdb_violation,
    importance_order,
    start_time_ns,
)
from eventsched.framework.status import Code
from eventsched.model import NodeTable, Pod
from eventsched.model.counted import counted
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.model.pod import PREEMPT_NEVER
from eventsched.model.resources import Resources
from eventsched.plugins.capacityscheduling.elasticquota import (
    LOWER_BOUND_OF_MIN,
    UPPER_BOUND_OF_MAX,
)
from eventsched.plugins.capacityscheduling.quotas import QuotaInfo, exceeds
from eventsched.plugins.capacityscheduling.state import STATE_KEY, PreFilterState

NO_CYCLE_STATE = "not eligible due to failed to read from cycleState"
GLOBAL_MAX_EXCEEDED = "global quota max exceeded"


def eligible(
    pod: Pod, node_pods: Sequence[Pod] | None, nominated_status: Status | None, state: object
) -> Eligibility:
    """`preemptor.PodEligibleToPreemptOthers`; `node_pods` None when the pod's nominated
    node is not in the snapshot."""
    if pod.preemption_policy == PREEMPT_NEVER:
        return Eligibility(False, NEVER_POLICY)
    if not isinstance(state, PreFilterState):
        return Eligibility(False, NO_CYCLE_STATE)
    if not pod.nominated_node_name or node_pods is None:
        return Eligibility(True)
    if (
        nominated_status is not None
        and nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    ):
        return Eligibility(True)
    quotas = state.quotas
    own = quotas.get(pod.namespace)
    if own is None:
        for other in node_pods:
            unquoted = quotas.get(other.namespace) is None
            if unquoted and other.deleting and other.priority < pod.priority:
                return Eligibility(False, TERMINATING_VICTIM)
        return Eligibility(True)
    over_min = own.used_over_min_with(state.in_quota_request)
    for other in node_pods:
        info = quotas.get(other.namespace)
        if not other.deleting or info is None:
            continue
        if other.namespace == pod.namespace and other.priority < pod.priority:
            return Eligibility(False, TERMINATING_VICTIM)
        if other.namespace != pod.namespace and not over_min and info.used_over_min():
            return Eligibility(False, TERMINATING_VICTIM)
    return Eligibility(True)


class WhatIf:
    """The quotas' usage on one node's what-if: pods taken off and put back (upstream's
    RemovePod / AddPod PreFilter extensions on the cloned snapshot), kept as changes to
    the PreFilter snapshot (the dry run makes one per node)."""

    def __init__(self, state: PreFilterState) -> None:
        self.state = state
        #: Namespace -> its usage now, for the namespaces a pod was taken off or put back.
        self._used: dict[str, Resources] = {}
        #: The sum of those changes, for the sum of every quota's usage.
        self._change: Resources = {}

    def info(self, namespace: str) -> QuotaInfo | None:
        return self.state.quotas.get(namespace)

    def used(self, namespace: str) -> Mapping[str, int]:
        changed = self._used.get(namespace)
        return self.state.quotas.infos[namespace].used if changed is None else changed

    def change(self, pod: Pod, sign: int) -> None:
        info = self.info(pod.namespace)
        if info is None:
            return
        used = self._used.get(pod.namespace)
        if used is None:
            used = self._used[pod.namespace] = dict(info.used)
        for name, amount in counted(pod.requests).items():
            used[name] = used.get(name, 0) + sign * amount
            self._change[name] = self._change.get(name, 0) + sign * amount

    def over_min(self, namespace: str) -> bool:
        info = self.state.quotas.infos[namespace]
        return exceeds(self.used(namespace), {}, info.min, LOWER_BOUND_OF_MIN)

    def over_quota(
        self, namespace: str, request: Mapping[str, int], every: Mapping[str, int]
    ) -> bool:
        """The preemptor's namespace over its max with `request`, or every quota's usage
        with `every` over the sum of mins."""
        info = self.state.quotas.infos[namespace]
        if exceeds(request, self.used(namespace), info.max, UPPER_BOUND_OF_MAX):
            return True
        return self.state.quotas.aggregated_used_over_min_with(every, self._change)


def least_important_first(pods: Sequence[Pod]) -> list[Pod]:
    """`sort.Slice(pods, !MoreImportantPod(i, j))`: lowest priority first, then the latest
    start (stable where upstream's order is unspecified)."""
    return sorted(pods, key=lambda p: (p.priority, -start_time_ns(p)))


def potential_victims(pod: Pod, node_pods: Sequence[Pod], what_if: WhatIf) -> list[Pod]:
    """The node's pods the preemptor may evict, each taken off its quota's usage as chosen."""
    state = what_if.state
    found: list[Pod] = []
    if what_if.info(pod.namespace) is None:
        for other in least_important_first(node_pods):
            if what_if.info(other.namespace) is None and other.priority < pod.priority:
                found.append(other)
        return found
    own_over_min = state.quotas.infos[pod.namespace].used_over_min_with(state.in_quota_request)
    for other in least_important_first(node_pods):
        if what_if.info(other.namespace) is None:
            continue
        if own_over_min:
            chosen = other.namespace == pod.namespace and other.priority < pod.priority
        else:
            chosen = other.namespace != pod.namespace and what_if.over_min(other.namespace)
        if chosen:
            found.append(other)
            what_if.change(other, -1)
    return found


def select_victims(
    pod: Pod,
    node: str,
    node_pods: Sequence[Pod],
    pdbs: Sequence[PodDisruptionBudget],
    fits: FitsWithout,
    state: PreFilterState,
) -> VictimSelection:
    """`preemptor.SelectVictimsOnNode`."""
    what_if = WhatIf(state)
    potential = potential_victims(pod, node_pods, what_if)
    if not potential:
        message = f"No victims found on node {node} for preemptor pod {pod.name}"
        return VictimSelection((), 0, Status.unresolvable(message))
    removed = list(potential)
    status = fits(tuple(removed))
    if not status.is_success:
        return VictimSelection((), 0, status)
    with_quota = what_if.info(pod.namespace) is not None
    if with_quota and what_if.over_quota(pod.namespace, state.pod_request, state.pod_request):
        return VictimSelection((), 0, Status.unschedulable(GLOBAL_MAX_EXCEEDED))
    violating, non_violating = filter_pods_with_pdb_violation(importance_order(potential), pdbs)
    victims: list[Pod] = []
    num_violating = 0
    for group, counts in ((violating, True), (non_violating, False)):
        for victim in group:
            removed = [r for r in removed if r is not victim]
            what_if.change(victim, 1)
            fit = fits(tuple(removed)).is_success
            if not fit:
                removed.append(victim)
                what_if.change(victim, -1)
                victims.append(victim)
                num_violating += counts
            if with_quota and what_if.over_quota(
                pod.namespace, state.in_quota_request, state.total_request
            ):
                if not fit:  # upstream removes it from the node a second time, and fails
                    message = f"no corresponding pod {victim.name} in pods of node {node}"
                    return VictimSelection((), 0, Status.as_error(message))
                removed.append(victim)
                what_if.change(victim, -1)
                victims.append(victim)
    return VictimSelection(tuple(victims), num_violating, Status())


def preempt(
    runner: FilterRunner,
    state: CycleState,
    pod: Pod,
    statuses: Mapping[str, Status],
    table: NodeTable,
    narrow: Narrow | None = None,
) -> tuple[PostFilterResult | None, Status]:
    """`Evaluator.Preempt` with CapacityScheduling's preemptor (`narrow`: the extenders'
    preempt verb, `callExtenders`)."""
    pre = state.get(STATE_KEY)
    nominated = pod.nominated_node_name or table.nominated.node_of(pod.uid) or ""
    node_pods = NodePods(table)
    on_nominated = node_pods.get(nominated) if nominated else None
    eligibility = eligible(pod, on_nominated, statuses.get(nominated), pre)
    if not eligibility.eligible:
        return None, Status.unschedulable(eligibility.reason)
    assert isinstance(pre, PreFilterState)
    if len(table) == 0:
        return None, Status.as_error("no nodes available")
    potential = nodes_where_preemption_might_help(table.names, statuses)
    if not potential.nodes:
        return PostFilterResult(""), Status.unschedulable(fit_error_message(potential.statuses))
    pdbs = table.objects.disruption_budgets()
    wanted = len(potential.nodes)
    dry = DryRun(wanted)
    for name in potential.nodes:

        def fits(removed: Sequence[Pod], name: str = name) -> Status:
            return runner.run_filter_with_nominated_pods(state, pod, table, name, removed)

        selection = select_victims(pod, name, node_pods[name], pdbs, fits, pre)
        if dry.visit(name, selection):
            break
    return conclude(pod, table, dry.result(), potential, 0, wanted, narrow)
