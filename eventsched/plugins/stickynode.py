"""StickyNode (PreFilter + Filter + PostFilter + PreScore + Score): back to the first node.

A pod whose identity was bound before returns to the node of that first
placement. The first placement is not kept here: it is a projection of the
event log (`bound` events carry the identity this plugin writes to CycleState
under IDENTITY_KEY; a `maintenance` `sticky_forget` event removes one), read
through `handle.first_placement`. So it survives restarts and leader changes,
and `eventsched sticky forget` can clear it with an event of its own.

- identity: which pods count as "the same pod" across re-creations:
  `name` (namespace/name), `label:KEY`, `annotation:KEY` (namespace-scoped
  value), or `ownerOrdinal` (the StatefulSet and the pod's ordinal). A pod
  that lacks what the identity asks for falls back to namespace/name, and the
  fallback is recorded (`input_recorded`, key `identity`) and reported as a
  Warning event on the pod, so a missing label is visible rather than silent.
- policy `strict`: PreFilter narrows the candidates to the first node
  (PreFilterResult, as upstream NodeName does), Filter rejects every other
  node for callers that do not honour the result; if the node is gone the
  pod waits, with a message naming it; if it is full, PostFilter appends a
  sentence naming it to the "0/N nodes are available" message.
- policy `preferred`: Score gives 100 to the first node and 0 elsewhere, so
  it wins when it fits and the pod goes elsewhere when it does not.
- onNodeDeleted `reassign`: a first node that is no longer in the cluster is
  forgotten (a `maintenance` event) and the pod is scheduled normally; its
  next `bound` records the new first placement. `wait` keeps the old one.

There is no PostBind: the `bound` event the binding cycle writes already is
the record of the placement, so there is nothing left to write.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.framework import (
    IDENTITY_KEY,
    LEGACY_FEATURES,
    MAX_NODE_SCORE,
    NODE_ADD,
    NODE_DELETE,
    SKIP,
    BatchFilterResult,
    ClusterEvent,
    Code,
    CycleState,
    Features,
    Handle,
    PluginArgsError,
    PostFilterResult,
    PreFilterResult,
    Status,
    check_args,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod

NAME = "StickyNode"
KNOWN_ARGS = ("identity", "policy", "onNodeDeleted")
POLICIES = ("strict", "preferred")
ON_NODE_DELETED = ("wait", "reassign")
IDENTITY_KINDS = ("name", "label:KEY", "annotation:KEY", "ownerOrdinal")
DEFAULTS: Mapping[str, str] = {"identity": "name", "policy": "strict", "onNodeDeleted": "wait"}

#: Filter's reason on every node but the first placement (upstream NodeName's form).
ERR_REASON = "node(s) didn't match the pod's first placement on {node}"
#: PreFilter's reason when the first node is not in the cluster (strict, onNodeDeleted wait).
ERR_NODE_GONE = "node(s) didn't match the pod's first placement on {node} (node not found)"
#: PostFilter's sentence when the first node is there but did not fit (strict).
MSG_WAITING = "pod waits for its first placement on {node} (StickyNode policy strict)"

_STATE_KEY = "PreFilterStickyNode"
#: A label / annotation key: optional DNS prefix, then a name; no spaces or '='.
_KEY = re.compile(r"^([A-Za-z0-9.-]+/)?[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
#: StatefulSet pods are named <set>-<ordinal>.
_ORDINAL = re.compile(r"^(0|[1-9][0-9]*)$")


@dataclass(frozen=True, slots=True)
class Identity:
    """How a pod's identity is computed, parsed once from args."""

    kind: str  # name | label | annotation | ownerOrdinal
    key: str = ""

    def of(self, pod: Pod) -> tuple[str, str | None]:
        """(identity, why it fell back to namespace/name or None)."""
        if self.kind == "name":
            return pod.key, None
        if self.kind in ("label", "annotation"):
            values = pod.labels if self.kind == "label" else pod.annotations
            value = values.get(self.key, "")
            if not value:
                return pod.key, f"pod has no {self.kind} {self.key}"
            return f"{pod.namespace}/{self.kind}:{self.key}={value}", None
        owner = pod.owner
        if owner is None or owner.kind != "StatefulSet" or not owner.name:
            return pod.key, "pod is not controlled by a StatefulSet"
        prefix = owner.name + "-"
        ordinal = pod.name[len(prefix) :] if pod.name.startswith(prefix) else ""
        if not _ORDINAL.match(ordinal):
            return pod.key, f"pod name {pod.name} has no ordinal after {prefix}"
        return f"{pod.namespace}/{owner.kind}/{owner.name}/{ordinal}", None


@dataclass(frozen=True, slots=True)
class Decision:
    """What this cycle does for the pod, computed once (PreFilter) and shared by later points."""

    identity: str
    #: The first placement's node, when it is in the cluster.
    node: str | None
    #: The first placement's node, when it is not in the cluster and onNodeDeleted is wait.
    missing: str | None = None


class StickyNode:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args, KNOWN_ARGS)
        self.handle = handle
        self.identity = _parse_identity(args.get("identity", DEFAULTS["identity"]))
        self.policy = _choice(args, "policy", POLICIES)
        self.on_node_deleted = _choice(args, "onNodeDeleted", ON_NODE_DELETED)

    def events_to_register(self) -> Sequence[ClusterEvent]:
        """A waiting pod's node may come back (Add); with reassign, its deletion frees the pod."""
        return (NODE_ADD, NODE_DELETE)

    def annotations_read(self) -> tuple[str, ...]:
        return (self.identity.key,) if self.identity.kind == "annotation" else ()

    # -- the decision, once per cycle ---------------------------------------------

    def _decide(self, state: CycleState, pod: Pod, table: NodeTable) -> Decision:
        decision: Decision | None = state.get(_STATE_KEY)
        if decision is not None:
            return decision
        identity, fallback = self.identity.of(pod)
        state.write(IDENTITY_KEY, identity)
        if fallback is not None:
            self._report_fallback(state, pod, identity, fallback)
        node = self.handle.first_placement(identity)
        decision = Decision(identity, None)
        if node and table.row_of(node) is not None:
            decision = Decision(identity, node)
        elif node and self.on_node_deleted == "reassign":
            # The node is gone: the old placement no longer means anything. The
            # forget is in the log before the `bound` that records the new one.
            state.record(
                "maintenance",
                {
                    "action": "sticky_forget",
                    "identity": identity,
                    "reason": f"node {node} deleted",
                },
                node=node,
                plugin=self.name,
            )
        elif node:
            decision = Decision(identity, None, missing=node)
        state.write(_STATE_KEY, decision)
        return decision

    def _report_fallback(self, state: CycleState, pod: Pod, identity: str, why: str) -> None:
        kind = self.identity.kind
        wanted = f"{kind}:{self.identity.key}" if self.identity.key else kind
        state.record_input(
            self.name,
            "identity",
            {"identity": identity, "wanted": wanted, "fallback": why},
        )
        self.handle.emit_event(
            pod,
            "Warning",
            "StickyIdentityFallback",
            "Scheduling",
            f"StickyNode identity {wanted}: {why}; using {identity}",
        )

    # -- PreFilter / Filter / PostFilter (strict) ---------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        decision = self._decide(state, pod, table)
        if self.policy != "strict":
            return None, SKIP
        if decision.missing is not None:
            return None, Status.unresolvable(ERR_NODE_GONE.format(node=decision.missing))
        if decision.node is None:
            return None, SKIP
        return PreFilterResult(frozenset((decision.node,))), None

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        decision = self._decide(state, pod, table)
        node = decision.node or decision.missing
        if self.policy != "strict" or node is None:
            return BatchFilterResult.passing(len(rows))
        wanted = table.row_of(node)
        passed = rows == wanted if wanted is not None else np.zeros(len(rows), dtype=bool)
        return BatchFilterResult.from_mask(
            passed, Status.unresolvable(ERR_REASON.format(node=node))
        )

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Name the first node when it was the only candidate and did not fit.

        Returns Unschedulable (never Success): StickyNode cannot make room, so
        later PostFilter plugins (preemption) still run.
        """
        decision: Decision | None = state.get(_STATE_KEY)
        if (
            self.policy != "strict"
            or decision is None
            or decision.node is None
            or decision.node not in statuses
        ):
            return None, Status(Code.UNSCHEDULABLE)
        return None, Status.unschedulable(MSG_WAITING.format(node=decision.node))

    # -- PreScore / Score (preferred) ------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> Status | None:
        decision = self._decide(state, pod, table)
        if self.policy != "preferred" or decision.node is None:
            return SKIP
        return None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        decision = self._decide(state, pod, table)
        scores = np.zeros(len(rows), dtype=np.int64)
        if self.policy != "preferred" or decision.node is None:
            return scores
        wanted = table.row_of(decision.node)
        if wanted is not None:
            scores[rows == wanted] = MAX_NODE_SCORE
        return scores


def _quote(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _choice(args: Mapping[str, Any], field: str, allowed: tuple[str, ...]) -> str:
    value = args.get(field, DEFAULTS[field])
    if value not in allowed:
        raise PluginArgsError(field, f"must be {' or '.join(allowed)} (got {_quote(value)})")
    return str(value)


def _parse_identity(value: object) -> Identity:
    problem = (
        f"must be {', '.join(IDENTITY_KINDS[:-1])} or {IDENTITY_KINDS[-1]} (got {_quote(value)})"
    )
    if not isinstance(value, str):
        raise PluginArgsError("identity", problem)
    if value in ("name", "ownerOrdinal"):
        return Identity(value)
    kind, sep, key = value.partition(":")
    if not sep or kind not in ("label", "annotation"):
        raise PluginArgsError("identity", problem)
    if not _KEY.match(key):
        raise PluginArgsError(
            "identity",
            f"{kind}:KEY needs a valid {kind} key, e.g. {kind}:app.kubernetes.io/instance "
            f"(got {_quote(value)})",
        )
    return Identity(kind, key)
