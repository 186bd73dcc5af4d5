"""DefaultPreemption (kube-scheduler v1.28, and v1.34/v1.37 where they differ): the PostFilter plugin over the preemption
Evaluator's pure functions (eventsched/framework/preemption, re-exported here). The plugin
decides; the scheduler acts once the decision is in the log (scheduler/eviction.py).

- `args`: DefaultPreemptionArgs and `ValidateDefaultPreemptionArgs`.
- `offset`: `GetOffsetAndNumCandidates` (offset from the attempt's recorded seed).
- `batch`, `reprieve`: the dry run over many nodes per batch Filter pass.
- `plugin`: `DefaultPreemption.PostFilter` / `Evaluator.Preempt` over the profile's filters.
"""

from eventsched.framework.preemption.candidates import (
    Candidate,
    DryRunResult,
    Eligibility,
    PotentialNodes,
    dry_run_preemption,
    fit_error_message,
    nodes_for_status_code,
    nodes_where_preemption_might_help,
    pod_eligible_to_preempt_others,
)
from eventsched.framework.preemption.pick import Choice, choose, select_candidate
from eventsched.framework.preemption.victims import (
    FitsWithout,
    VictimSelection,
    filter_pods_with_pdb_violation,
    more_important_pod,
    select_victims_on_node,
    start_time_ns,
)
from eventsched.plugins.defaultpreemption.args import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    DefaultPreemptionArgs,
    parse_args,
    validation_errors,
)
from eventsched.plugins.defaultpreemption.offset import (
    num_candidates,
    offset_and_num_candidates,
    preemption_offset,
)
from eventsched.plugins.defaultpreemption.plugin import DefaultPreemption, placement_message

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
    "nodes_for_status_code",
    "nodes_where_preemption_might_help",
    "num_candidates",
    "offset_and_num_candidates",
    "parse_args",
    "placement_message",
    "pod_eligible_to_preempt_others",
    "preemption_offset",
    "select_candidate",
    "select_victims_on_node",
    "start_time_ns",
    "validation_errors",
]
