"""CapacityScheduling (scheduler-plugins v0.28.9): the quota arithmetic, PreFilter, which
quotas it knows, and who may preempt. Tables mirror upstream's capacity_scheduling_test.go
and elasticquota_test.go (the upstream test name is in a comment), with our own data.
End to end against the real scheduler-plugins binary: tests/differential/schedplugins."""

from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from eventsched.framework import Code, CycleState, Handle, Status
from eventsched.model import NodeTable, Pod
from eventsched.plugins.capacityscheduling import CapacityScheduling
from eventsched.plugins.capacityscheduling.elasticquota import ElasticQuota
from eventsched.plugins.capacityscheduling.quotapreemption import eligible
from eventsched.plugins.capacityscheduling.quotas import QuotaInfo, exceeds
from eventsched.plugins.capacityscheduling.state import PreFilterState
from tests.plugins.conftest import make_node

MAX = 2**63 - 1


def pod(name: str, ns: str, memory: int = 0, cpu: str = "0", **spec: Any) -> Pod:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}"}
    if spec.pop("terminating", False):
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status = {"nominatedNodeName": spec.pop("nominated")} if "nominated" in spec else {}
    requests = {"memory": str(memory), "cpu": cpu}
    container = {"name": "c", "resources": {"requests": requests}}
    return Pod.from_manifest(
        {"metadata": meta, "spec": {"containers": [container], **spec}, "status": status}
    )


def quota(ns: str, min: dict[str, Any] | None, max: dict[str, Any] | None) -> ElasticQuota:
    return ElasticQuota.from_manifest(
        {"metadata": {"name": "eq", "namespace": ns}, "spec": {"min": min, "max": max}}
    )


def table_with(quotas: list[ElasticQuota], placed: list[Pod]) -> NodeTable:
    table = NodeTable([make_node("node-a", cpu="100", memory="100Gi")])
    for q in quotas:
        table.objects.upsert(q)
    for p in placed:
        table.add_pod(p, "node-a")
    return table


def prefilter(plugin: CapacityScheduling, p: Pod) -> Status:
    _, status = plugin.pre_filter(CycleState(), p, plugin.handle.table)
    return status or Status()


# -- the arithmetic (elasticquota.go's cmp2, usedOverMinWith, usedOverMaxWith) -------------


@pytest.mark.parametrize(
    ("x1", "x2", "y", "bound", "over"),
    [
        ({"cpu": 1000}, {"cpu": 1000}, {"cpu": 2000}, MAX, False),  # equal is not over
        ({"cpu": 1001}, {"cpu": 1000}, {"cpu": 2000}, MAX, True),
        ({"memory": 1}, {}, {"cpu": 2000}, MAX, True),  # a base resource not listed is 0
        ({"example.com/gpu": 5}, {}, {"cpu": 2000}, MAX, False),  # a scalar not listed: bound
        ({"example.com/gpu": 1}, {}, {"cpu": 2000}, 0, True),  # ... 0 for a min
        ({}, {"example.com/gpu": 9}, {}, 0, False),  # x2's scalars alone are not compared
    ],
)
def test_exceeds_is_cmp2(
    x1: dict[str, int], x2: dict[str, int], y: dict[str, int], bound: int, over: bool
) -> None:
    assert exceeds(x1, x2, y, bound) is over


# TestAddElasticQuota: without Max the max is MaxInt64, without Min the min is 0.
@pytest.mark.parametrize(
    ("min", "max", "effective_min", "effective_max"),
    [
        ({"memory": "1Ki"}, {"memory": "2Ki"}, {"memory": 1024}, {"memory": 2048}),
        (
            {"memory": "1Ki"},
            None,
            {"memory": 1024},
            dict.fromkeys(("cpu", "memory", "ephemeral-storage"), MAX),
        ),
        (
            None,
            {"cpu": "2"},
            dict.fromkeys(("cpu", "memory", "ephemeral-storage"), 0),
            {"cpu": 2000},
        ),
    ],
)
def test_missing_min_or_max(
    min: Any, max: Any, effective_min: dict[str, int], effective_max: dict[str, int]
) -> None:
    q = quota("ns1", min, max)
    assert q.effective_min() == effective_min and q.effective_max() == effective_max
    assert ElasticQuota.from_record(q.to_record()) == q


def test_a_negative_or_malformed_quantity_is_refused_by_field() -> None:
    with pytest.raises(ValueError, match=r"spec\.max.*greater than or equal to 0"):
        quota("ns1", None, {"cpu": "-1"})
    with pytest.raises(ValueError, match=r"spec\.min.*must be a map"):
        quota("ns1", "2", None)  # type: ignore[arg-type]


# -- PreFilter (TestPreFilter) --------------------------------------------------------------


def test_prefilter_pod_subjects_to_elastic_quota() -> None:
    # "pod subjects to ElasticQuota": used 300 of max 2000; 500 fits, 1800 does not.
    table = table_with([quota("ns1", {"memory": 1000}, {"memory": 2000})], [pod("run", "ns1", 300)])
    plugin = CapacityScheduling({}, Handle(table))
    assert prefilter(plugin, pod("p1", "ns1", 500)).code == Code.SUCCESS
    status = prefilter(plugin, pod("p2", "ns1", 1800))
    assert status.code == Code.UNSCHEDULABLE
    assert status.message == (
        "Pod ns1/p2 is rejected in PreFilter because ElasticQuota ns1 is more than Max"
    )


def test_prefilter_the_sum_of_used_is_bigger_than_the_sum_of_min() -> None:
    # "the sum of used is bigger than the sum of min": 1800 + 200 + 500 > 1000 + 1000.
    table = table_with(
        [
            quota("ns1", {"memory": 1000}, {"memory": 2000}),
            quota("ns2", {"memory": 1000}, {"memory": 2000}),
        ],
        [pod("a", "ns1", 1800), pod("b", "ns2", 200)],
    )
    plugin = CapacityScheduling({}, Handle(table))
    status = prefilter(plugin, pod("p", "ns2", 500))
    assert (status.code, status.message) == (
        Code.UNSCHEDULABLE,
        "Pod ns2/p is rejected in PreFilter because total ElasticQuota used is more than min",
    )


def test_prefilter_without_elastic_quota_info() -> None:
    # "without elasticQuotaInfo"
    plugin = CapacityScheduling({}, Handle(table_with([], [])))
    assert prefilter(plugin, pod("p", "ns2", 500)).code == Code.SUCCESS


def test_nominated_pods_of_the_namespace_with_at_least_its_priority_count() -> None:
    table = table_with([quota("ns1", {"memory": 1000}, {"memory": 1000})], [pod("run", "ns1", 300)])
    table.nominated.nominate(pod("peer", "ns1", 500, priority=5), "node-a")
    table.nominated.nominate(pod("lower", "ns1", 500, priority=1), "node-a")
    plugin = CapacityScheduling({}, Handle(table))
    assert prefilter(plugin, pod("p", "ns1", 200, priority=5)).code == Code.SUCCESS
    assert prefilter(plugin, pod("q", "ns1", 201, priority=5)).code == Code.UNSCHEDULABLE


# -- a min above its max: used as given (no upstream test; cases.py's quota-min-above-max
# records the real binary doing the same) ---------------------------------------------------


def _recorded(plugin: CapacityScheduling, p: Pod) -> tuple[Status, dict[tuple[str, str], Any]]:
    recorded: dict[tuple[str, str], Any] = {}

    class Sink:
        def record(self, kind: str, data: Any, *, node: Any = None, plugin: Any = None) -> None:
            if kind == "input_recorded":
                recorded[(plugin, data["key"])] = data["value"]

    _, status = plugin.pre_filter(CycleState(sink=Sink()), p, plugin.handle.table)
    return status or Status(), recorded


def test_a_min_above_its_max_is_used_as_given_and_said() -> None:
    # ns1 may use 2 CPU though its min is 4; its 4 still counts in the sum of mins (5).
    table = table_with(
        [quota("ns1", {"cpu": "4"}, {"cpu": "2"}), quota("ns2", {"cpu": "1"}, {"cpu": "8"})],
        [pod("a", "ns1", cpu="1500m"), pod("b", "ns2", cpu="100m")],
    )
    plugin = CapacityScheduling({}, Handle(table))
    with capture_logs() as logs:
        status, recorded = _recorded(plugin, pod("over", "ns1", cpu="600m"))
    assert status.message == (
        "Pod ns1/over is rejected in PreFilter because ElasticQuota ns1 is more than Max"
    )
    assert recorded[("CapacityScheduling", "quota")]["minAboveMax"] == {
        "cpu": {"min": 4000, "max": 2000}
    }
    warned = [e for e in logs if e["event"].startswith("an ElasticQuota's min is above its max")]
    (warning,) = warned
    assert (warning["namespace"], warning["quota"], warning["min_above_max"]) == (
        "ns1",
        "eq",
        {"cpu": {"min": 4000, "max": 2000}},
    )
    assert warning["log_level"] == "warning" and "uses both as given" in warning["event"]
    # ns2 borrows against 4 + 1: 1.5 + 0.1 + 3.4 = 5 fits, a milli-CPU more does not.
    assert prefilter(plugin, pod("fits", "ns2", cpu="3400m")).code == Code.SUCCESS
    status, recorded = _recorded(plugin, pod("more", "ns2", cpu="3401m"))
    assert status.message == (
        "Pod ns2/more is rejected in PreFilter because total ElasticQuota used is more than min"
    )
    assert "minAboveMax" not in recorded[("CapacityScheduling", "quota")]  # ns2's is fine


def test_a_base_resource_the_max_leaves_out_is_a_max_of_0() -> None:
    above = quota("ns1", {"cpu": "1", "memory": "1Gi"}, {"cpu": "4"})
    info = QuotaInfo.of(above, {})
    assert info.min_above_max() == {"memory": {"min": 1 << 30, "max": 0}}
    # A scalar resource a max leaves out is unbounded; a min without a max is never above.
    assert (
        QuotaInfo.of(quota("ns1", {"example.com/gpu": 2}, {"cpu": "4"}), {}).min_above_max() == {}
    )
    assert QuotaInfo.of(quota("ns1", {"cpu": "4"}, None), {}).min_above_max() == {}


# -- which quotas v0.28.9 knows -------------------------------------------------------------


def test_a_quota_counts_once_a_pod_of_its_namespace_is_placed() -> None:
    table = table_with([quota("ns1", {"memory": 0}, {"memory": 100})], [])
    plugin = CapacityScheduling({}, Handle(table))
    big = pod("big", "ns1", 500)
    assert prefilter(plugin, big).code == Code.SUCCESS  # ns1 unknown: not checked
    table.add_pod(big, "node-a")
    assert prefilter(plugin, pod("next", "ns1", 1)).code == Code.UNSCHEDULABLE


def test_the_first_quota_by_name_is_read_and_kept_until_restart() -> None:
    table = table_with(
        [
            ElasticQuota("ns1", "b-small", {"memory": 10_000}, {"memory": 100}),
            ElasticQuota("ns1", "a-large", {"memory": 10_000}, {"memory": 10_000}),
        ],
        [pod("run", "ns1", 50)],
    )
    plugin = CapacityScheduling({}, Handle(table))
    assert prefilter(plugin, pod("p", "ns1", 500)).code == Code.SUCCESS  # a-large
    table.objects.upsert(ElasticQuota("ns1", "a-large", {"memory": 10_000}, {"memory": 1}))
    with capture_logs() as logs:
        assert prefilter(plugin, pod("q", "ns1", 500)).code == Code.SUCCESS  # still as read
    assert any("keeps the min and max it first read" in e["event"] for e in logs)
    fresh = CapacityScheduling({}, Handle(table))  # a restart reads it again
    assert prefilter(fresh, pod("q", "ns1", 500)).code == Code.UNSCHEDULABLE


def test_replay_decides_with_the_quotas_the_live_scheduler_knew() -> None:
    table = table_with([quota("ns1", {"memory": 1000}, {"memory": 100})], [pod("run", "ns1", 50)])
    live = CapacityScheduling({}, Handle(table))
    recorded: dict[tuple[str, str], Any] = {}

    class Sink:
        def record(self, kind: str, data: Any, *, node: Any = None, plugin: Any = None) -> None:
            if kind == "input_recorded":
                recorded[(plugin, data["key"])] = data["value"]

    state = CycleState(sink=Sink())
    live.pre_filter(state, pod("p", "ns1", 10), table)
    assert recorded[("CapacityScheduling", "known")]["ns1"]["max"] == {"memory": 100}
    table.objects.upsert(quota("ns1", {"memory": 1000}, {"memory": 1}))  # live kept max 100
    handle = Handle(table)
    handle.replay_inputs = recorded
    replayed = CapacityScheduling({}, handle)
    assert prefilter(replayed, pod("q", "ns1", 40)).code == Code.SUCCESS


# -- PodEligibleToPreemptOthers (TestPodEligibleToPreemptOthers) -----------------------------


def _state(quotas: dict[str, tuple[int, int, int]], request: int = 10) -> PreFilterState:
    from eventsched.plugins.capacityscheduling.quotas import Quotas

    infos = {
        ns: QuotaInfo(ns, "eq", {"memory": mn}, {"memory": mx}, {"memory": used})
        for ns, (mn, mx, used) in quotas.items()
    }
    r = {"memory": request}
    return PreFilterState(Quotas(infos), r, r, r)


UNRESOLVABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint",))
#: Upstream's preemptor after its first case: t1-p1, nominated to node-a.
NOMINATED = pod("t1-p1", "ns1", 10, priority=100, nominated="node-a")


def terminating(ns: str, memory: int = 0) -> Pod:
    """Upstream's t1-p0 being deleted: a lower-priority pod on the node."""
    return pod("t1-p0", ns, memory, priority=50, terminating=True)


@pytest.mark.parametrize(
    ("preemptor", "on_node", "status", "quotas", "expected"),
    [
        # "Pod with PreemptNever preemption policy"
        (
            pod("t1-p1", "ns1", 10, priority=100, preemptionPolicy="Never"),
            [pod("t1-p0", "ns1", 50, priority=50)],
            UNRESOLVABLE,
            {"ns1": (50, 150, 0)},
            False,
        ),
        # "Pod with unschedulableAndUnresolvable nominated node"
        (NOMINATED, [terminating("ns1", 50)], UNRESOLVABLE, {"ns1": (50, 150, 0)}, True),
        # "Pod with terminating pod in the same namespace"
        (NOMINATED, [terminating("ns1")], None, {"ns1": (50, 150, 0)}, False),
        # "Pod with terminating pod in another namespace" (ns2 over its min)
        (
            NOMINATED,
            [terminating("ns2")],
            None,
            {"ns1": (50, 150, 0), "ns2": (50, 150, 100)},
            False,
        ),
        # "Pod without elasticQuotas and terminating pod exists in the same namespace"
        (NOMINATED, [terminating("ns2")], None, {}, False),
        # "Pod without ElasticQuotas and terminating pod exists in another namespace"
        (NOMINATED, [terminating("ns2")], None, {"ns2": (50, 150, 100)}, True),
    ],
)
def test_pod_eligible_to_preempt_others(
    preemptor: Pod,
    on_node: list[Pod],
    status: Status | None,
    quotas: dict[str, tuple[int, int, int]],
    expected: bool,
) -> None:
    assert eligible(preemptor, on_node, status, _state(quotas)).eligible is expected
