"""The extenders in the scheduling cycle: kube-scheduler v1.28's `findNodesThatPassExtenders`,
the extender part of `prioritizeNodes`, and `extendersBinding`.

Filter: after the Filter plugins, on the feasible nodes only, each interested extender in
the configuration's order narrows them; the nodes it names as failed get a status (its
message, Unschedulable, or UnschedulableAndUnresolvable from FailedAndUnresolvableNodes)
and count in the "0/N nodes are available" message under the extender's name; a node it
drops without naming gets none. An error fails the attempt unless the extender is
ignorable. Prioritize: each interested extender's score times its weight times 10
(MaxNodeScore / MaxExtenderPriority) is one more column of the score table; an error is
ignored. Bind: the first binder extender interested in the pod binds it instead of the
Bind plugins.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import structlog

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.extenders.client import ExtenderError, FilterReply, HTTPExtender
from eventsched.framework.runtime import Framework, Rejection, ScoreTable
from eventsched.framework.status import Status
from eventsched.model import Indexes, NodeTable, Pod

log = structlog.get_logger(__name__)

#: MaxNodeScore / MaxExtenderPriority: an extender's 0..10 on the plugins' 0..100.
EXTENDER_SCALE = 10


def has_extender_filters(fw: Framework) -> bool:
    return any(e.is_filter for e in fw.extenders)


def has_extender_prioritizers(fw: Framework) -> bool:
    return any(e.is_prioritizer for e in fw.extenders)


def pass_extenders(
    fw: Framework,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    feasible: Indexes,
    add: Callable[[Rejection], None],
) -> tuple[Indexes, Status]:
    """The feasible rows the extenders keep, and an Error status when one failed for good.

    `add` receives each extender's rejections (the attempt's diagnosis).
    """
    for extender in fw.extenders:
        if len(feasible) == 0:
            break
        if not extender.is_interested(pod):
            continue
        nodes = [table.node(int(r)) for r in feasible.tolist()]
        try:
            reply = extender.filter(state, fw.handle, pod, nodes)
        except ExtenderError as exc:
            if extender.config.ignorable:
                log.info(
                    "skipping extender as it returned error and has ignorable flag set",
                    extender=extender.name,
                    error=str(exc),
                    pod=pod.key,
                )
                continue
            return feasible[:0], Status.as_error(str(exc))
        rejection = _rejection(extender, table, reply)
        if rejection is not None:
            add(rejection)
        feasible = np.array(
            [r for name in reply.passed if (r := table.row_of(name)) is not None], dtype=np.intp
        )
    return feasible, Status()


def _rejection(extender: HTTPExtender, table: NodeTable, reply: FilterReply) -> Rejection | None:
    """The nodes the extender named, one status per distinct (code, message)."""
    named: dict[int, Status] = {}
    for name, message in reply.failed.items():
        row = table.row_of(name)
        if row is not None and name not in reply.unresolvable:
            named[row] = Status.unschedulable(message, plugin=extender.name)
    for name, message in reply.unresolvable.items():
        row = table.row_of(name)
        if row is not None:
            named[row] = Status.unresolvable(message, plugin=extender.name)
    if not named:
        return None
    statuses: list[Status] = []
    slot_of: dict[tuple[object, tuple[str, ...]], int] = {}
    rows, slots = [], []
    for row, status in sorted(named.items()):
        key = (status.code, status.reasons)
        if key not in slot_of:
            slot_of[key] = len(statuses)
            statuses.append(status)
        rows.append(row)
        slots.append(slot_of[key])
    return Rejection(
        extender.name, np.array(rows, dtype=np.intp), np.array(slots, dtype=np.intp), statuses
    )


def add_extender_scores(
    fw: Framework, state: CycleState, pod: Pod, table: NodeTable, scores: ScoreTable
) -> ScoreTable:
    """The prioritizing extenders' columns added to `scores` (a failed one adds nothing).

    `extender_scored` marks the rows an interested extender named in its answer; an
    interested extender that does not prioritize names every row (upstream's
    `HTTPExtender.Prioritize` answers 0 for each node without asking)."""
    nodes = None
    scored_rows: np.ndarray | None = None
    for extender in fw.extenders:
        if not extender.is_interested(pod):
            continue
        if not extender.is_prioritizer:
            scored_rows = np.ones(len(scores.rows), dtype=bool)
            continue
        if nodes is None:
            nodes = [table.node(int(r)) for r in scores.rows.tolist()]
        try:
            given = extender.prioritize(state, fw.handle, pod, nodes)
        except ExtenderError as exc:
            log.debug(
                "extender's prioritize failed; it gives no score",
                extender=extender.name,
                error=str(exc),
            )
            continue
        raw = np.array([given.get(n.name, 0) for n in nodes], dtype=np.int64)
        named = np.array([n.name in given for n in nodes], dtype=bool)
        scored_rows = named if scored_rows is None else scored_rows | named
        weight = extender.config.weight
        scores = ScoreTable(
            scores.rows,
            [*scores.plugins, extender.name],
            [*scores.weights, weight],
            np.vstack([scores.raw, raw[None, :]]),
            np.vstack([scores.normalized, raw[None, :] * EXTENDER_SCALE]),
            scores.totals + raw * EXTENDER_SCALE * weight,
        )
    if scored_rows is not None:
        scores.extender_scored = scored_rows
    return scores


def binder_extender(fw: Framework, pod: Pod) -> HTTPExtender | None:
    """`extendersBinding`: the first extender that binds and is interested in the pod."""
    return next((e for e in fw.extenders if e.is_binder and e.is_interested(pod)), None)


def bind_with_extender(extender: HTTPExtender, pod: Pod, node: str) -> Status:
    try:
        extender.bind(pod, node)
    except ExtenderError as exc:
        return Status.as_error(str(exc), extender.name)
    return Status()
