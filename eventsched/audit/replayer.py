"""The Replayer: folds the log into the scheduler's view and decides each attempt again.

It is what replay (replay.py) and counterfactual replay (counterfactual.py)
share: the fold, the recorded profiles' frameworks, one attempt's
scheduling cycle run again, and the comparison of its outcome and
decisions with the recorded ones (`Mismatch`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from eventsched.audit.servedverbs import (
    BIND_SKIPPED,
    DECIDED_AGAIN,
    extender_call,
    serve_again,
    served_outcome,
)
from eventsched.events.canonical import canonical_json, normalize
from eventsched.events.projections import Projections
from eventsched.events.record import StoredEvent
from eventsched.events.vocabulary import is_process_start
from eventsched.framework import (
    CycleState,
    Decision,
    FitError,
    Framework,
    Handle,
    ListSink,
    Registry,
    SchedulingError,
    in_columns,
    run_post_filter,
    schedule_pod,
    score_cells,
)
from eventsched.framework.prefilterrecord import skipped_at_prefilter
from eventsched.model import Pod
from eventsched.view import ClusterView

#: More nodes than any cluster has: the recomputed `scored` keeps them all.
FULL = 1 << 30
#: Decision kinds of the scheduling cycle that replay recomputes and compares, in order.
COMPARED = ("prefiltered", "filtered", "post_filtered", "preempted", "scored", "selected")


@dataclass(slots=True)
class Mismatch:
    """One attempt whose decision did not reproduce."""

    attempt: str
    position: int
    pod: str
    recorded: str
    replayed: str
    #: The first recomputed decision that differs, and within it the first plugin.
    kind: str = ""
    plugin: str = ""
    detail: str = ""


class Replayer:
    """Folds the log into the scheduler's view and re-runs each attempt's scheduling cycle.

    The view is `ClusterView`, folded by the very code the live scheduler
    changes its own view with; replay adds the projections (first
    placements for StickyNode) and the frameworks of the recorded profiles.
    """

    def __init__(
        self,
        registry: Registry,
        view: ClusterView | None = None,
        projections: Projections | None = None,
    ) -> None:
        self.registry = registry
        self.view = view or ClusterView()
        self.projections = projections or Projections()
        self.handle = Handle(self.view.table)
        self.handle.replay_inputs = self.view.inputs
        self.handle.first_placement = lambda identity: self.projections.first_node(identity)
        self._frameworks: dict[str, Framework] = {}
        #: Keep every node's per-plugin scores in the recomputed `scored` (explain --full).
        self.full_scores = False
        #: The recomputed decisions of the last attempt replayed.
        self.last_decisions: list[Decision] = []
        #: Events folded so far.
        self.folded = 0

    @property
    def pods(self) -> dict[str, Pod]:
        return self.view.pods

    # -- folding ------------------------------------------------------------------

    def fold(self, event: StoredEvent) -> None:
        """Apply one event to the view and the projections."""
        self.view.apply(event)
        self.projections.apply(event)
        self.folded += 1
        if is_process_start(event.kind, event.data):
            # A scheduler process started: its plugins began empty.
            self._frameworks.clear()

    # -- deciding again -----------------------------------------------------------

    def framework(self, digest: str) -> Framework | None:
        fw = self._frameworks.get(digest)
        if fw is None and digest in self.view.profiles:
            profile = self.view.profiles[digest]
            if self.full_scores:
                profile = replace(profile, score_breakdown_top_k=FULL)
            fw = self._frameworks[digest] = Framework(profile, self.registry, self.handle)
        return fw

    def decide_again(
        self, fw: Framework, pod: Pod, events: list[StoredEvent]
    ) -> tuple[str | None, str]:
        """Run the scheduling cycle of one attempt again: (node or None, outcome as text).

        Inputs recorded during the attempt feed its own decisions (a plugin
        fetches in PreScore and reads the value in Score). The recomputed
        decisions are kept in `last_decisions`.
        """
        started = events[0]
        for event in events:
            if event.kind == "input_recorded":
                self.view.apply(event)
        sink = ListSink()
        state = CycleState(started.attempt or "", int(started.data.get("seed", 0)), sink)
        start = int(started.data.get("startIndex", 0))
        call = extender_call(started.data)
        if call is not None:
            serve_again(fw, state, pod, self.view.table, call)
            self.last_decisions = sink.decisions
            decided = [(d.kind, _normal(d.data)) for d in sink.decisions]
            return None, served_outcome(str(call.get("verb")), decided)
        try:
            node = schedule_pod(fw, state, pod, self.view.table, start).node
            return node, node
        except FitError as err:
            result = run_post_filter(fw, state, pod, self.view.table, err.diagnosis)
            return None, _unschedulable_outcome(result.record if result is not None else None)
        except SchedulingError as err:
            return None, f"(error: {err.status.message})"
        finally:
            self.last_decisions = sink.decisions

    def replay_attempt(self, events: list[StoredEvent]) -> tuple[Mismatch | None, str]:
        """Re-run one attempt (its scheduling-cycle events, `attempt_started` first).

        Returns the mismatch (None when reproduced) or a reason it could not run.
        """
        started = events[0]
        data = started.data
        self.last_decisions = []
        pod = self.pods.get(started.uid or "")
        if pod is None:
            return None, "the pod was never observed before its attempt"
        fw = self.framework(str(data.get("configDigest", "")))
        if fw is None:
            return None, f"no config_loaded for configuration {data.get('configDigest')!r}"
        call = extender_call(data)
        if call is not None and call.get("verb") not in DECIDED_AGAIN:
            return None, BIND_SKIPPED
        _, replayed = self.decide_again(fw, pod, events)
        if call is None:
            recorded = _recorded_outcome(events)
        else:
            decided = [(e.kind, _normal(_current_shape(e.kind, e.data))) for e in events]
            recorded = served_outcome(str(call.get("verb")), decided)
        if recorded == replayed:
            return None, ""
        mismatch = Mismatch(
            attempt=started.attempt or "",
            position=started.position,
            pod=started.pod_key or pod.key,
            recorded=recorded,
            replayed=replayed,
        )
        _first_difference(mismatch, events, self.last_decisions, fw.plugins_at("preFilter"))
        return mismatch, ""


def _recorded_outcome(events: Iterable[StoredEvent]) -> str:
    preempted: Mapping[str, Any] | None = None
    for event in events:
        if event.kind == "selected" and event.node:
            return event.node
        if event.kind == "preempted":
            preempted = event.data
        if event.kind == "unschedulable":
            if event.data.get("code") == "Error":
                return f"(error: {event.data.get('message', '')})"
            return _unschedulable_outcome(preempted)
        if event.kind == "shadow_verdict":
            # A shadow attempt: eventsched's outcome is in its verdict (nothing was
            # reserved; its PostFilter's choice was a dry run, recorded there).
            if event.data.get("ourError"):
                return f"(error: {event.data.get('ourMessage', '')})"
            return _unschedulable_outcome(event.data.get("preemption"))
    return "(no outcome recorded)"


def _unschedulable_outcome(preempted: Mapping[str, Any] | None) -> str:
    """ "(unschedulable)", naming the preemption's node and victims when there was one."""
    if not preempted:
        return "(unschedulable)"
    victims = ", ".join(f"{v.get('namespace')}/{v.get('name')}" for v in preempted["victims"])
    return f"(unschedulable; preempting on {preempted['nominatedNodeName']}: {victims})"


def _current_shape(kind: str, data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A recorded decision as this version writes it, from a log an older version wrote.

    Older logs kept `scored` per (node, plugin) cell, `selected` with the
    tied nodes again and with the attempt's seed and a reason that follows from
    its score and tie count, and `prefiltered` with a null nodeNames and a
    Success status spelled out.
    """
    if kind == "scored":
        return in_columns(data)
    if kind == "selected":
        return {k: v for k, v in data.items() if k not in ("ties", "seed", "reason")}
    if kind == "prefiltered":
        out = dict(data)
        if out.get("nodeNames", 0) is None:
            del out["nodeNames"]
        if out.get("status") == {"code": "Success", "reasons": []}:
            del out["status"]
        return out
    return data


def _normal(value: Any) -> Any:
    """As the log stores it, so recorded and recomputed data compare equal: `normalize`,
    which every append applies (an integral float such as a mean of 495.0 is read back as
    the int 495; `json.dumps` would spell the two differently)."""
    return normalize(value)


def _first_difference(
    mismatch: Mismatch,
    recorded: list[StoredEvent],
    replayed: list[Decision],
    prefilter: Sequence[str],
) -> None:
    before = {e.kind: e for e in recorded if e.kind in COMPARED}
    after = {d.kind: d for d in replayed if d.kind in COMPARED}
    for kind in COMPARED:
        old, new = before.get(kind), after.get(kind)
        old_data = _comparable(kind, _current_shape(kind, old.data), prefilter) if old else None
        new_data = _comparable(kind, new.data, prefilter) if new is not None else None
        # As the outcome of an extender call is compared: by the JSON text (`True == 1`
        # in Python, not in JSON).
        if canonical_json(old_data) == canonical_json(new_data):
            continue
        mismatch.kind = kind
        mismatch.plugin, mismatch.detail = _plugin_difference(kind, old_data, new_data)
        return
    mismatch.detail = "every recomputed decision is the recorded one; only the outcome differs"


def _comparable(kind: str, data: Mapping[str, Any], prefilter: Sequence[str]) -> Any:
    """As the log stores it, `prefiltered` naming its skipped plugins however it was
    written, `filtered` without the node count that older logs repeated."""
    if kind == "prefiltered":
        skipped = skipped_at_prefilter(data, prefilter)
        data = {k: v for k, v in data.items() if k != "notSkipped"} | {"skipped": skipped}
    elif kind == "filtered":
        # attempt_started's `nodes`; logs before 2026-11-25 wrote it here too.
        data = {k: v for k, v in data.items() if k != "numAllNodes"}
    return _normal(data)


def _plugin_difference(kind: str, old: Any, new: Any) -> tuple[str, str]:
    if kind == "filtered" and old is not None and new is not None:
        rejected_old = {(r["plugin"], n) for r in old.get("rejections", []) for n in r["nodes"]}
        rejected_new = {(r["plugin"], n) for r in new.get("rejections", []) for n in r["nodes"]}
        for plugin, node in sorted(rejected_old ^ rejected_new):
            side = "recorded" if (plugin, node) in rejected_old else "replayed"
            return plugin, f"node {node} rejected only in the {side} attempt"
    if kind == "scored" and old is not None and new is not None:
        cells_old, cells_new = score_cells(old), score_cells(new)
        for key in sorted(set(cells_old) | set(cells_new)):
            was, now = cells_old.get(key), cells_new.get(key)
            if was != now:
                plugin, node = key
                return (
                    plugin,
                    f"node {node}: recorded {was.raw if was else None} raw, "
                    f"replayed {now.raw if now else None}",
                )
    return "", _field_difference(old, new)


def _field_difference(old: Any, new: Any, path: str = "") -> str:
    """The first field that differs, by its path: `summary.mean: recorded 495, replayed 496`."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            if key not in old or key not in new:
                side = "recorded" if key in old else "replayed"
                value = old[key] if key in old else new[key]
                return f"{path}{key}: only in the {side} decision ({_short(value)})"
            if canonical_json(old[key]) != canonical_json(new[key]):
                return _field_difference(old[key], new[key], f"{path}{key}.")
    elif isinstance(old, list) and isinstance(new, list):
        for i, (was, now) in enumerate(zip(old, new, strict=False)):
            if canonical_json(was) != canonical_json(now):
                return _field_difference(was, now, f"{path.rstrip('.')}[{i}].")
        if len(old) != len(new):
            return f"{path.rstrip('.')}: recorded {len(old)} items, replayed {len(new)}"
    where = path.rstrip(".") or "the decision"
    return f"{where}: recorded {_short(old)}, replayed {_short(new)}"


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 200 else text[:197] + "..."


def walk(
    events: Iterable[StoredEvent],
    fold: Callable[[StoredEvent], None],
    progress: Callable[[int], None] | None = None,
) -> Iterator[list[StoredEvent]]:
    """Each attempt's scheduling-cycle events, yielded before `fold` is given them; every
    event given to `fold` in order, and its position to `progress` after each group."""
    for what, group in attempts_and_folds(events):
        if what == "attempt":
            yield group
        for event in group:
            fold(event)
        if progress is not None:
            progress(group[-1].position)


def attempts_and_folds(events: Iterable[StoredEvent]) -> Iterator[tuple[str, list[StoredEvent]]]:
    """("fold", [event]) for ordinary events, ("attempt", events) for a scheduling cycle.

    A scheduling cycle's events are contiguous in the log (one cycle at a
    time, appended in order): `attempt_started` and what follows with the
    same attempt id until another event comes. The binding cycle's events
    come later and are folded as ordinary events.
    """
    current: list[StoredEvent] = []
    for event in events:
        if current and event.attempt == current[0].attempt:
            current.append(event)
            continue
        if current:
            yield "attempt", current
            current = []
        if event.kind == "attempt_started" and event.attempt:
            current = [event]
        else:
            yield "fold", [event]
    if current:
        yield "attempt", current
