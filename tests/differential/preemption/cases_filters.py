"""Preemption scenarios about when preemption is tried and what its message says
(PodEligibleToPreemptOthers, nodesWherePreemptionMightHelp, the dry run's statuses), the
filters a victim's removal resolves (host ports, pod anti-affinity), and pending pods
scheduled one after another (a nomination cleared by a higher-priority preemptor)."""

from __future__ import annotations

from typing import Any

from tests.differential.builders import ZONE, taint
from tests.differential.preemption.builder import (
    Case,
    affinity,
    anti_affinity,
    host_port,
)

WEB = {"app": "web"}


def cases() -> list[dict[str, Any]]:
    return [c.build() for c in _messages() + _filters() + _sequences()]


def _messages() -> list[Case]:
    return [
        Case(
            "preemption-policy-never",
            "a preemptor whose class says preemptionPolicy Never is not eligible",
        )
        .node("node-0", cpu="2")
        .run("low", "node-0", 1, "2")
        .pend("high", 10, "2", never=True),
        Case(
            "no-lower-priority-pods",
            "every pod in the way has the preemptor's priority: no victims anywhere",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("peer-0", "node-0", 10, "2")
        .run("peer-1", "node-1", 10, "2")
        .pend("high", 10, "2"),
        Case(
            "higher-priority-pods-never-victims",
            "only higher-priority pods in the way: no victims",
        )
        .node("node-0", cpu="2")
        .run("boss", "node-0", 20, "2")
        .pend("high", 10, "2"),
        Case(
            "equal-priority-never-victims",
            "node-0's pod has the preemptor's priority, node-1's a lower one: node-1",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("peer", "node-0", 10, "1")
        .run("low", "node-1", 9, "2")
        .pend("high", 10, "2"),
        Case(
            "removing-every-lower-pod-not-enough",
            "nodes too small even empty: the dry run's status is the filter's own reason",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("low-0", "node-0", 1, "1")
        .run("low-1", "node-1", 1, "1")
        .pend("high", 10, "3"),
        Case(
            "taint-unresolvable",
            "node-0's untolerated taint is unresolvable; node-1 is full of equal pods",
        )
        .node("node-0", cpu="2", taints=[taint("dedicated", "NoSchedule", "gpu")])
        .node("node-1", cpu="2")
        .run("low", "node-0", 1, "2")
        .run("peer", "node-1", 10, "2")
        .pend("high", 10, "2"),
        Case(
            "taint-unresolvable-preempts-elsewhere",
            "node-0 (lowest victim) is tainted: the victim is taken on node-1",
        )
        .node("node-0", cpu="2", taints=[taint("dedicated", "NoSchedule", "gpu")])
        .node("node-1", cpu="2")
        .run("lowest", "node-0", 1, "2")
        .run("low", "node-1", 5, "2")
        .pend("high", 10, "2"),
        Case(
            "node-selector-unresolvable",
            "the pod selects zone-a; zone-b's lower pod is out of reach, zone-a's is taken",
        )
        .node("node-0", cpu="2", zone="zone-a")
        .node("node-1", cpu="2", zone="zone-b")
        .run("a-low", "node-0", 5, "2")
        .run("b-lowest", "node-1", 1, "2")
        .pend("high", 10, "2", nodeSelector={ZONE: "zone-a"}),
        Case(
            "node-unschedulable-unresolvable",
            "a cordoned node is not helped by preemption; the other has only a higher pod",
        )
        .node("node-0", cpu="2", unschedulable=True)
        .node("node-1", cpu="2")
        .run("low", "node-0", 1, "2")
        .run("boss", "node-1", 20, "2")
        .pend("high", 10, "2"),
        Case(
            "node-affinity-match-fields-one-node",
            "matchFields metadata.name picks node-1: other nodes unresolvable",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .node("node-2", cpu="2")
        .run("v0", "node-0", 1, "2")
        .run("v1", "node-1", 5, "2")
        .run("v2", "node-2", 1, "2")
        .pend(
            "high",
            10,
            "2",
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {
                                        "key": "metadata.name",
                                        "operator": "In",
                                        "values": ["node-1"],
                                    }
                                ]
                            }
                        ]
                    }
                }
            },
        ),
        Case(
            "node-affinity-terms-conflict",
            "two required terms, each ANDing metadata.name In node-0 with In node-1 (the API"
            " allows one value per field requirement): NodeAffinity's PreFilter rejects the pod",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("v0", "node-0", 1, "2")
        .pend(
            "high",
            10,
            "2",
            affinity=_names_terms([["node-0"], ["node-1"]], [["node-1"], ["node-0"]]),
        ),
        Case(
            "pod-affinity-unresolvable",
            "required pod affinity to labels no pod has (the pod fits otherwise): unresolvable",
        )
        .node("node-0", cpu="4")
        .run("low", "node-0", 1, "2")
        .pend("high", 10, "1", affinity=affinity({"app": "missing"})),
        Case(
            "dry-run-status-from-a-later-filter",
            "Insufficient cpu first; with the lower pod removed the dry run fails at pod "
            "affinity, and that is the preemption part's reason",
        )
        .node("node-0", cpu="2")
        .run("low", "node-0", 1, "2")
        .pend("high", 10, "2", affinity=affinity({"app": "missing"})),
        Case(
            "mixed-reasons-message",
            "a tainted node, a cordoned one, one full of equal pods, one too small: no candidate",
        )
        .node("node-0", cpu="4", taints=[taint("dedicated", "NoSchedule", "gpu")])
        .node("node-1", cpu="4", unschedulable=True)
        .node("node-2", cpu="2")
        .node("node-3", cpu="1")
        .run("low-0", "node-0", 1, "4")
        .run("low-1", "node-1", 1, "4")
        .run("peer", "node-2", 10, "2")
        .run("low-3", "node-3", 1, "1")
        .pend("high", 10, "2"),
    ]


def _filters() -> list[Case]:
    return [
        Case(
            "host-port-conflict-lowest-holder",
            "both nodes' port 8080 is held by a lower pod; node-0's holder is lower",
        )
        .node("node-0")
        .node("node-1")
        .run("port-0", "node-0", 1, "100m", ports=host_port(8080))
        .run("port-1", "node-1", 3, "100m", ports=host_port(8080))
        .pend("high", 10, "100m", ports=host_port(8080)),
        Case(
            "host-port-victim-is-the-holder",
            "the port holder goes though a lower pod without the port shares the node",
        )
        .node("node-0")
        .run("holder", "node-0", 2, "100m", ports=host_port(8080))
        .run("bystander", "node-0", 1, "100m")
        .pend("high", 10, "100m", ports=host_port(8080)),
        Case(
            "host-port-and-cpu",
            "one victim holds the port, another the cpu the preemptor needs",
        )
        .node("node-0", cpu="2")
        .run("holder", "node-0", 3, "100m", ports=host_port(9000))
        .run("cpu-hog", "node-0", 1, "1900m")
        .run("other", "node-0", 2, "0")
        .pend("high", 10, "1", ports=host_port(9000)),
        Case(
            "victim-anti-affinity",
            "a lower pod's anti-affinity rejects the preemptor: it is removed",
        )
        .node("node-0")
        .node("node-1", cpu="1")
        .run("shy", "node-0", 1, "100m", affinity=anti_affinity(WEB))
        .run("peer", "node-1", 10, "1")
        .pend("high", 10, "100m", labels=WEB),
        Case(
            "preemptor-anti-affinity-to-victim",
            "the preemptor avoids app=db pods; node-0's db pod is lower than node-1's",
        )
        .node("node-0")
        .node("node-1")
        .run("db-0", "node-0", 1, "100m", labels={"app": "db"})
        .run("db-1", "node-1", 5, "100m", labels={"app": "db"})
        .pend("high", 10, "100m", affinity=anti_affinity({"app": "db"})),
        Case(
            "anti-affinity-of-higher-pod-not-preemptable",
            "the anti-affine pod has a higher priority: nothing to preempt there",
        )
        .node("node-0")
        .run("shy", "node-0", 20, "100m", affinity=anti_affinity(WEB))
        .run("low", "node-0", 1, "100m")
        .pend("high", 10, "100m", labels=WEB),
    ]


def _sequences() -> list[Case]:
    return [
        Case(
            "lower-nominated-pod-cleared",
            "low-preemptor is nominated to node-0 (its victim still terminating); high "
            "preempts there too: the lower nomination is cleared, high is bound",
        )
        .node("node-0")
        .run("victim", "node-0", 1, "3")
        .pend("low-preemptor", 10, "2")
        .pend("high", 100, "3")
        .holding("low-preemptor"),
        Case(
            "higher-nominated-pod-counted-in-dry-run",
            "top is nominated to node-0 (its victim still terminating); mid would rather take "
            "node-0's lower victim, but top's nomination leaves no room there: node-1",
        )
        .node("node-0")
        .node("node-1", cpu="2")
        .run("v0", "node-0", 1, "3")
        .run("v1", "node-1", 5, "2")
        .pend("top", 100, "3")
        .pend("mid", 50, "2")
        .holding("top"),
        Case(
            "preemptor-preempted-later",
            "mid preempts low and is bound; top then preempts mid",
        )
        .node("node-0", cpu="2")
        .run("low", "node-0", 1, "2")
        .pend("mid", 10, "2")
        .pend("top", 20, "2"),
        Case(
            "second-preemptor-other-node",
            "two preemptors in turn, each taking the lowest victim still there",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("v0", "node-0", 1, "2")
        .run("v1", "node-1", 2, "2")
        .pend("first", 10, "2")
        .pend("second", 10, "2"),
        Case(
            "never-then-room-made-by-another",
            "a Never pod fails; the next pending pod preempts, binding where it preempted",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("v0", "node-0", 1, "2")
        .run("v1", "node-1", 3, "2")
        .pend("never", 5, "2", never=True)
        .pend("high", 10, "2"),
    ]


def _names_terms(*terms: list[list[str]]) -> dict[str, Any]:
    """Required node affinity: one term per argument, each an AND of `metadata.name In`."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": names}
                            for names in term
                        ]
                    }
                    for term in terms
                ]
            }
        }
    }
