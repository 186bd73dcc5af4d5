"""`eventsched run` calls an extender's preempt verb on the real API server, the extender being
`eventsched extender`: the calling side of test_extender_preempt_real.py, with the same
cluster.

`eventsched run`'s profile ignores the extended resource `example.com/widget`
(NodeResourcesFit's ignoredResources), as kube-scheduler's does there; the extender's
profile counts it. The preemptor fits nowhere for cpu. The dry run finds two candidates,
worker-a (evict low-a2, priority 8) and worker-b (evict low-b, priority 5); on its own
DefaultPreemption picks worker-b. The extender drops worker-b (with low-b gone the pod
still lacks a widget there), so `eventsched run` nominates worker-a and evicts low-a2. Both
logs hold the call: the caller's `preempted` decision says what the extender kept, the
extender's `preempt_answered` why it dropped worker-b, and each replays without the other.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from eventsched.audit.replay import replay
from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.processes import free_port
from eventsched.events import EventStore, upgrade
from eventsched.plugins import full_registry
from tests.differential.extenderserver.cases import SCHEDULER
from tests.differential.extenderserver.harness import ROOT, Extender, eventsched_cli, wait_for
from tests.differential.extenderserver.test_extender_preempt_real import (
    EVENTSCHED_CONFIG,
    KUBE_PROFILE,
    WIDGET,
    _deleting,
    _nominated,
    _pod,
    _setup,
)
from tests.differential.kubeapi import KubeApi


def _run_config(extender: Extender, kubeconfig: Path, node_cache_capable: bool) -> dict[str, Any]:
    """`eventsched run` with the widget ignored and `extender` as its preempt extender only."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": SCHEDULER, **KUBE_PROFILE}],
        "extenders": [
            {
                "urlPrefix": extender.url,
                "preemptVerb": "preempt",
                "nodeCacheCapable": node_cache_capable,
                "httpTimeout": "10s",
            }
        ],
    }


def _start_run(
    workdir: Path, plane: ControlPlane, config: dict[str, Any]
) -> subprocess.Popen[bytes]:
    path = workdir / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    db = f"sqlite:///{workdir / 'run.db'}"
    upgrade(db)
    log = workdir / "run.log"
    return subprocess.Popen(
        eventsched_cli(
            "--db", db, "--log-format", "json", "run",
            "--config", str(path), "--kubeconfig", str(plane.kubeconfig()),
            "--http-address", f"127.0.0.1:{free_port()}", "--secure-port", "0",
        ),
        stdout=log.open("ab"), stderr=subprocess.STDOUT, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


@pytest.mark.parametrize("node_cache_capable", [True, False], ids=["MetaVictims", "Victims"])
def test_eventsched_run_evicts_what_its_extender_answers(
    plane: ControlPlane, tmp_path: Path, node_cache_capable: bool
) -> None:
    api = KubeApi(plane.url, plane.admin_token, str(plane.ca_file))
    uids = _setup(api, plane)
    (tmp_path / "extender").mkdir()
    extender = Extender(EVENTSCHED_CONFIG, plane, tmp_path / "extender")
    run = _start_run(tmp_path, plane, _run_config(extender, plane.kubeconfig(), node_cache_capable))
    try:
        api.call("POST", KubeApi.path("Pod", "default"), _pod("urgent", "prio-1000", "1", "1"))
        try:
            wait_for(lambda: _nominated(api, "urgent"), 90, "urgent's nomination")
            wait_for(lambda: _deleting(api, "low-a2"), 30, "low-a2's eviction")
        except AssertionError as exc:
            logs = [tmp_path / "run.log", extender.log]
            tails = "\n".join(f"--- {p.name}\n{p.read_text()[-4000:]}" for p in logs)
            raise AssertionError(f"{exc}\n{tails}") from None
    finally:
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=30)
        extender.stop()
    assert _nominated(api, "urgent") == "worker-a"
    assert not _deleting(api, "low-b")
    assert not _deleting(api, "low-a1")
    with EventStore.connect(f"sqlite:///{tmp_path / 'run.db'}") as store:
        (decision, *_) = store.read(kinds=["preempted"])
        assert decision.name == "urgent" and decision.node == "worker-a"
        assert decision.data["extenders"] == [{"extender": extender.url, "kept": ["worker-a"]}]
        assert [v["uid"] for v in decision.data["victims"]] == [uids["low-a2"]]
        report = replay(store, full_registry())
        assert report.mismatches == [] and report.reproduced == report.attempts > 0
    with EventStore.connect(extender.db) as store:
        answers = [e.data for e in store.read(kinds=["preempt_answered"])]
        assert answers[0]["kept"] == [
            {"node": "worker-a", "victims": [uids["low-a2"]], "pdbViolations": 0}
        ]
        assert answers[0]["dropped"] == [{"node": "worker-b", "reason": f"Insufficient {WIDGET}"}]
