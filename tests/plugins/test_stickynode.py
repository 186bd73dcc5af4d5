"""StickyNode: a pod identity returns to its first placement (a projection of the log)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from eventsched.cluster import SimulatedCluster
from eventsched.config.file import parse_config
from eventsched.events import EventStore, identity_of, rebuild
from eventsched.framework import (
    IDENTITY_KEY,
    Code,
    CycleState,
    FitError,
    Framework,
    Handle,
    ListSink,
    PluginArgsError,
    PreFilterResult,
    Profile,
    Status,
    run_post_filter,
    schedule_pod,
)
from eventsched.model import Node, NodeTable, Pod
from eventsched.plugins import full_registry
from eventsched.plugins.stickynode import StickyNode
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.plugins.conftest import make_node

NODES = ("worker-1", "worker-2", "worker-3")


def table_of(*names: str, cpu: str = "4") -> NodeTable:
    return NodeTable([make_node(n, cpu=cpu) for n in names])


def pod(
    name: str = "db-0",
    namespace: str = "shop",
    uid: str | None = None,
    cpu: str = "1",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owner: tuple[str, str] | None = ("StatefulSet", "db"),
    node_name: str = "",
) -> Pod:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": uid or f"uid-{namespace}-{name}",
        "labels": labels or {},
        "annotations": annotations or {},
    }
    if owner is not None:
        meta["ownerReferences"] = [
            {"kind": owner[0], "name": owner[1], "uid": "owner-uid", "controller": True}
        ]
    spec: dict[str, Any] = {
        "schedulerName": "eventsched",
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    return Pod.from_manifest({"metadata": meta, "spec": spec})


class Harness:
    """A StickyNode over a table, with first placements from a dict and what it records."""

    def __init__(
        self,
        args: dict[str, Any] | None = None,
        table: NodeTable | None = None,
        placements: dict[str, str] | None = None,
    ) -> None:
        self.table = table if table is not None else table_of(*NODES)
        self.handle = Handle(self.table)
        self.placements = dict(placements or {})
        self.handle.first_placement = self.placements.get
        self.sink = ListSink()
        self.events: list[tuple[str, str, str, str, str]] = []
        self.handle.emit_event = lambda p, t, r, a, n: self.events.append((p.key, t, r, a, n))
        self.plugin = StickyNode(args or {}, self.handle)
        self.rows = np.arange(len(self.table))

    def pre_filter(
        self, p: Pod, state: CycleState | None = None
    ) -> tuple[PreFilterResult | None, Status | None, CycleState]:
        state = state or CycleState("attempt", 1, self.sink)
        result, status = self.plugin.pre_filter(state, p, self.table)
        return result, status, state

    def filtered(self, p: Pod, state: CycleState) -> dict[str, Status | None]:
        result = self.plugin.filter_batch(state, p, self.table, self.rows)
        return {
            self.table.names[int(r)]: None if v < 0 else result.statuses[v]
            for r, v in zip(self.rows, result.verdict, strict=True)
        }

    def scores(self, p: Pod, state: CycleState) -> dict[str, int] | None:
        """None when PreScore says Skip."""
        status = self.plugin.pre_score(state, p, self.table, self.rows)
        if status is not None and status.is_skip:
            return None
        raw = self.plugin.score_batch(state, p, self.table, self.rows)
        return {self.table.names[int(r)]: int(s) for r, s in zip(self.rows, raw, strict=True)}


# -- args ---------------------------------------------------------------------------


def test_defaults_are_name_strict_wait() -> None:
    p = StickyNode({}, Handle())
    assert (p.identity.kind, p.policy, p.on_node_deleted) == ("name", "strict", "wait")


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        ({"policy": "soft"}, "policy", 'must be strict or preferred (got "soft")'),
        ({"policy": 1}, "policy", "must be strict or preferred (got 1)"),
        ({"onNodeDeleted": "drop"}, "onNodeDeleted", 'must be wait or reassign (got "drop")'),
        (
            {"identity": "lable:app"},
            "identity",
            'must be name, label:KEY, annotation:KEY or ownerOrdinal (got "lable:app")',
        ),
        (
            {"identity": ["name"]},
            "identity",
            "must be name, label:KEY, annotation:KEY or ownerOrdinal (got ['name'])",
        ),
        (
            {"identity": "label:"},
            "identity",
            'label:KEY needs a valid label key, e.g. label:app.kubernetes.io/instance (got "label:")',
        ),
        (
            {"identity": "annotation:a b"},
            "identity",
            "annotation:KEY needs a valid annotation key, e.g. "
            'annotation:app.kubernetes.io/instance (got "annotation:a b")',
        ),
        (
            {"nodeDeleted": "wait"},
            "nodeDeleted",
            "unknown field; StickyNode takes identity, policy, onNodeDeleted",
        ),
    ],
)
def test_bad_args_name_the_field_and_the_fix(
    args: dict[str, Any], field: str, problem: str
) -> None:
    with pytest.raises(PluginArgsError) as err:
        StickyNode(args, Handle())
    assert (err.value.field, err.value.problem) == (field, problem)


def test_bad_args_in_a_config_file_carry_the_path() -> None:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "eventsched",
                "plugins": {"multiPoint": {"enabled": [{"name": "StickyNode"}]}},
                "pluginConfig": [{"name": "StickyNode", "args": {"policy": "always"}}],
            }
        ],
    }
    with pytest.raises(Exception) as err:
        parse_config(doc, "sticky.yaml", full_registry())
    assert "profiles[0].pluginConfig[0].args.policy" in str(err.value)
    assert 'must be strict or preferred (got "always")' in str(err.value)


# -- identity -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("identity", "the_pod", "expected"),
    [
        ("name", pod(), "shop/db-0"),
        ("ownerOrdinal", pod("db-12"), "shop/StatefulSet/db/12"),
        ("ownerOrdinal", pod("db-0"), "shop/StatefulSet/db/0"),
        (
            "label:app.kubernetes.io/instance",
            pod(labels={"app.kubernetes.io/instance": "orders"}),
            "shop/label:app.kubernetes.io/instance=orders",
        ),
        (
            "annotation:example.com/seat",
            pod(annotations={"example.com/seat": "7"}),
            "shop/annotation:example.com/seat=7",
        ),
    ],
)
def test_identity_kinds(identity: str, the_pod: Pod, expected: str) -> None:
    h = Harness({"identity": identity})
    _, status, state = h.pre_filter(the_pod)
    assert state.get(IDENTITY_KEY) == expected
    assert status is not None and status.is_skip  # no placement yet: no restriction
    assert h.sink.decisions == [] and h.events == []


def test_same_label_value_in_another_namespace_is_another_identity() -> None:
    h = Harness({"identity": "label:app"})
    _, _, a = h.pre_filter(pod(labels={"app": "x"}))
    _, _, b = h.pre_filter(pod(namespace="other", labels={"app": "x"}))
    assert a.get(IDENTITY_KEY) == "shop/label:app=x"
    assert b.get(IDENTITY_KEY) == "other/label:app=x"


@pytest.mark.parametrize(
    ("identity", "the_pod", "why"),
    [
        ("label:app", pod(), "pod has no label app"),
        ("label:app", pod(labels={"app": ""}), "pod has no label app"),
        ("annotation:seat", pod(), "pod has no annotation seat"),
        ("ownerOrdinal", pod(owner=None), "pod is not controlled by a StatefulSet"),
        (
            "ownerOrdinal",
            pod("web-7f9c-abcde", owner=("ReplicaSet", "web-7f9c")),
            "pod is not controlled by a StatefulSet",
        ),
        ("ownerOrdinal", pod("db-x"), "pod name db-x has no ordinal after db-"),
        ("ownerOrdinal", pod("db-01"), "pod name db-01 has no ordinal after db-"),
        ("ownerOrdinal", pod("cache-0"), "pod name cache-0 has no ordinal after db-"),
    ],
)
def test_missing_identity_falls_back_to_namespace_name_recorded_and_reported(
    identity: str, the_pod: Pod, why: str
) -> None:
    h = Harness({"identity": identity})
    _, _, state = h.pre_filter(the_pod)
    assert state.get(IDENTITY_KEY) == the_pod.key
    (recorded,) = h.sink.decisions
    assert (recorded.kind, recorded.plugin) == ("input_recorded", "StickyNode")
    assert recorded.data == {
        "key": "identity",
        "value": {"identity": the_pod.key, "wanted": identity, "fallback": why},
    }
    assert h.events == [
        (
            the_pod.key,
            "Warning",
            "StickyIdentityFallback",
            "Scheduling",
            f"StickyNode identity {identity}: {why}; using {the_pod.key}",
        )
    ]


def test_fallback_identity_finds_the_namespace_name_placement() -> None:
    h = Harness({"identity": "label:app"}, placements={"shop/db-0": "worker-3"})
    result, status, _ = h.pre_filter(pod())
    assert status is None and result == PreFilterResult(frozenset({"worker-3"}))


def test_identity_is_computed_once_per_cycle() -> None:
    h = Harness({"identity": "label:app"})
    p, state = pod(), CycleState("a", 1, h.sink)
    h.pre_filter(p, state)
    h.filtered(p, state)
    h.scores(p, state)
    assert len(h.sink.decisions) == 1 and len(h.events) == 1


# -- strict ---------------------------------------------------------------------------


def test_strict_without_placement_restricts_nothing() -> None:
    h = Harness()
    result, status, state = h.pre_filter(pod())
    assert result is None and status == Status(Code.SKIP)
    assert h.filtered(pod(), state) == dict.fromkeys(NODES)
    assert h.scores(pod(), state) is None


def test_strict_restricts_to_the_first_node() -> None:
    h = Harness(placements={"shop/db-0": "worker-2"})
    result, status, state = h.pre_filter(pod())
    assert status is None
    assert result == PreFilterResult(frozenset({"worker-2"}))
    # Filter, for callers that do not honour the PreFilterResult: every other node fails.
    reason = Status.unresolvable("node(s) didn't match the pod's first placement on worker-2")
    assert h.filtered(pod(), state) == {"worker-1": reason, "worker-2": None, "worker-3": reason}
    assert h.scores(pod(), state) is None  # strict does not score
    assert h.sink.decisions == []


def test_strict_node_deleted_wait_keeps_the_pod_pending_naming_the_node() -> None:
    h = Harness(placements={"shop/db-0": "worker-9"})
    result, status, state = h.pre_filter(pod())
    assert result is None
    assert status == Status.unresolvable(
        "node(s) didn't match the pod's first placement on worker-9 (node not found)"
    )
    reason = Status.unresolvable("node(s) didn't match the pod's first placement on worker-9")
    assert h.filtered(pod(), state) == dict.fromkeys(NODES, reason)
    assert h.sink.decisions == []  # wait: nothing forgotten


@pytest.mark.parametrize("policy", ["strict", "preferred"])
def test_node_deleted_reassign_forgets_once_and_schedules_normally(policy: str) -> None:
    h = Harness(
        {"policy": policy, "onNodeDeleted": "reassign"}, placements={"shop/db-0": "worker-9"}
    )
    result, status, state = h.pre_filter(pod())
    assert result is None and status == Status(Code.SKIP)
    assert h.filtered(pod(), state) == dict.fromkeys(NODES)
    assert h.scores(pod(), state) is None
    (forget,) = h.sink.decisions
    assert (forget.kind, forget.node, forget.plugin) == ("maintenance", "worker-9", "StickyNode")
    assert forget.data == {
        "action": "sticky_forget",
        "identity": "shop/db-0",
        "reason": "node worker-9 deleted",
    }


def test_reassign_keeps_a_first_node_that_still_exists() -> None:
    h = Harness({"onNodeDeleted": "reassign"}, placements={"shop/db-0": "worker-1"})
    result, status, _ = h.pre_filter(pod())
    assert status is None and result == PreFilterResult(frozenset({"worker-1"}))
    assert h.sink.decisions == []


def test_post_filter_names_the_first_node_only_when_it_was_tried_and_failed() -> None:
    h = Harness(placements={"shop/db-0": "worker-2"})
    _, _, state = h.pre_filter(pod())
    full = {"worker-2": Status.unschedulable("Insufficient cpu")}
    result, status = h.plugin.post_filter(state, pod(), full)
    assert result is None
    assert status == Status.unschedulable(
        "pod waits for its first placement on worker-2 (StickyNode policy strict)"
    )
    # Nothing about the first node in the statuses, or no placement: no sentence, and
    # Unschedulable (not Success) so later PostFilter plugins still run.
    _, status = h.plugin.post_filter(state, pod(), {})
    assert status == Status(Code.UNSCHEDULABLE)
    _, _, fresh = Harness().pre_filter(pod())
    _, status = h.plugin.post_filter(fresh, pod(), full)
    assert status == Status(Code.UNSCHEDULABLE)


# -- preferred ------------------------------------------------------------------------


def test_preferred_scores_the_first_node_100_and_filters_nothing() -> None:
    h = Harness({"policy": "preferred"}, placements={"shop/db-0": "worker-3"})
    result, status, state = h.pre_filter(pod())
    assert result is None and status == Status(Code.SKIP)
    assert h.scores(pod(), state) == {"worker-1": 0, "worker-2": 0, "worker-3": 100}


def test_preferred_scores_only_the_rows_asked_for() -> None:
    h = Harness({"policy": "preferred"}, placements={"shop/db-0": "worker-3"})
    state = CycleState()
    rows = np.array([2, 0], dtype=np.intp)
    assert h.plugin.pre_score(state, pod(), h.table, rows) is None
    assert h.plugin.score_batch(state, pod(), h.table, rows).tolist() == [100, 0]


@pytest.mark.parametrize("placements", [{}, {"shop/db-0": "worker-9"}])
def test_preferred_skips_scoring_without_a_first_node_in_the_cluster(
    placements: dict[str, str],
) -> None:
    h = Harness({"policy": "preferred"}, placements=placements)
    _, _, state = h.pre_filter(pod())
    assert h.scores(pod(), state) is None
    assert h.sink.decisions == []  # wait: a deleted first node is kept, not forgotten


# -- through the framework: upstream's "0/N nodes are available" messages ---------------


def sticky_profile(**args: str) -> Profile:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "eventsched",
                "plugins": {"multiPoint": {"enabled": [{"name": "StickyNode", "weight": 10}]}},
                "pluginConfig": [{"name": "StickyNode", "args": dict(args)}],
            }
        ],
    }
    (profile,) = parse_config(doc, "sticky.yaml", full_registry()).profiles
    return profile


def run_cycle(
    profile: Profile, table: NodeTable, placements: dict[str, str], p: Pod
) -> tuple[str, Framework, CycleState]:
    """The selected node, or the FitError message with PostFilter's sentence, as the scheduler builds it."""
    handle = Handle(table)
    handle.first_placement = placements.get
    fw = Framework(profile, full_registry(), handle)
    state = CycleState("attempt", 7)
    sink = ListSink()
    try:
        return schedule_pod(fw, state, p, table, 0, sink).node, fw, state
    except FitError as err:
        run_post_filter(fw, state, p, table, err.diagnosis)
        return err.diagnosis.message(), fw, state


def test_profile_runs_sticky_node_at_its_points() -> None:
    profile = sticky_profile()
    assert all(
        "StickyNode" in [r.name for r in profile.plugins[point]]
        for point in ("preFilter", "filter", "postFilter", "preScore", "score")
    )
    assert "StickyNode" not in [r.name for r in profile.plugins.get("postBind", ())]


def test_strict_message_when_the_first_node_is_gone() -> None:
    message, _, _ = run_cycle(sticky_profile(), table_of(*NODES), {"shop/db-0": "worker-9"}, pod())
    assert message == (
        "0/3 nodes are available: node(s) didn't match the pod's first placement on worker-9 "
        "(node not found). preemption: 0/3 nodes are available: "
        "3 Preemption is not helpful for scheduling.."
    )


def test_strict_message_when_the_first_node_is_full() -> None:
    table = table_of(*NODES, cpu="1")
    message, _, _ = run_cycle(sticky_profile(), table, {"shop/db-0": "worker-2"}, pod(cpu="2"))
    assert message == (
        # The nodes StickyNode's PreFilter result left out are not reported, as
        # kube-scheduler v1.28 reports only the nodes it evaluated.
        "0/3 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod., "
        "pod waits for its first placement on worker-2 (StickyNode policy strict)."
    )


def test_strict_goes_to_the_first_node_even_when_others_score_higher() -> None:
    table = NodeTable([make_node("small", cpu="2"), make_node("big-1", cpu="64")])
    node, _, _ = run_cycle(sticky_profile(), table, {"shop/db-0": "small"}, pod())
    assert node == "small"
    node, _, _ = run_cycle(sticky_profile(), table, {}, pod())
    assert node == "big-1"  # the control: without a placement the bigger node wins


def test_preferred_wins_when_it_fits_and_goes_elsewhere_when_not() -> None:
    profile = sticky_profile(policy="preferred")
    table = NodeTable([make_node("small", cpu="2"), make_node("big-1", cpu="64")])
    node, _, _ = run_cycle(profile, table, {"shop/db-0": "small"}, pod(cpu="1"))
    assert node == "small"
    node, _, _ = run_cycle(profile, table, {"shop/db-0": "small"}, pod(cpu="3"))
    assert node == "big-1"


# -- the scheduler: placements from the log, across restarts ------------------------------


def worker(name: str, cpu: str = "4") -> Node:
    return make_node(name, cpu=cpu, labels={"kubernetes.io/hostname": name})


def schedule(store: EventStore, profile: Profile, nodes: list[Node], pods: list[Pod]) -> Scheduler:
    """One scheduler process's life: start (rebuild from the log), run until idle, stop."""
    scheduler = Scheduler(
        store,
        SimulatedCluster(nodes, pods),
        [profile],
        full_registry(),
        SchedulerOptions(initial_backoff=0.01, max_backoff=0.02),
    )
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()
    return scheduler


def test_node_deleted_wait_then_reassign_across_restarts(store: EventStore) -> None:
    first = schedule(store, sticky_profile(), [worker("worker-1")], [pod(uid="u1")])
    assert first.cache.node_of("u1") == "worker-1"

    # worker-1 is gone; the pod is re-created. wait: it stays pending, naming worker-1.
    nodes = [worker("worker-2"), worker("worker-3")]
    waiting = schedule(store, sticky_profile(), nodes, [pod(uid="u2")])
    assert waiting.cache.node_of("u2") is None
    ((_, message),) = waiting.last_failure.values()
    assert message == (
        "0/2 nodes are available: node(s) didn't match the pod's first placement on worker-1 "
        "(node not found). preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling.."
    )
    assert rebuild(store).first_placements["shop/db-0"].node == "worker-1"

    # reassign: the old placement is forgotten (an event), the next bound is the new one.
    moved = schedule(store, sticky_profile(onNodeDeleted="reassign"), nodes, [pod(uid="u3")])
    new_node = moved.cache.node_of("u3")
    assert new_node in ("worker-2", "worker-3")
    (forget,) = [
        e for e in store.read(kinds=["maintenance"]) if e.data["action"] == "sticky_forget"
    ]
    assert (forget.uid, forget.node, forget.plugin) == ("u3", "worker-1", "StickyNode")
    assert forget.data["reason"] == "node worker-1 deleted"
    (bound,) = [e for e in store.read(kinds=["bound"]) if e.uid == "u3"]
    assert bound.position > forget.position and identity_of(bound) == "shop/db-0"
    placement = rebuild(store).first_placements["shop/db-0"]
    assert (placement.node, placement.uid) == (new_node, "u3")


def test_strict_pod_waits_while_its_node_is_full_and_preferred_goes_elsewhere(
    store: EventStore,
) -> None:
    nodes = [worker("worker-1"), worker("worker-2")]
    first = schedule(store, sticky_profile(), nodes[:1], [pod(uid="u1", cpu="2")])
    assert first.cache.node_of("u1") == "worker-1"

    filler = pod("filler", owner=None, uid="filler", cpu="3", node_name="worker-1")
    again = schedule(store, sticky_profile(), nodes, [filler, pod(uid="u2", cpu="2")])
    assert again.cache.node_of("u2") is None
    ((_, message),) = again.last_failure.values()
    assert message == (
        "0/2 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod., "
        "pod waits for its first placement on worker-1 (StickyNode policy strict)."
    )

    preferred = sticky_profile(policy="preferred")
    elsewhere = schedule(store, preferred, nodes, [filler, pod(uid="u3", cpu="2")])
    assert elsewhere.cache.node_of("u3") == "worker-2"
    # Landing elsewhere does not move the first placement.
    assert rebuild(store).first_placements["shop/db-0"].node == "worker-1"


def test_waiting_pod_is_bound_when_its_first_node_comes_back(store: EventStore) -> None:
    schedule(store, sticky_profile(), [worker("worker-1")], [pod(uid="u1")])

    cluster = SimulatedCluster([worker("worker-2")], [pod(uid="u2")])
    scheduler = Scheduler(
        store,
        cluster,
        [sticky_profile()],
        full_registry(),
        SchedulerOptions(initial_backoff=0.01, max_backoff=0.02),
    )
    scheduler.start()
    scheduler.run(until_idle=True)
    assert scheduler.cache.node_of("u2") is None  # waiting for worker-1, not on worker-2
    cluster.add_node(worker("worker-1"))
    scheduler.run(until_idle=True)
    scheduler.stop()
    assert scheduler.cache.node_of("u2") == "worker-1"
    woken = [e for e in store.read(kinds=["requeued"]) if e.uid == "u2"]
    assert woken and woken[0].data["event"] == "NodeAdd"
