"""`eventsched shadow` beside the real kube-scheduler v1.28 on the real API server.

kube-scheduler places a generated mix (eventsched/benchmarks/shadowmix.py); the shadow,
started as a user starts it with kube-scheduler's own configuration, must record a
verdict for every pod kube-scheduler placed or failed, agree (agree or tie) on the
placements and give the same FailedScheduling message; a profile with another weight
makes it differ, naming the plugin.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import yaml

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.shadowmix import generate
from tests.differential.kubeapi import KubeApi
from tests.kube.realserver import real_binaries
from tests.shadow.harness import (
    NAMESPACE,
    KubeOutcome,
    ShadowProcess,
    Verdict,
    all_decided,
    covered,
    create_mix,
    create_pods,
    empty,
    kube_scheduler_config,
    outcomes,
    wait,
    warm_up,
)

pytestmark = pytest.mark.skipif(
    real_binaries() is None or real_binaries().scheduler is None,  # type: ignore[union-attr]
    reason="needs kube-apiserver and kube-scheduler ($EVENTSCHED_KUBE_BIN) and etcd",
)


@pytest.fixture(scope="module")
def plane() -> Iterator[ControlPlane]:
    binaries = real_binaries()
    assert binaries is not None
    with ControlPlane(binaries) as cp:
        yield cp


@pytest.fixture
def api(plane: ControlPlane) -> KubeApi:
    api = KubeApi(plane.url, plane.admin_token, str(plane.ca_file))
    empty(api)
    return api


@dataclass(frozen=True, slots=True)
class MixRun:
    kube: dict[str, KubeOutcome]
    #: Each pod's last verdict.
    last: dict[str, Verdict]
    #: The shadow's /metrics once every pod had its verdict.
    metrics: str
    verdicts: int


def _run_mix(
    plane: ControlPlane,
    api: KubeApi,
    tmp_path: Path,
    nodes: int,
    pods: int,
    paced: bool = False,
    **ours: object,
) -> MixRun:
    """kube-scheduler places the mix (all at once; `paced`: one pod at a time, each
    created once the previous one is decided) with the shadow beside it, whose profile
    has `ours`' fields."""
    mix = generate(nodes, pods, NAMESPACE)
    create_mix(api, plane, mix)
    theirs = kube_scheduler_config(plane.kubeconfig())
    shadow = ShadowProcess(plane, tmp_path, kube_scheduler_config(plane.kubeconfig(), **ours))
    config = tmp_path / "kube-scheduler.yaml"
    config.write_text(yaml.safe_dump(theirs))
    scheduler = plane.start_kube_scheduler(config)
    try:
        warm_up(api)
        if paced:
            for created, pod in enumerate(mix.pods, start=2):
                create_pods(api, [pod])
                wait(lambda n=created: all_decided(api, n), 60, f"a decision on {pod['metadata']}")
        else:
            create_pods(api, mix.pods)
        kube = wait(lambda: all_decided(api, pods + 1), 300, "kube-scheduler to decide every pod")
        last = wait(lambda: covered(shadow, kube), 600, "a verdict for every pod")
        metrics = shadow.metrics()
        verdicts = len(shadow.verdicts())
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=10)
        shadow.stop()
    return MixRun(kube, last, metrics, verdicts)


def _metric(text: str, name: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name))


def test_the_shadow_agrees_with_kube_scheduler_on_a_generated_mix(
    plane: ControlPlane, api: KubeApi, tmp_path: Path
) -> None:
    """The issue's bar: a generated mix of 2,000 pods (90 nodes: kube-scheduler scores them
    all), a verdict for every pod, agree or tie on at least 99.5% of the placements and
    the same message for the pods left pending (all but at most 2 in 100: see below)."""
    run = _run_mix(plane, api, tmp_path, nodes=90, pods=2000)
    kube, last = run.kube, run.last
    placed = [uid for uid, o in kube.items() if o.node]
    failed = [uid for uid, o in kube.items() if not o.node]
    assert placed and failed
    counts = Counter(last[uid].verdict for uid in placed)
    differ = [last[uid].data for uid in placed if last[uid].verdict == "differ"]
    assert (counts["agree"] + counts["tie"]) / len(placed) >= 0.995, (counts, differ[:5])
    # Pending, or nominated for a preemption (a tie: another node as good). Under load a
    # pod kube-scheduler fails in the busiest moment of the burst may be judged with one
    # placement more or less than it saw (docs/shadow.md, "Limits"), its message or its
    # preemption's victims then differing: at most 2 in 100 (2 of 97 once under the suite's load).
    other = [
        last[uid].data
        for uid in failed
        if last[uid].data.get("ourMessage") != kube[uid].message or last[uid].verdict == "differ"
    ]
    assert len(other) <= -(-2 * len(failed) // 100), other  # 2 in 100, rounded up
    for v in last.values():
        if v.verdict == "differ":
            assert v.data["cause"]
    # /metrics counted each verdict of the log once, and their lag.
    assert _metric(run.metrics, "eventsched_shadow_verdicts_total{") >= len(kube)
    assert _metric(run.metrics, "eventsched_shadow_verdicts_total{") <= run.verdicts
    assert _metric(run.metrics, "eventsched_shadow_lag_seconds_count") >= len(kube)


def _pod(name: str, cpu: str, priority_class: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "priorityClassName": priority_class,
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": cpu}}}
            ],
        },
    }  # fmt: skip


def test_a_preemption_is_compared_with_eventscheds_postfilter(
    plane: ControlPlane, api: KubeApi, tmp_path: Path
) -> None:
    """kube-scheduler nominates a node for a high-priority pod and deletes its victims; the
    shadow decides the pod against the node as it stood before (victims still there)."""
    mix = generate(3, 0, NAMESPACE)
    nodes = [
        {**n, "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"},
                         "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}
        for n in mix.nodes
    ]  # fmt: skip
    for n in nodes:
        n.pop("spec", None)
    create_mix(api, plane, replace(mix, nodes=nodes))
    config = tmp_path / "kube-scheduler.yaml"
    config.write_text(yaml.safe_dump(kube_scheduler_config(plane.kubeconfig())))
    shadow = ShadowProcess(plane, tmp_path, kube_scheduler_config(plane.kubeconfig()))
    scheduler = plane.start_kube_scheduler(config)
    try:
        warm_up(api)
        create_pods(api, [_pod(f"low-{i}", "900m", "shadow-low") for i in range(6)])
        wait(lambda: all_decided(api, 7), 60, "the low-priority pods placed")
        create_pods(api, [_pod("high", "1500m", "shadow-high")])
        nominated = wait(
            lambda: next(
                (o for o in outcomes(api).values() if o.name == "high" and o.nominated), None
            ),
            60,
            "kube-scheduler to nominate a node for the high-priority pod",
        )
        verdict = wait(
            lambda: next(
                (
                    v
                    for v in shadow.verdicts()
                    if v.name == "high" and v.data["observed"] == "nominated"
                ),
                None,
            ),
            60,
            "the shadow's verdict on the nomination",
        )
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=10)
        shadow.stop()
    assert verdict.node == nominated.nominated
    assert verdict.verdict in ("agree", "tie"), verdict.data
    preemption = verdict.data["preemption"]
    assert preemption["victims"], preemption
    theirs = {v["name"] for v in verdict.data["victims"]}
    assert len(theirs) == 2, verdict.data  # kube-scheduler's victims, on its node
    if verdict.verdict == "agree":
        assert preemption["nominatedNodeName"] == nominated.nominated
        assert theirs == {v["name"] for v in preemption["victims"]}
    else:
        assert "tie on every criterion" in verdict.data["cause"]


def test_a_profile_with_another_weight_differs_naming_the_plugin(
    plane: ControlPlane, api: KubeApi, tmp_path: Path
) -> None:
    """The shadow's profile weighs NodeResourcesBalancedAllocation 50 times kube-scheduler's:
    where that moves its pick, the verdict differs and its cause names the plugin. The pods
    come one at a time, so that the two decide every pod on the same state."""
    weighted = {
        "plugins": {
            "score": {
                "enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 50}],
            }
        }
    }
    run = _run_mix(plane, api, tmp_path, nodes=20, pods=60, paced=True, **weighted)
    differ = [
        v for v in run.last.values() if v.verdict == "differ" and v.data["observed"] == "placed"
    ]
    assert differ, "another weight changed no placement"
    for v in differ:
        cause = v.data["cause"]
        assert "NodeResourcesBalancedAllocation" in cause, cause
        assert f"for default-scheduler's node {v.node}" in cause, cause
        assert v.data["picked"] and v.data["picked"] != v.node


def test_a_restarted_shadow_decides_what_it_missed_and_logs_nothing_twice(
    plane: ControlPlane, api: KubeApi, tmp_path: Path
) -> None:
    """Killed (SIGKILL) after a first burst, the shadow misses a second one; started again on
    the same log it decides each pod placed meanwhile once, as the log had it (pending),
    and judges none of the first burst again."""
    mix = generate(20, 240, NAMESPACE)
    create_mix(api, plane, mix)
    config = tmp_path / "kube-scheduler.yaml"
    config.write_text(yaml.safe_dump(kube_scheduler_config(plane.kubeconfig())))
    shadow = ShadowProcess(plane, tmp_path, kube_scheduler_config(plane.kubeconfig()))
    scheduler = plane.start_kube_scheduler(config)
    try:
        warm_up(api)
        create_pods(api, mix.pods[:120])
        first = wait(lambda: all_decided(api, 121), 120, "kube-scheduler, first burst")
        wait(lambda: covered(shadow, first), 120, "verdicts on the first burst")
        shadow.kill()
        create_pods(api, mix.pods[120:])
        kube = wait(lambda: all_decided(api, 241), 120, "kube-scheduler, second burst")
        shadow.start()
        last = wait(lambda: covered(shadow, kube), 120, "verdicts on the second burst")
        verdicts = shadow.verdicts()
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=10)
        shadow.stop()
    placed = Counter(v.uid for v in verdicts if v.data["observed"] == "placed")
    assert set(placed) == {uid for uid, o in kube.items() if o.node}
    assert max(placed.values()) == 1, [uid for uid, n in placed.items() if n > 1]
    judged = Counter(
        (v.uid, v.data.get("message")) for v in verdicts if v.data["observed"] != "placed"
    )
    assert max(judged.values(), default=1) == 1
    missed = [last[uid] for uid, o in kube.items() if o.node and uid not in first]
    assert len(missed) > 50
    # Decided in an order the shadow could not see (kube-scheduler placed them meanwhile):
    # most, not all, agree. Alone on a 2-core machine 88-95% did (2026-11-29, five runs),
    # 80% once under the full suite's load; with no candidates tried beyond the likeliest
    # (UNORDERED_CANDIDATES = 1) 62-83% (three runs).
    agreed = sum(v.verdict in ("agree", "tie") for v in missed)
    assert agreed / len(missed) >= 0.7, Counter(v.verdict for v in missed)
