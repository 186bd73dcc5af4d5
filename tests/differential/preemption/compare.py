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
then for the scenario: `final`, each pending pod's node and nominatedNodeName at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eventsched.model.preemptionwrites import PREEMPTION_BY_SCHEDULER, disruption_message

SCHEDULER_NAME = "default-scheduler"


@dataclass(frozen=True)
class Problem:
    check: str
    detail: str

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}"


def compare(recorded: Mapping[str, Any], ours: Mapping[str, Any]) -> list[Problem]:
    kube_answers = list(recorded["answer"])
    our_answers = list(ours["answer"])
    if len(kube_answers) != len(our_answers):
        return [Problem("pods", f"{len(kube_answers)} pending pods != {len(our_answers)}")]
    problems: list[Problem] = []
    for kube, mine in zip(kube_answers, our_answers, strict=True):
        problems += _pod(kube, mine)
    kube_final, our_final = recorded["final"], ours["final"]
    for key in kube_final:
        for field in ("exists", "node", "nominatedNodeName"):
            theirs, got = kube_final[key].get(field), (our_final.get(key) or {}).get(field)
            if theirs != got:
                problems.append(
                    Problem("final", f"{key} {field}: kube {theirs!r}, eventsched {got!r}")
                )
    return problems


def _pod(kube: Mapping[str, Any], mine: Mapping[str, Any]) -> list[Problem]:
    pod = kube["pod"]
    if mine.get("error"):
        return [Problem("error", f"{pod}: {mine['error']}")]
    out: list[Problem] = []

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
