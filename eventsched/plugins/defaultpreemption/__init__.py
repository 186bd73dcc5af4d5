"""DefaultPreemption's algorithm (kube-scheduler v1.28), as pure functions: NOT WIRED YET.

Nothing here is registered as a plugin, enabled in a profile or read by the
config: `config check` keeps refusing DefaultPreemption until a PostFilter plugin
acts through the cluster (nominatedNodeName, victim deletion), a later step of
issue 15. What is here is the part of upstream's
`pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go` and
`pkg/scheduler/framework/preemption/preemption.go` that decides, given a
callback that says whether the preemptor fits a node with some pods removed:

- `args`: DefaultPreemptionArgs and `ValidateDefaultPreemptionArgs`.
- `victims`: `util.MoreImportantPod`, `filterPodsWithPDBViolation`, `SelectVictimsOnNode`.
- `candidates`: `PodEligibleToPreemptOthers`, `nodesWherePreemptionMightHelp`,
  `GetOffsetAndNumCandidates` (offset from the attempt's recorded seed),
  `DryRunPreemption`, and the FitError message when no node has a candidate.
- `pick`: `SelectCandidate` / `pickOneNodeForPreemption`.
"""

from eventsched.plugins.defaultpreemption.args import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    DefaultPreemptionArgs,
    parse_args,
    validation_errors,
)
from eventsched.plugins.defaultpreemption.candidates import (
    Candidate,
    DryRunResult,
    Eligibility,
    PotentialNodes,
    dry_run_preemption,
    fit_error_message,
    nodes_where_preemption_might_help,
    num_candidates,
    offset_and_num_candidates,
    pod_eligible_to_preempt_others,
    preemption_offset,
)
from eventsched.plugins.defaultpreemption.pick import select_candidate
from eventsched.plugins.defaultpreemption.victims import (
    FitsWithout,
    VictimSelection,
    filter_pods_with_pdb_violation,
    more_important_pod,
    select_victims_on_node,
    start_time_ns,
)

__all__ = [
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "Candidate",
    "DefaultPreemptionArgs",
    "DryRunResult",
    "Eligibility",
    "FitsWithout",
    "PotentialNodes",
    "VictimSelection",
    "dry_run_preemption",
    "filter_pods_with_pdb_violation",
    "fit_error_message",
    "more_important_pod",
    "nodes_where_preemption_might_help",
    "num_candidates",
    "offset_and_num_candidates",
    "parse_args",
    "pod_eligible_to_preempt_others",
    "preemption_offset",
    "select_candidate",
    "select_victims_on_node",
    "start_time_ns",
    "validation_errors",
]
