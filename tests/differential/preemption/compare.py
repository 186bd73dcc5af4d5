"""Comparing eventsched's run of a preemption scenario with kube-scheduler's recording.

Per pending pod, in order (each check names the pod):
- message: the first attempt's FailedScheduling message, identical (None for both when
  the first attempt bound the pod); eventsched's `unschedulable` event says the same;
- nominated: the node preemption nominated (kube-scheduler: status.nominatedNodeName
  written with the first failure; eventsched: the `preempted` event's nominatedNodeName);
- victims: the same pods (kube-scheduler: the pods whose Preempted Event names the
  preemptor as related; eventsched: the `preempted` event's victims);
- events: each victim's Preempted Event (type, action, message) identical;
- strings: the DisruptionTarget condition kube-scheduler wrote on each victim is
  eventsched's (model/preemptionwrites.py) for the same scheduler name;
a pod created with scheduling gates is compared as held (`_gated`) and, once its gates are
lifted, as any other pending pod (one more answer, `ungated`);
then for the scenario: `final`, each pending pod's node and nominatedNodeName at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eventsched.model.preemptionwrites import PREEMPTION_BY_SCHEDULER, disruption_message

SCHEDULER_NAME = "default-scheduler"
GATES_PLUGIN = "SchedulingGates"
#: The PodScheduled condition the API server gives a pod created with scheduling gates
#: (pkg/registry/core/pod/strategy.go, `applySchedulingGatedCondition`).
GATED_REASON = "SchedulingGated"
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


@dataclass(frozen=True)
class Problem:
    check: str
    detail: str

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}"


def compare(
    recorded: Mapping[str, Any], ours: Mapping[str, Any], ties: list[str] | None = None
) -> list[Problem]:
    """The differences; a pick among nodes tied for kube-scheduler's top total (random in
    both schedulers) ends the comparison there, said in `ties`: what follows depends on it."""
    kube_answers = list(recorded["answer"])
    our_answers = list(ours["answer"])
    if len(kube_answers) != len(our_answers):
        return [Problem("pods", f"{len(kube_answers)} pending pods != {len(our_answers)}")]
    problems: list[Problem] = []
    for kube, mine in zip(kube_answers, our_answers, strict=True):
        tie = _tie(kube["pod"], kube.get("node"), mine.get("node"), kube.get("total"))
        if tie:
            (ties if ties is not None else []).append(tie)
            return problems
        problems += _pod(kube, mine)
    kube_final, our_final = recorded["final"], ours["final"]
    for key, theirs in kube_final.items():
        got = (our_final.get(key) or {}).get("node")
        tie = _tie(key, theirs.get("node"), got, theirs.get("total"))
        if tie:
            (ties if ties is not None else []).append(tie)
            return problems
    for key in kube_final:
        for field in ("exists", "node", "nominatedNodeName"):
            theirs, got = kube_final[key].get(field), (our_final.get(key) or {}).get(field)
            if theirs != got:
                problems.append(
                    Problem("final", f"{key} {field}: kube {theirs!r}, eventsched {got!r}")
                )
    return problems


def _tie(pod: str, theirs: Any, got: Any, total: Mapping[str, int] | None) -> str:
    """Both nodes share kube-scheduler's top total for the pod's placing attempt."""
    if theirs == got or not theirs or not got or not total:
        return ""
    top = max(total.values())
    if total.get(theirs) == top and total.get(got) == top:
        return f"{pod}: kube {theirs}, eventsched {got}, tied at {top}"
    return ""


def _pod(kube: Mapping[str, Any], mine: Mapping[str, Any]) -> list[Problem]:
    pod = kube["pod"]
    if mine.get("error"):
        return [Problem("error", f"{pod}: {mine['error']}")]
    if "gated" in kube:
        return _gated(kube, mine)
    out: list[Problem] = []
    if kube.get("ungated") != mine.get("ungated"):
        out.append(
            Problem("ungated", f"{pod}: kube {kube.get('ungated')!r}, ours {mine.get('ungated')!r}")
        )

    def differ(check: str, theirs: Any, got: Any) -> None:
        if theirs != got:
            out.append(Problem(check, f"{pod}: kube {theirs!r}, eventsched {got!r}"))

    differ("message", kube["message"], mine["message"])
    if mine["unschedulableMessage"] is not None and mine["unschedulableMessage"] != mine["message"]:
        out.append(
            Problem(
                "message",
                f"{pod}: eventsched's unschedulable {mine['unschedulableMessage']!r} "
                f"!= its FailedScheduling {mine['message']!r}",
            )
        )
    differ("nominated", kube["nominatedNodeName"], mine["nominatedNodeName"])
    differ("victims", kube["victims"], mine["victims"])
    differ("events", _events(kube["preemptedEvents"]), _events(mine["preemptedEvents"]))
    for victim, target in (kube.get("disruptionTargets") or {}).items():
        want = {
            "status": "True",
            "reason": PREEMPTION_BY_SCHEDULER,
            "message": disruption_message(SCHEDULER_NAME),
        }
        if target != want:
            out.append(
                Problem("strings", f"{victim}: kube's DisruptionTarget {target}, ours {want}")
            )
    return out


def _events(events: list[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((e["pod"], e.get("type"), e.get("action"), e.get("message")) for e in events)


def _gated(kube: Mapping[str, Any], mine: Mapping[str, Any]) -> list[Problem]:
    """A pod created with scheduling gates, before they were lifted: held by kube-scheduler's
    SchedulingGates PreEnqueue (its log) and in eventsched's gated pool; attempted by
    neither; the API server's condition is the one eventsched's docs name."""
    pod = kube["pod"]
    out: list[Problem] = []
    held = kube["gated"]
    if "gated" not in mine:
        return [Problem("gated", f"{pod}: kube held it ({held['plugin']}), eventsched did not")]
    if (held["plugin"] == GATES_PLUGIN) != bool(mine["gated"]):
        out.append(
            Problem("gated", f"{pod}: kube {held['plugin']!r}, eventsched {mine['gated']!r}")
        )
    for field in ("attempted", "nominatedNodeName"):
        if kube.get(field) != mine.get(field):
            out.append(
                Problem(field, f"{pod}: kube {kube.get(field)!r}, eventsched {mine.get(field)!r}")
            )
    if (held["reason"], held["message"]) != (GATED_REASON, GATED_MESSAGE):
        out.append(Problem("strings", f"{pod}: kube's PodScheduled condition {held}"))
    return out
