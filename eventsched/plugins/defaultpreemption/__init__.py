"""DefaultPreemption (kube-scheduler v1.28): the PostFilter plugin (`plugin`) over the
algorithm as pure functions. The plugin decides; the scheduler acts once the
decision is in the log (scheduler/preemption.py). What is here is the part of upstream's
`pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go` and
`pkg/scheduler/framework/preemption/preemption.go` that decides, given a
callback that says whether the preemptor fits a node with some pods removed:

- `args`: DefaultPreemptionArgs and `ValidateDefaultPreemptionArgs`.
- `victims`: `util.MoreImportantPod`, `filterPodsWithPDBViolation`, `SelectVictimsOnNode`.
- `candidates`: `PodEligibleToPreemptOthers`, `nodesWherePreemptionMightHelp`,
  `GetOffsetAndNumCandidates` (offset from the attempt's recorded seed),
  `DryRunPreemption`, and the FitError message when no node has a candidate.
- `pick`: `SelectCandidate` / `pickOneNodeForPreemption`, saying which criterion chose.
- `plugin`: `DefaultPreemption.PostFilter` / `Evaluator.Preempt` over the profile's filters.
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
from eventsched.plugins.defaultpreemption.pick import Choice, choose, select_candidate
from eventsched.plugins.defaultpreemption.plugin import DefaultPreemption
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
    "Choice",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "DryRunResult",
    "Eligibility",
    "FitsWithout",
    "PotentialNodes",
    "VictimSelection",
    "choose",
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
