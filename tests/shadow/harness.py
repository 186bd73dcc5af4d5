"""The real control plane with the real kube-scheduler placing pods, and `eventsched shadow`
beside it as a user starts it (the CLI, its own SQLite log), for the shadow's tests."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.processes import free_port
from eventsched.benchmarks.shadowmix import Mix
from eventsched.events import upgrade
from tests.differential.kubeapi import GRACE_0, KubeApi
from tests.waiting import answers_ok

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "default"
T = TypeVar("T")


def wait(predicate: Callable[[], T | None], timeout: float, what: str) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def kube_scheduler_config(kubeconfig: Path, **profile: Any) -> dict[str, Any]:
    """kube-scheduler's configuration: its default profile (with `profile`'s fields)."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": 5000, "burst": 5000},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": "default-scheduler", **profile}],
    }


class ShadowProcess:
    """`eventsched shadow` as a child process with its own log; stopped with SIGTERM."""

    def __init__(
        self,
        plane: ControlPlane,
        workdir: Path,
        config: dict[str, Any],
        db: str | None = None,
        kubeconfig: Path | None = None,
    ) -> None:
        """`kubeconfig`: whom the shadow is to the API server (default: the admin)."""
        self.db_path = workdir / "shadow.db"
        self.db = db or f"sqlite:///{self.db_path}"
        if db is None:
            upgrade(self.db)
        self.config = workdir / "shadow.yaml"
        self.config.write_text(yaml.safe_dump(config))
        self.port = free_port()
        self.log = workdir / "shadow.log"
        self.plane = plane
        self.kubeconfig = kubeconfig or plane.kubeconfig()
        self.proc = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            [
                sys.executable, "-c", "from eventsched.cli.main import main; raise SystemExit(main())",
                "--db", self.db, "--log-format", "json", "shadow",
                "--config", str(self.config), "--http-address", f"127.0.0.1:{self.port}",
                "--secure-port", "0",
                "--kubeconfig", str(self.kubeconfig),
            ],
            stdout=self.log.open("ab"), stderr=subprocess.STDOUT, cwd=ROOT, env=env,
        )  # fmt: skip
        try:
            wait(lambda: self._alive(proc) and answers_ok(self.url("readyz")), 90, "the shadow")
        except AssertionError:
            proc.kill()
            raise AssertionError(self.log.read_text()[-3000:]) from None
        return proc

    def start(self) -> None:
        """Start it again (after `kill` or `stop`), on the same log."""
        self.proc = self._start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def metrics(self) -> str:
        with urllib.request.urlopen(self.url("metrics"), timeout=5) as answer:
            return str(answer.read().decode())

    def _alive(self, proc: subprocess.Popen[bytes]) -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"the shadow exited: {self.log.read_text()[-3000:]}")
        return True

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)

    def verdicts(self) -> list[Verdict]:
        """Every `shadow_verdict` in the log, in order."""
        with sqlite3.connect(self.db_path) as db:
            rows = db.execute(
                "SELECT uid, name, node, data FROM events WHERE kind = 'shadow_verdict' "
                "ORDER BY position"
            ).fetchall()
        return [Verdict(uid, name, node, json.loads(data)) for uid, name, node, data in rows]


@dataclass(frozen=True, slots=True)
class Verdict:
    uid: str
    name: str
    node: str | None
    data: dict[str, Any]

    @property
    def verdict(self) -> str:
        return str(self.data["verdict"])


@dataclass(frozen=True, slots=True)
class KubeOutcome:
    """Each pod as kube-scheduler left it: its node, or its PodScheduled=False message."""

    uid: str
    name: str
    node: str
    message: str
    nominated: str


def create_mix(api: KubeApi, plane: ControlPlane, mix: Mix) -> None:
    for pc in mix.priority_classes:
        status, _ = api.request("POST", KubeApi.path("PriorityClass"), pc)
        assert status in (201, 409), status
    plane.make_ready_nodes(mix.nodes)


def warm_up(api: KubeApi) -> None:
    """Wait until kube-scheduler places a first pod: it has listed and watches, as a
    running kube-scheduler does when pods come (pods it lists at its start enter its
    queue in the list's order, by name)."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "warm-up", "namespace": NAMESPACE},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
    }
    api.call("POST", KubeApi.path("Pod", NAMESPACE), pod)
    path = KubeApi.path("Pod", NAMESPACE, "warm-up")
    wait(lambda: api.call("GET", path)["spec"].get("nodeName"), 120, "kube-scheduler to start")


def create_pods(api: KubeApi, pods: list[dict[str, Any]]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def create(pod: dict[str, Any]) -> None:
        api.call("POST", KubeApi.path("Pod", NAMESPACE), pod)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(create, pods))


def outcomes(api: KubeApi) -> dict[str, KubeOutcome]:
    """Every pod of the namespace as the API server has it now, by uid."""
    out = {}
    for pod in api.call("GET", KubeApi.path("Pod", NAMESPACE))["items"]:
        message = ""
        for condition in pod.get("status", {}).get("conditions") or []:
            if condition["type"] == "PodScheduled" and condition["status"] == "False":
                message = condition.get("message", "")
        uid = pod["metadata"]["uid"]
        out[uid] = KubeOutcome(
            uid,
            pod["metadata"]["name"],
            pod["spec"].get("nodeName", ""),
            message,
            pod.get("status", {}).get("nominatedNodeName", ""),
        )
    return out


def all_decided(api: KubeApi, expected: int) -> dict[str, KubeOutcome] | None:
    """The outcomes once kube-scheduler bound or failed every one of `expected` pods."""
    now = outcomes(api)
    if len(now) < expected or any(not o.node and not o.message for o in now.values()):
        return None
    return now


def last_verdicts(verdicts: list[Verdict]) -> dict[str, Verdict]:
    last: dict[str, Verdict] = {}
    for v in verdicts:
        last[v.uid] = v
    return last


def covered(shadow: ShadowProcess, kube: dict[str, KubeOutcome]) -> dict[str, Verdict] | None:
    """Each pod's verdict on what kube-scheduler did as `kube` saw it (its placement, or
    its FailedScheduling message then: kube-scheduler may try a pending pod again later,
    and the shadow judge that too), once every pod has one."""
    matching: dict[str, Verdict] = {}
    for verdict in shadow.verdicts():
        outcome = kube.get(verdict.uid)
        if outcome is None:
            continue
        if (outcome.node and verdict.data.get("node") == outcome.node) or (
            not outcome.node and verdict.data.get("message") == outcome.message
        ):
            matching[verdict.uid] = verdict
    return matching if len(matching) == len(kube) else None


def empty(api: KubeApi) -> None:
    for pod in api.call("GET", KubeApi.path("Pod", NAMESPACE))["items"]:
        api.request("DELETE", KubeApi.path("Pod", NAMESPACE, pod["metadata"]["name"]), GRACE_0)
    for node in api.call("GET", KubeApi.path("Node"))["items"]:
        api.request("DELETE", KubeApi.path("Node", None, node["metadata"]["name"]))
    wait(
        lambda: (
            not api.call("GET", KubeApi.path("Pod", NAMESPACE))["items"]
            and not api.call("GET", KubeApi.path("Node"))["items"]
        ),
        60,
        "an empty cluster",
    )
