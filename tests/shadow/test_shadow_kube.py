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
    create_mix,
    create_pods,
    empty,
    kube_scheduler_config,
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


def _last_verdicts(verdicts: list[Verdict]) -> dict[str, Verdict]:
    last: dict[str, Verdict] = {}
    for v in verdicts:
        last[v.uid] = v
    return last


def _covered(shadow: ShadowProcess, kube: dict[str, KubeOutcome]) -> dict[str, Verdict] | None:
    """Each pod's last verdict, once every pod has the one for what kube-scheduler did."""
    last = _last_verdicts(shadow.verdicts())
    for uid, outcome in kube.items():
        verdict = last.get(uid)
        if verdict is None:
            return None
        if outcome.node and verdict.data.get("node") != outcome.node:
            return None
        if not outcome.node and verdict.data.get("message") != outcome.message:
            return None
    return last


def _run_mix(
    plane: ControlPlane, api: KubeApi, tmp_path: Path, nodes: int, pods: int, **ours: object
) -> tuple[dict[str, KubeOutcome], dict[str, Verdict], ShadowProcess]:
    mix = generate(nodes, pods, NAMESPACE)
    create_mix(api, plane, mix)
    theirs = kube_scheduler_config(plane.kubeconfig())
    shadow = ShadowProcess(plane, tmp_path, kube_scheduler_config(plane.kubeconfig(), **ours))
    config = tmp_path / "kube-scheduler.yaml"
    config.write_text(yaml.safe_dump(theirs))
    scheduler = plane.start_kube_scheduler(config)
    try:
        warm_up(api)
        create_pods(api, mix.pods)
        kube = wait(lambda: all_decided(api, pods + 1), 300, "kube-scheduler to decide every pod")
        last = wait(lambda: _covered(shadow, kube), 300, "a verdict for every pod")
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=10)
        shadow.stop()
    return kube, last, shadow


def test_the_shadow_agrees_with_kube_scheduler_on_a_generated_mix(
    plane: ControlPlane, api: KubeApi, tmp_path: Path
) -> None:
    kube, last, shadow = _run_mix(plane, api, tmp_path, nodes=40, pods=400)
    placed = [uid for uid, o in kube.items() if o.node]
    failed = [uid for uid, o in kube.items() if not o.node]
    assert placed and failed
    counts = Counter(last[uid].verdict for uid in placed)
    differ = [last[uid].data for uid in placed if last[uid].verdict == "differ"]
    assert (counts["agree"] + counts["tie"]) / len(placed) >= 0.995, (counts, differ[:5])
    for uid in failed:
        assert last[uid].data["ourMessage"] == kube[uid].message, last[uid].data
        assert last[uid].verdict == "agree"
    for v in last.values():
        if v.verdict == "differ":
            assert v.data["cause"]
