"""The real control plane's side of the extender tests: `eventsched extender` started as a
user starts it (the CLI, its own SQLite log, the admin kubeconfig), the KubeSchedulerConfiguration
that makes the real kube-scheduler v1.28 call it, and waiting for a positive signal.

The extender serves plain HTTP (`--secure-port 0 --http-address`, asked for explicitly)
unless given `ExtenderTLS`: then HTTPS with its certificate and `--client-ca-file`, and
kube-scheduler's extender entry carries the matching `tlsConfig`."""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.processes import free_port
from eventsched.events import upgrade
from tests.differential.extenderserver.cases import SCHEDULER
from tests.differential.kubeapi import GRACE_0, KubeApi
from tests.serving.certs import Pair
from tests.waiting import answers_ok

ROOT = Path(__file__).resolve().parents[3]


def eventsched_cli(*args: str) -> list[str]:
    """The installed CLI of this checkout (the test's own interpreter and source tree)."""
    return [
        sys.executable,
        "-c",
        "from eventsched.cli.main import main; raise SystemExit(main())",
        *args,
    ]


def wait_for(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@dataclass(frozen=True)
class ExtenderTLS:
    """The certificates of an HTTPS extender and of the kube-scheduler calling it."""

    serving: Pair  # --tls-cert-file, --tls-private-key-file (for 127.0.0.1)
    serving_ca: Pair  # what signed it: kube-scheduler's tlsConfig.caFile
    client_ca: Pair  # --client-ca-file
    client: Pair  # kube-scheduler's tlsConfig.certFile, keyFile
    server_name: str = ""  # tlsConfig.serverName: the name `serving` is for, when not 127.0.0.1


class Extender:
    """`eventsched extender` as a child process with its own log; stopped with SIGTERM."""

    def __init__(
        self,
        profile: dict[str, Any],
        plane: ControlPlane,
        workdir: Path,
        tls: ExtenderTLS | None = None,
    ) -> None:
        """`profile`: eventsched's KubeSchedulerConfiguration."""
        self.db = f"sqlite:///{workdir / 'extender.db'}"
        upgrade(self.db)
        config = workdir / "eventsched.yaml"
        config.write_text(yaml.safe_dump(profile))
        self.port = free_port()
        self.tls = tls
        self.log = workdir / "extender.log"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            eventsched_cli(
                "--db", self.db, "--log-format", "json", "extender",
                "--config", str(config), *self._serving_args(),
                "--kubeconfig", str(plane.kubeconfig()),
            ),
            stdout=self.log.open("ab"), stderr=subprocess.STDOUT, cwd=ROOT, env=env,
        )  # fmt: skip
        context = None
        if tls is not None:
            context = ssl.create_default_context(cafile=str(tls.serving_ca.crt))
            context.check_hostname = not tls.server_name
        ready = f"{self.url}readyz"
        try:
            wait_for(lambda: self._alive() and answers_ok(ready, context), 60, "the extender")
        except AssertionError:
            self.stop()
            raise AssertionError(self.log.read_text()[-3000:]) from None

    def _serving_args(self) -> list[str]:
        if self.tls is None:
            return ["--secure-port", "0", "--http-address", f"127.0.0.1:{self.port}"]
        return [
            "--bind-address", "127.0.0.1", "--secure-port", str(self.port),
            "--tls-cert-file", str(self.tls.serving.crt),
            "--tls-private-key-file", str(self.tls.serving.key),
            "--client-ca-file", str(self.tls.client_ca.crt),
        ]  # fmt: skip

    @property
    def url(self) -> str:
        scheme = "http" if self.tls is None else "https"
        return f"{scheme}://127.0.0.1:{self.port}/"

    def _alive(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"the extender exited: {self.log.read_text()[-3000:]}")
        return True

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)


def kube_scheduler_config(
    extender: Extender,
    kubeconfig: Path,
    node_cache_capable: bool,
    preempt: bool = False,
    profile: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """kube-scheduler with `extender` as its filter, prioritize and bind (and with `preempt`,
    preempt) extender; `profile`: more of its profile (pluginConfig, ...)."""
    extra: dict[str, Any] = {"preemptVerb": "preempt"} if preempt else {}
    if extender.tls is not None:
        extra["tlsConfig"] = {
            "certFile": str(extender.tls.client.crt),
            "keyFile": str(extender.tls.client.key),
            "caFile": str(extender.tls.serving_ca.crt),
        }
        if extender.tls.server_name:
            extra["tlsConfig"]["serverName"] = extender.tls.server_name
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        # With --config, kube-scheduler reads its kubeconfig from here, not from the flag.
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "leaderElection": {"leaderElect": False},
        # kube-scheduler's own scores stay on (v1.28 panics in RunScorePlugins with every
        # score plugin disabled and an extender prioritizing: "makeslice: cap out of
        # range"); a weight of 1,000 makes one step of the extender's 0..10 worth 10,000,
        # more than all of kube-scheduler's default scores together (1,200), so it chooses
        # among the nodes the extender gave 10: the ones eventsched would choose among.
        "profiles": [{"schedulerName": SCHEDULER, **(profile or {})}],
        "extenders": [
            {
                "urlPrefix": extender.url,
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "bindVerb": "bind",
                "weight": 1000,
                "nodeCacheCapable": node_cache_capable,
                "httpTimeout": "10s",
                **extra,
            }
        ],
    }


def empty_cluster(api: KubeApi) -> None:
    for pod in api.call("GET", KubeApi.path("Pod", "default"))["items"]:
        api.request("DELETE", KubeApi.path("Pod", "default", pod["metadata"]["name"]), GRACE_0)
    for node in api.call("GET", KubeApi.path("Node"))["items"]:
        api.request("DELETE", KubeApi.path("Node", None, node["metadata"]["name"]))
    wait_for(
        lambda: (
            not api.call("GET", KubeApi.path("Pod", "default"))["items"]
            and not api.call("GET", KubeApi.path("Node"))["items"]
        ),
        30,
        "an empty cluster",
    )
