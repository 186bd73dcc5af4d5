"""The closed vocabulary of event kinds, and what each one's `data` holds.

The store refuses a kind not listed here, so a typo cannot invent a new
kind that no view, projection or replay understands. docs/event-log.md
documents the same table for people writing SQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Inputs: what the scheduler saw or read. Replay rebuilds its view from these.
INPUT_KINDS: dict[str, str] = {
    "node_observed": "a node as seen (node.to_record()); identical repeats are not written "
    "unless they refresh the node's image summary (ImageLocality, as v1.28's UpdateNode)",
    "node_removed": "a node deleted from the cluster; data: {uid} or, for one the cluster no "
    "longer listed when a scheduler started, {reason}",
    "pod_observed": "a pod as seen (pod.to_record(), fields at their default left out, "
    "annotations only under keys a configured plugin reads); identical "
    "repeats are not written, nor is the pod on the node our own `bound` gave it",
    "pod_removed": "a pod deleted from the cluster; data: {nodeName, reason?} (reason: not "
    "listed when a scheduler started; then only the uid column is set)",
    "object_observed": "a Namespace (labels) or a Service, ReplicaSet, StatefulSet or "
    "ReplicationController (its pod selector) as seen: data: {kind, name, namespace?, labels? | "
    "selector?}; what inter-pod affinity's namespaceSelector and PodTopologySpread's default "
    "constraints read; or a PersistentVolumeClaim {namespace, name, uid?, volumeName?, "
    "storageClassName?, accessModes?, storage?, volumeMode, selector?, phase, selectedNode?, "
    "bindCompleted?, deleting?, ownerUid?}, PersistentVolume {name, labels?, storage?, "
    "accessModes?, storageClassName?, volumeMode, claimRef?, nodeAffinity?, phase, source?, "
    "driver?, handle?, deleting?}, StorageClass {name, provisioner, volumeBindingMode, "
    "allowedTopologies?}, CSINode {name, drivers[{name, count?}], "
    "migratedPlugins?}, CSIDriver {name, "
    "storageCapacity} or CSIStorageCapacity {namespace, name, storageClassName, nodeTopology "
    "(null: a nil selector), capacity?, maximumVolumeSize?}: what the volume plugins read "
    "(storage sizes in bytes); or a PodDisruptionBudget {namespace, name, selector "
    "(null: a nil selector), disruptionsAllowed, disruptedPods?[pod names]}: what "
    "DefaultPreemption reads; identical repeats are not written",
    "object_removed": "such an object deleted from the cluster; data: as its last object_observed",
    "input_recorded": "an outside value a plugin read; plugin column set; data: {key, value}; "
    "with no plugin, the scheduler's note that a pod sets fields no plugin of its profile "
    "honours: key ignoredFields, value {fields[], plugins[]}",
    "config_loaded": "a profile put in force; scheduler column = profile; data: {digest, profile}",
}

#: Decisions: what the scheduler did, each tied to an attempt where there is one.
DECISION_KINDS: dict[str, str] = {
    "queued": "pod entered the scheduling queue; data: {queue, event}",
    "attempt_started": "a scheduling cycle began; data: {attempts, startIndex, seed, configDigest, nodes}"
    " and, for a call kube-scheduler made to `eventsched extender`, extender: {verb, form, count,"
    " names | allBut, unknown?} (filter, prioritize), {verb: preempt, form, count, victims[{node,"
    " victims[uid], pdbViolations}]} (kube-scheduler's candidates) or {verb: bind, node}",
    "prefiltered": "PreFilter ran; data: {skipped[] or notSkipped[], nodeNames? (when a "
    "plugin narrowed the nodes), status?{code,reasons,plugin} (unless Success)} (the PreFilter "
    "plugins that returned Skip, whose Filter is skipped: named, or, when fewer, the profile's "
    "other PreFilter plugins are; logs before 2026-11-25 always wrote skipped)",
    "filtered": "Filter ran; data: {numNodesToFind, startIndex, evaluated, feasible, "
    "rejections[{plugin, code, reasons[], nodes[]}], absent?{count, code, reasons[]}, "
    "numAllNodes?} (numAllNodes: extender calls, and logs before 2026-11-25; else "
    "attempt_started's nodes)",
    "post_filtered": "PostFilter ran after no node fit; data: {status, nominatedNodeName} "
    "(a node or '' when a plugin's result overrides the pod's nomination, null when none did)",
    "preempted": "a preemption plugin (DefaultPreemption, CapacityScheduling; the plugin "
    "column) chose a node and victims for the pod (the preemptor); "
    "node column = the nominated node; written with the attempt, durable before any victim "
    "is evicted; data: {nominatedNodeName, victims[{uid, namespace, name, priority, "
    "pdbViolation}], candidates[{node, victims[uid], pdbViolations}] (the candidates the "
    "choice was among, in order: the dry run's, or what extenders with a preempt verb left of "
    "them; the chosen one and at most 20 others), candidateCount "
    "(only when there were more: how many), extenders?[{extender, kept[node] | error, "
    "ignored?[node]}] and dryRunCandidates? (when an extender's preempt verb was called: "
    "what each kept, and how many candidates the dry run found), chosenBy (the first of upstream's ordered criteria that left one candidate, or 'only candidate' / 'first of tied'), offset, numCandidates, "
    "evaluated (nodes the dry run visited), potentialNodes, lowerNominated[{uid, namespace, "
    "name}] (lower-priority pods whose nomination to the node is cleared)}",
    "preempt_answered": "eventsched extender's answer to kube-scheduler's preempt call: the "
    "candidates the profile keeps; data: {kept[{node, victims[uid], pdbViolations}] (the "
    "victims the pod needs gone for the profile's filters to pass), dropped[{node, reason}], "
    "error?}; nothing is evicted by eventsched",
    "evicted": "one victim of a `preempted` decision, after the API answered; uid/namespace/"
    "name = the victim, node column = its node, attempt = the preemptor's attempt; data: "
    "{preemptor{uid, namespace, name}, outcome: deleted|gone|rejected|preemptedInMemory|"
    "failed|abandoned, code, reason?, reconciled?} (gone: the victim no longer existed; "
    "rejected: it was waiting on Permit and was rejected instead; preemptedInMemory: v1.37, "
    "it was waiting on Permit and its wait was ended with an Error instead; failed: the API "
    "refused, reason says why, and the "
    "decision's other victims are left alone; abandoned: a starting process found the "
    "preemptor gone or placed and evicted nothing; reconciled: settled by a starting process "
    "for a decision its predecessor did not finish)",
    "scored": "Score ran; data: {nodes, plugins[{name, weight, raw[], normalized[]}], "
    "top[{node, total}], skipped[] (PreScore returned Skip), summary{max,min,mean}}: raw and "
    "normalized are aligned with top (the top K nodes, best first), weighted = normalized x "
    "weight (logs before migration 0004 kept scores[{node, plugin, raw, normalized, weighted}])",
    "selected": "a node was chosen; node column set; data: {score, tieCount?, tieBreak?} "
    "(score null: the only feasible node; the tied nodes are the first tieCount of scored's "
    'top, the tie broken by attempt_started\'s seed, or, tieBreak "heap" (v1.37), by '
    "kube-scheduler's heap order over the scored nodes, a node an extender scored drawing its "
    "Randomizer from that seed; logs before 2026-11-25 also wrote seed and reason, and "
    "extender calls write reason)",
    "reserved": "Reserve succeeded and the pod is assumed on the node; node column set; "
    "data: {plugins[], identity?, volumes?[{name, claimRef{namespace, name, uid}} | "
    "{claimRef{namespace, name, uid}, selectedNode}]} (identity: the one a plugin such as "
    "StickyNode gave the pod, used if a restart must reconcile the binding; volumes: "
    "PersistentVolumes VolumeBinding assumed pre-bound to the pod's claims, taken by no other "
    "pod until unreserved or observed again, and claims it assumed to be provisioned on the "
    "node, with the selected-node annotation, until unreserved or observed again)",
    "unreserved": "a reservation was undone; node column set; data: {reason}",
    "permitted": "Permit's verdict; data: {decision: approve|wait|deny|timeout, status? (left "
    "out when Success), waits? (when a plugin said wait)}",
    "prebound": "PreBind succeeded and then the Binding failed (a `bound` says PreBind "
    "succeeded; logs before this also wrote `prebound` before each `bound`); node column set",
    "bound": "the API accepted the Binding; node column set; data: {code, identity?, "
    "reconciled?} (identity: StickyNode's, when it is not namespace/name; reconciled: found "
    "bound by the API when a restart resolved the reservation)",
    "bind_failed": "the Binding (or PreBind) failed; node column set; data: {code, reason, final}",
    "unschedulable": "the attempt found no node; data: {message, plugins[], attempts, "
    "backoffSeconds, nominatedNodeName?} (nominatedNodeName: the PostFilter's nomination, '' "
    "clearing it; the view's nominator folds it)",
    "requeued": "pod moved between queues; data: {from, to, event, backoffUntil?} (from "
    "`gated`, event PodUpdate: its scheduling gates were lifted; logged since 2026-11-28)",
    "shadow_verdict": "`eventsched shadow`'s verdict on what another scheduler (data.scheduler) "
    "did with a pod, ending the shadow attempt that decided the pod first (its attempt_started "
    "carries shadow{scheduler, observed, node?}); node column = that scheduler's node (placed "
    "or nominated); data: {scheduler, observed: placed|unschedulable|nominated, verdict: "
    "agree|tie|differ, picked (eventsched's node, null when none fits), node?, message? (that "
    "scheduler's FailedScheduling message), ourMessage?, ourError? (true: its attempt erred), cause? (one sentence: the Filter "
    "plugin that rejects its node, or the score plugins that separate the two nodes, with the "
    "numbers; for a tie the shared total), totals?{ours, theirs}, preemption? (eventsched's "
    "PostFilter choice, as a `preempted` would hold it; nothing is evicted), victims?[{uid, "
    "namespace, name}] (the pods that scheduler deleted to preempt), lagSeconds (from the "
    "watch's delivery to the verdict)}",
    "maintenance": "an explicit, logged maintenance action; data: {action, ...}: "
    "scheduler_started {instance, view: listed} (the process's view starts empty and is what "
    "it lists; it logs each node, pod and object whose record differs from the log's last "
    "observation of it; older logs' view: empty logged every one), listed {nodes[], pods[], "
    "objects[], placed{uid: node}} (the lists are in: the view is these, in this order, each "
    "as last observed; placed: pods a bound of ours put on that node), "
    "sticky_forget {identity}, pruned {before, cut, throughPosition, "
    "throughBatch, anchorHash, baseDigest, events, batches, partitions[]}",
}

KINDS: frozenset[str] = frozenset(INPUT_KINDS) | frozenset(DECISION_KINDS)


def check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(
            f"unknown event kind {kind!r}; the vocabulary is: {', '.join(sorted(KINDS))}"
        )


#: The `maintenance` action that closes a restarted process's lists.
LISTED = "listed"


def scheduler_started(instance: str) -> dict[str, str]:
    """The `maintenance` data a starting process logs: its view starts empty and is what
    it lists, closed by a `listed` event."""
    return {"action": "scheduler_started", "instance": instance, "view": "listed"}


def is_process_start(kind: str, data: Mapping[str, Any]) -> bool:
    """A scheduler process started here (its plugins began empty)."""
    return kind == "maintenance" and data.get("action") == "scheduler_started"


def starts_empty_view(kind: str, data: Mapping[str, Any]) -> bool:
    """A process start after which the view is only what that process lists (older
    logs' starts carried the view across)."""
    return is_process_start(kind, data) and data.get("view") in ("empty", "listed")


def starts_relist(kind: str, data: Mapping[str, Any]) -> bool:
    """A process start that logs only what changed of what it lists, then `listed`."""
    return is_process_start(kind, data) and data.get("view") == "listed"


def is_listed(kind: str, data: Mapping[str, Any]) -> bool:
    """The event that closes a restarted process's lists."""
    return kind == "maintenance" and data.get("action") == LISTED
