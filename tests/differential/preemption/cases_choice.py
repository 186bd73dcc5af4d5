"""Preemption scenarios about which pods are victims and which node is chosen
(SelectVictimsOnNode, filterPodsWithPDBViolation, pickOneNodeForPreemption).

Each case's best candidate is unique by upstream's criteria (kube-scheduler breaks a full
tie at random, by the order its parallel dry run found the candidates in)."""

from __future__ import annotations

from typing import Any

from tests.differential.builders import container
from tests.differential.preemption.builder import Case

MIN_INT32 = -(2**31)
APP_DB = {"matchLabels": {"app": "db"}}


def cases() -> list[dict[str, Any]]:
    return [c.build() for c in _victims() + _budgets() + _criteria()]


def _victims() -> list[Case]:
    return [
        Case("single-node-one-victim", "one full node, one lower-priority pod: it is the victim")
        .node("node-0", cpu="2")
        .run("low", "node-0", 1, "2")
        .pend("high", 10, "2"),
        Case(
            "minimal-set-reprieves-highest-priority-first",
            "all lower pods removed, then re-added highest priority first: the two small "
            "lowest ones are victims though the single 2-cpu pod alone would free enough",
        )
        .node("node-0")
        .run("a", "node-0", 1, "1")
        .run("b", "node-0", 2, "1")
        .run("c", "node-0", 3, "2")
        .pend("high", 10, "2"),
        Case(
            "reprieve-equal-priority-earlier-start-first",
            "equal priorities: the earlier-started pod is more important and reprieved first",
        )
        .node("node-0")
        .run("early", "node-0", 1, "2", start=5)
        .run("late", "node-0", 1, "2", start=9)
        .pend("high", 10, "2"),
        Case(
            "victims-only-as-many-as-needed",
            "five lower pods; the preemptor needs two cpus: only the two least important go",
        )
        .node("node-0", cpu="5")
        .run("p1", "node-0", 1)
        .run("p2", "node-0", 2)
        .run("p3", "node-0", 3)
        .run("p4", "node-0", 4)
        .run("p5", "node-0", 5)
        .pend("high", 10, "2"),
        Case(
            "too-many-pods-victim-is-lowest",
            "pods allocatable 2, both taken: one pod must go, the lowest-priority one",
        )
        .node("node-0", pods="2")
        .run("a", "node-0", 3, "100m")
        .run("b", "node-0", 1, "100m")
        .pend("high", 10, "100m"),
        Case(
            "extended-resource-victim",
            "the only example.com/gpu is held by a lower pod",
        )
        .node("node-0", extra={"example.com/gpu": "1"})
        .run("gpu-user", "node-0", 1, "100m", extra={"example.com/gpu": "1"})
        .run("cpu-user", "node-0", 0, "1")
        .pend("high", 10, "100m", extra={"example.com/gpu": "1"}),
        Case(
            "cpu-and-memory-both-freed",
            "one victim frees cpu, another memory; the pod needs both",
        )
        .node("node-0", cpu="4", memory="8Gi")
        .run("cpu-heavy", "node-0", 1, "3", memory="1Gi")
        .run("mem-heavy", "node-0", 2, "500m", memory="6Gi")
        .run("small", "node-0", 3, "500m", memory="1Gi")
        .pend("high", 10, "1", memory="2Gi"),
        Case(
            "init-container-request-counts",
            "the init container's 3 cpus are the pod's request: two victims, not none",
        )
        .node("node-0")
        .run("a", "node-0", 1, "1")
        .run("b", "node-0", 2, "1")
        .run("c", "node-0", 3, "1")
        .pend("high", 10, "1", initContainers=[container("init", cpu="3")]),
        Case(
            "victims-in-other-namespaces",
            "preemption crosses namespaces: the lower pod of team-a is the victim",
        )
        .namespace("team-a")
        .node("node-0", cpu="2")
        .run("other-team", "node-0", 1, "2", namespace="team-a")
        .pend("high", 10, "2"),
    ]


def _budgets() -> list[Case]:
    return [
        Case(
            "pdb-violating-reprieved-first",
            "a budget-protected pod is reprieved before a higher-priority unprotected one",
        )
        .node("node-0")
        .run("db", "node-0", 1, "2", labels={"app": "db"})
        .run("web", "node-0", 2, "2")
        .pdb("db-pdb", APP_DB, 0)
        .pend("high", 10, "2"),
        Case(
            "pdb-violation-unavoidable",
            "the only lower pod is protected by a budget with no disruption allowed: still preempted",
        )
        .node("node-0", cpu="2")
        .run("db", "node-0", 1, "2", labels={"app": "db"})
        .pdb("db-pdb", APP_DB, 0)
        .pend("high", 10, "2"),
        Case(
            "pdb-violating-group-reprieved-by-priority",
            "both lower pods violate the budget: the higher one is reprieved first",
        )
        .node("node-0")
        .run("db-a", "node-0", 2, "2", labels={"app": "db"})
        .run("db-b", "node-0", 1, "2", labels={"app": "db"})
        .pdb("db-pdb", APP_DB, 0)
        .pend("high", 10, "2"),
        Case(
            "pdb-match-expressions",
            "a matchExpressions (In) budget protects node-0's lower pod: node-1",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("cache", "node-0", 1, "2", labels={"app": "cache"})
        .run("web", "node-1", 3, "2")
        .pdb(
            "data-pdb",
            {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db", "cache"]}]},
            0,
        )
        .pend("high", 10, "2"),
        Case(
            "candidate-fewest-pdb-violations",
            "node-0's victim is lower but protected; node-1's unprotected victim wins",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("db", "node-0", 1, "2", labels={"app": "db"})
        .run("web", "node-1", 5, "2")
        .pdb("db-pdb", APP_DB, 0)
        .pend("high", 10, "2"),
        Case(
            "pdb-allowed-one-second-victim-violates",
            "disruptionsAllowed 1 and two matched victims on node-0: one violation; node-1 has none",
        )
        .node("node-0")
        .node("node-1")
        .run("db-1", "node-0", 1, "2", labels={"app": "db"})
        .run("db-2", "node-0", 1, "2", labels={"app": "db"})
        .run("web", "node-1", 3, "4")
        .pdb("db-pdb", APP_DB, 1)
        .pend("high", 10, "4"),
        Case(
            "pdb-disrupted-pods-not-counted",
            "as pdb-allowed-one..., but db-1 is in disruptedPods: no violation, lower priority wins",
        )
        .node("node-0")
        .node("node-1")
        .run("db-1", "node-0", 1, "2", labels={"app": "db"})
        .run("db-2", "node-0", 1, "2", labels={"app": "db"})
        .run("web", "node-1", 3, "4")
        .pdb("db-pdb", APP_DB, 1, disrupted=["db-1"])
        .pend("high", 10, "4"),
        Case(
            "pdb-other-namespace-ignored",
            "a budget of another namespace selecting the same labels protects nothing here",
        )
        .namespace("team-a")
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("db", "node-0", 1, "2", labels={"app": "db"})
        .run("web", "node-1", 3, "2")
        .pdb("db-pdb", APP_DB, 0, namespace="team-a")
        .pend("high", 10, "2"),
        Case(
            "pdb-empty-selector-matches-nothing",
            "policy/v1's empty selector, which the API reads as all pods, is skipped by preemption",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("db", "node-0", 1, "2", labels={"app": "db"})
        .run("web", "node-1", 3, "2")
        .pdb("all-pdb", {}, 0)
        .pend("high", 10, "2"),
        Case(
            "pdb-unlabelled-pod-never-violates",
            "a pod without labels matches no budget (a matchExpressions DoesNotExist one included)",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("bare", "node-0", 3, "2")
        .run("web", "node-1", 1, "2", labels={"app": "web"})
        .pdb(
            "no-tier-pdb",
            {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]},
            0,
        )
        .pend("high", 10, "2"),
        Case(
            "pdb-two-budgets-one-exhausted",
            "a pod under two budgets, one allowing a disruption, one not: a violation",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("db", "node-0", 1, "2", labels={"app": "db", "tier": "data"})
        .run("web", "node-1", 3, "2")
        .pdb("db-pdb", APP_DB, 1)
        .pdb("tier-pdb", {"matchLabels": {"tier": "data"}}, 0)
        .pend("high", 10, "2"),
        Case(
            "pdb-violations-outweigh-victim-count",
            "node-0: one protected victim; node-1: two unprotected higher ones: node-1",
        )
        .node("node-0")
        .node("node-1")
        .run("db", "node-0", 1, "4", labels={"app": "db"})
        .run("w1", "node-1", 5, "2")
        .run("w2", "node-1", 5, "2")
        .pdb("db-pdb", APP_DB, 0)
        .pend("high", 10, "4"),
    ]


def _criteria() -> list[Case]:
    return [
        Case(
            "choose-lowest-highest-victim-priority",
            "node-0's single victim has priority 5, node-1's two have 1 and 2: node-1",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("n0", "node-0", 5, "2")
        .run("n1-a", "node-1", 1, "1")
        .run("n1-b", "node-1", 2, "1")
        .pend("high", 10, "2"),
        Case(
            "choose-smallest-priority-sum",
            "both nodes' highest victim has priority 3; sums 3+1 against 3+2: node-0",
        )
        .node("node-0")
        .node("node-1")
        .run("n0-a", "node-0", 3, "2")
        .run("n0-b", "node-0", 1, "2")
        .run("n1-a", "node-1", 3, "2")
        .run("n1-b", "node-1", 2, "2")
        .pend("high", 10, "4"),
        Case(
            "priority-sum-shifted-fewer-negative-victims-win",
            "sums add MaxInt32+1 per victim: one -5 victim beats two (a plain sum would not)",
        )
        .node("node-0")
        .node("node-1")
        .run("n0-a", "node-0", -5, "2")
        .run("n0-b", "node-0", -5, "2")
        .run("n1", "node-1", -5, "4")
        .pend("high", 0, "4"),
        Case(
            "fewer-victims-through-shifted-sum",
            "equal victim priorities: the node with fewer victims has the smaller shifted sum",
        )
        .node("node-0")
        .node("node-1")
        .run("n0-a", "node-0", 1, "2")
        .run("n0-b", "node-0", 1, "2")
        .run("n1", "node-1", 1, "4")
        .pend("high", 10, "4"),
        Case(
            "choose-fewest-victims-when-sums-tie",
            "a MinInt32 victim adds 0 to the shifted sum: the sums tie and fewest victims decides",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("n0", "node-0", 1, "2")
        .run("n1-a", "node-1", 1, "1")
        .run("n1-b", "node-1", MIN_INT32, "1")
        .pend("high", 10, "2"),
        Case(
            "choose-latest-start-time",
            "equal victims but node-1's started later: node-1",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("n0", "node-0", 1, "2", start=1)
        .run("n1", "node-1", 1, "2", start=30)
        .pend("high", 10, "2"),
        Case(
            "start-time-of-highest-priority-victims-only",
            "the earliest start among the highest-priority victims counts (node-0's is later)",
        )
        .node("node-0")
        .node("node-1")
        .run("n0-high", "node-0", 2, "2", start=10)
        .run("n0-low", "node-0", 1, "2", start=1)
        .run("n1-high", "node-1", 2, "2", start=5)
        .run("n1-low", "node-1", 1, "2", start=20)
        .pend("high", 10, "4"),
        Case(
            "every-node-a-candidate-best-last",
            "six nodes, each a candidate; the one with the lowest victim is the last node",
        )
        .node("node-0", cpu="1")
        .node("node-1", cpu="1")
        .node("node-2", cpu="1")
        .node("node-3", cpu="1")
        .node("node-4", cpu="1")
        .node("node-5", cpu="1")
        .run("v0", "node-0", 7, "1")
        .run("v1", "node-1", 6, "1")
        .run("v2", "node-2", 5, "1")
        .run("v3", "node-3", 4, "1")
        .run("v4", "node-4", 3, "1")
        .run("v5", "node-5", 2, "1")
        .pend("high", 10, "1"),
        Case(
            "node-with-room-needs-fewer-victims",
            "node-1 has a free cpu, so one victim suffices there; node-0 needs two",
        )
        .node("node-0", cpu="2")
        .node("node-1", cpu="2")
        .run("n0-a", "node-0", 1, "1")
        .run("n0-b", "node-0", 1, "1")
        .run("n1", "node-1", 1, "1")
        .pend("high", 10, "2"),
    ]
