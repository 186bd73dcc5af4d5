"""DefaultPreemption as a PostFilter plugin (`DefaultPreemption.PostFilter`, `Evaluator.Preempt`).

The plugin decides; it does not act. Its result names the nominated node, the
victims and the lower-priority pods whose nomination is cleared, with the
decision as the log keeps it (`preempted`). The scheduler appends that decision
and only once it is durable deletes the victims (upstream's `prepareCandidate`,
scheduler/eviction.py): a crash in between is settled on restart.

Every message goes out prefixed "preemption: ", as upstream's PostFilter does.

By version: v1.28 tries every node not found UnschedulableAndUnresolvable; v1.34 and
later only the nodes found Unschedulable (`nodes_for_status_code`: a node without a
status of its own has the absent one, UnschedulableAndUnresolvable unless PreFilter
rejected the pod as Unschedulable). v1.37's success says where it found room
(`placement_message`); earlier versions say nothing then.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eventsched.framework import (
    LEGACY_FEATURES,
    Code,
    CycleState,
    Features,
    FilterRunner,
    Handle,
    PostFilterResult,
    Status,
)
from eventsched.framework.extenders.client import HTTPExtender
from eventsched.framework.extenders.preemption import extender_narrowing
from eventsched.framework.preemption.candidates import (
    DryRunResult,
    FitsWithout,
    NodeFits,
    dry_run_preemption,
    fit_error_message,
    nodes_for_status_code,
    nodes_where_preemption_might_help,
    pod_eligible_to_preempt_others,
)
from eventsched.framework.preemption.evaluator import NodePods, conclude
from eventsched.model import NodeTable, Pod
from eventsched.plugins.defaultpreemption.args import NAME, parse_args
from eventsched.plugins.defaultpreemption.batch import batch_dry_run
from eventsched.plugins.defaultpreemption.offset import offset_and_num_candidates
from eventsched.plugins.defaultpreemption.reprieve import ReprieveOrders

PREFIX = "preemption: "


def placement_message(result: PostFilterResult) -> str:
    """What a v1.37 preemption that found room says (`Evaluator.Preempt`'s Success status):
    it ends the pod's FailedScheduling message, after the "preemption: " prefix."""
    node, victims = result.nominated_node_name, len(result.victims)
    return f"found a potential placement for pod on node {node}, preempting {victims} victims"


class DefaultPreemption:
    name = NAME
    counts_preemption_attempts = True

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        self.args = parse_args(args)
        self.handle = handle
        #: v1.34 and later try only the nodes found Unschedulable.
        self._unschedulable_only = features.since("1.34")
        #: v1.37 says where a preemption found room.
        self._says_placement = features.since("1.37")
        self._filters: FilterRunner | None = None
        self._extenders: Sequence[HTTPExtender] = ()
        #: Each node's reprieve order, kept between preemptions (reprieve.py).
        self._orders = ReprieveOrders()

    def use_filters(self, runner: FilterRunner) -> None:
        self._filters = runner

    def use_extenders(self, extenders: Sequence[HTTPExtender]) -> None:
        self._extenders = extenders

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        result, status = self._preempt(state, pod, statuses)
        if status.message:
            status = Status(status.code, (PREFIX + status.message,), status.plugin)
        return result, status

    def _preempt(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        table = self.handle.table
        nominated = pod.nominated_node_name or table.nominated.node_of(pod.uid) or ""
        node_pods = NodePods(table)
        eligibility = pod_eligible_to_preempt_others(
            pod, node_pods.get(nominated, ()), statuses.get(nominated)
        )
        if not eligibility.eligible:
            return None, Status.unschedulable(eligibility.reason)
        if len(table) == 0:
            return None, Status.as_error("no nodes available")
        if self._unschedulable_only:
            potential = nodes_for_status_code(table.names, statuses)
        else:
            potential = nodes_where_preemption_might_help(table.names, statuses)
        if not potential.nodes:
            return PostFilterResult(""), Status.unschedulable(fit_error_message(potential.statuses))
        offset, wanted = offset_and_num_candidates(state.seed, len(potential.nodes), self.args)
        dry = self._dry_run(state, pod, table, potential.nodes, offset, wanted)
        narrow = extender_narrowing(self._extenders, state, self.handle, pod, table)
        result, status = conclude(pod, table, dry, potential, offset, wanted, narrow)
        if self._says_placement and status.is_success and result is not None:
            status = Status(Code.SUCCESS, (placement_message(result),))
        return result, status

    def _dry_run(
        self,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        nodes: Sequence[str],
        offset: int,
        wanted: int,
    ) -> DryRunResult:
        """`DryRunPreemption`: many nodes per batch Filter pass when only requested-only
        Filters judge the pod (batch.py), else node by node; the same result either way."""
        pdbs = table.objects.disruption_budgets()
        fits_on = self._fits_on(state, pod, table)
        runner = self._filters
        if runner is not None and runner.judged_by_requested_only(state):
            return batch_dry_run(
                runner, state, pod, table, nodes, pdbs, offset, wanted, self._orders
            )
        return dry_run_preemption(pod, nodes, NodePods(table), pdbs, offset, wanted, fits_on)

    def _fits_on(self, state: CycleState, pod: Pod, table: NodeTable) -> NodeFits:
        runner = self._filters
        if runner is None:
            raise RuntimeError("DefaultPreemption was not given its profile's Filter plugins")

        def on(name: str) -> FitsWithout:
            def fits(removed: Sequence[Pod]) -> Status:
                return runner.run_filter_with_nominated_pods(state, pod, table, name, removed)

            return fits

        return on
