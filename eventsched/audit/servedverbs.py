"""Replaying the calls `eventsched extender` answered: filter, prioritize and preempt are
decided again over the candidates the call named; bind is kube-scheduler's choice, not ours.

An extender attempt has no `selected` or `unschedulable` to compare: its outcome is the
decision it answered with (`filtered` for filter, `scored` for prioritize,
`preempt_answered` for preempt), compared as the log stores it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from eventsched.framework import CycleState, Framework
from eventsched.framework.servedpreempt import PREEMPT_ANSWERED, serve_preempt
from eventsched.framework.servedpreempt import candidates_from_record as victims_from_record
from eventsched.framework.servedverbs import (
    ServeError,
    candidates_from_record,
    serve_filter,
    serve_prioritize,
)
from eventsched.model import NodeTable, Pod

#: Why a bind call is not decided again.
BIND_SKIPPED = "an extender bind call: kube-scheduler chose the node"
#: The decision each verb answers with.
ANSWERED_BY = {"filter": "filtered", "prioritize": "scored", "preempt": PREEMPT_ANSWERED}
#: The verbs replay decides again.
DECIDED_AGAIN = tuple(ANSWERED_BY)


def extender_call(started_data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The `extender` part of an `attempt_started`: None for eventsched's own attempts."""
    call = started_data.get("extender")
    return call if isinstance(call, Mapping) else None


def serve_again(
    fw: Framework, state: CycleState, pod: Pod, table: NodeTable, call: Mapping[str, Any]
) -> None:
    """Run the call's decision again on `table`; it records into `state` as it did live."""
    if call.get("verb") == "preempt":
        serve_preempt(fw, state, pod, table, victims_from_record(call))
        return
    names = candidates_from_record(table, call)
    if call.get("verb") == "filter":
        serve_filter(fw, state, pod, table, names)
    else:
        with contextlib.suppress(ServeError):  # recorded nothing live either
            serve_prioritize(fw, state, pod, table, names)


def served_outcome(verb: str, decisions: Iterable[tuple[str, Mapping[str, Any]]]) -> str:
    """`(extender filter: <digest>)`: the digest of the answering decision's data."""
    wanted = ANSWERED_BY.get(verb, "")
    for kind, data in decisions:
        if kind == wanted:
            text = json.dumps(data, default=str, sort_keys=True)
            digest = hashlib.sha256(text.encode()).hexdigest()[:12]
            return f"(extender {verb}: {wanted} {digest})"
    return f"(extender {verb}: no {wanted or 'decision'} recorded)"
