"""Finding preemption candidates (v1.28 `preemption.Evaluator.findCandidates`, `DryRunPreemption`).

- `pod_eligible_to_preempt_others`: `DefaultPreemption.PodEligibleToPreemptOthers`.
- `nodes_where_preemption_might_help`: every node but those the failed attempt
  found UnschedulableAndUnresolvable (a node absent from the statuses is a
  potential node, as v1.28's `NodeToStatusMap` lookup of a missing node gives
  a nil, i.e. Success, status; kubernetes#125197, v1.31, made absence mean
  UnschedulableAndUnresolvable).
- `nodes_for_status_code`: v1.34 and later, only the nodes found Unschedulable.
- `dry_run_preemption`: `DryRunPreemption`, visiting the potential nodes in
  order from the offset (upstream checks them in parallel, so which nodes past
  the stopping point it also visited is not deterministic there).
- `fit_error_message`: the FitError text `Preempt` returns when no node has a candidate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from eventsched.framework.preemption.victims import (
    FitsWithout,
    VictimSelection,
    select_victims_on_node,
)
from eventsched.framework.status import Code, Status
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.model.pod import PREEMPT_NEVER, Pod

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NEVER_POLICY = "not eligible due to preemptionPolicy=Never."
TERMINATING_VICTIM = "not eligible due to a terminating pod on the nominated node."
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"


@dataclass(frozen=True, slots=True)
class Eligibility:
    eligible: bool
    #: Why not ("" when eligible), as upstream words it.
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node where preemption makes room: the victims in the order found, and how
    many of them a PodDisruptionBudget did not allow to disrupt."""

    node: str
    victims: tuple[Pod, ...]
    num_pdb_violations: int


@dataclass(frozen=True, slots=True)
class PotentialNodes:
    """`nodesWherePreemptionMightHelp`: nodes to try, in the given order, and the
    status of each node left out."""

    nodes: tuple[str, ...]
    statuses: Mapping[str, Status]


@dataclass(frozen=True, slots=True)
class DryRunResult:
    """`DryRunPreemption`: candidates (PDB-respecting ones first), the status of every
    visited node that is not one, and the nodes visited, in order."""

    candidates: tuple[Candidate, ...]
    statuses: Mapping[str, Status]
    visited: tuple[str, ...]

    @property
    def errors(self) -> tuple[Status, ...]:
        return tuple(s for s in self.statuses.values() if s.code == Code.ERROR)


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """`podTerminatingByPreemption` with PodDisruptionConditions on (its v1.28 default):
    being deleted, with DisruptionTarget=True for reason PreemptionByScheduler."""
    return pod.deleting and pod.disruption_target == PREEMPTION_BY_SCHEDULER


def pod_eligible_to_preempt_others(
    pod: Pod, nominated_node_pods: Sequence[Pod], nominated_node_status: Status | None
) -> Eligibility:
    """`PodEligibleToPreemptOthers`: not with preemptionPolicy Never; not while a
    lower-priority victim of an earlier preemption is still terminating on the pod's
    nominated node, unless that node is now UnschedulableAndUnresolvable for it.
    `nominated_node_pods` are the pods on `pod.nominated_node_name` (none if unknown)."""
    if pod.preemption_policy == PREEMPT_NEVER:
        return Eligibility(False, NEVER_POLICY)
    if pod.nominated_node_name:
        if (
            nominated_node_status is not None
            and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        ):
            return Eligibility(True)
        for other in nominated_node_pods:
            if other.priority < pod.priority and pod_terminating_by_preemption(other):
                return Eligibility(False, TERMINATING_VICTIM)
    return Eligibility(True)


def nodes_where_preemption_might_help(
    nodes: Sequence[str], statuses: Mapping[str, Status]
) -> PotentialNodes:
    """`nodesWherePreemptionMightHelp` over the failed attempt's per-node statuses."""
    potential: list[str] = []
    left_out: dict[str, Status] = {}
    for name in nodes:
        status = statuses.get(name)
        if status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            left_out[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_HELPFUL,))
        else:
            potential.append(name)
    return PotentialNodes(tuple(potential), left_out)


def nodes_for_status_code(
    nodes: Sequence[str], statuses: Mapping[str, Status], code: Code = Code.UNSCHEDULABLE
) -> PotentialNodes:
    """v1.34 and later: `NodeToStatus.NodesForStatusCode(Unschedulable)`, the nodes whose
    status is exactly Unschedulable (`statuses` gives every node its status, those without
    one of their own the absent status). Every other node is, in the FitError when no
    candidate is found, "Preemption is not helpful for scheduling" (the absent status
    `Preempt` sets), as `nodes_where_preemption_might_help` leaves them out."""
    potential: list[str] = []
    left_out: dict[str, Status] = {}
    for name in nodes:
        status = statuses.get(name)
        if status is not None and status.code == code:
            potential.append(name)
        else:
            left_out[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (NOT_HELPFUL,))
    return PotentialNodes(tuple(potential), left_out)


NodeFits = Callable[[str], FitsWithout]
"""For a node name, the callback that says whether the preemptor fits it with pods removed."""


def dry_run_preemption(
    preemptor: Pod,
    nodes: Sequence[str],
    node_pods: Mapping[str, Sequence[Pod]],
    pdbs: Sequence[PodDisruptionBudget],
    offset: int,
    wanted: int,
    fits_on: NodeFits,
) -> DryRunResult:
    """`DryRunPreemption`: select victims on each node from `offset` on (wrapping).

    Each of upstream's two candidate lists (no PDB violation / some) keeps at most
    `wanted` candidates; the run stops once there is a non-violating candidate and
    the two lists hold `wanted` together. A node whose victims come out empty is an
    error ("expected at least one victim pod on node ...").
    """
    found = DryRun(wanted)
    for i in range(len(nodes)):
        name = nodes[(offset + i) % len(nodes)]
        selection = select_victims_on_node(preemptor, node_pods.get(name, ()), pdbs, fits_on(name))
        if found.visit(name, selection):
            break
    return found.result()


class DryRun:
    """What `DryRunPreemption` keeps as it visits nodes: upstream's two capped candidate
    lists (no PDB violation / some), the statuses of the nodes that are not candidates,
    and the nodes visited, in order."""

    def __init__(self, wanted: int) -> None:
        self.wanted = wanted
        self.non_violating: list[Candidate] = []
        self.violating: list[Candidate] = []
        self.statuses: dict[str, Status] = {}
        self.visited: list[str] = []

    def visit(self, name: str, selection: VictimSelection) -> bool:
        """Take in one node's selection; True once the run stops (there is a non-violating
        candidate and the two lists hold `wanted` together)."""
        self.visited.append(name)
        status = candidate_status(name, selection)
        if status is not None:
            self.statuses[name] = status
            return False
        found = Candidate(name, selection.victims, selection.num_pdb_violations)
        target = self.violating if selection.num_pdb_violations else self.non_violating
        if len(target) < self.wanted:
            target.append(found)
        return bool(self.non_violating) and (
            len(self.non_violating) + len(self.violating) >= self.wanted
        )

    def result(self) -> DryRunResult:
        candidates = tuple(self.non_violating + self.violating)
        return DryRunResult(candidates, self.statuses, tuple(self.visited))


def candidate_status(node: str, selection: VictimSelection) -> Status | None:
    """None when the node is a candidate, else the status the dry run records for it."""
    if not selection.is_success:
        return selection.status
    if not selection.victims:
        return Status.as_error(f'expected at least one victim pod on node "{node}"')
    return None


def fit_error_message(statuses: Mapping[str, Status]) -> str:
    """`FitError.Error()` over the dry run's and left-out nodes' statuses (NumAllNodes is
    how many there are): "0/N nodes are available: <count> <reason>, ... (sorted)."."""
    counts: Counter[str] = Counter()
    for status in statuses.values():
        counts.update(status.reasons)
    msg = f"0/{len(statuses)} nodes are available:"
    histogram = sorted(f"{n} {reason}" for reason, n in counts.items())
    if histogram:
        msg += f" {', '.join(histogram)}."
    return msg
