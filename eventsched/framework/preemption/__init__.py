"""kube-scheduler v1.28's preemption Evaluator (`pkg/scheduler/framework/preemption`), shared
by the PostFilter plugins that preempt (DefaultPreemption, CapacityScheduling), as pure
functions given a callback that says whether the preemptor fits a node with some pods
removed:

- `victims`: `util.MoreImportantPod`, `filterPodsWithPDBViolation`, DefaultPreemption's
  `SelectVictimsOnNode`.
- `candidates`: `PodEligibleToPreemptOthers`, `nodesWherePreemptionMightHelp`,
  `DryRunPreemption`, and the FitError message when no node has a candidate.
- `pick`: `SelectCandidate` / `pickOneNodeForPreemption`, saying which criterion chose.
- `evaluator`: the pods per node, the errors' aggregate, the `preempted` decision.
"""
