"""The real kube-scheduler v1.28 calls `eventsched extender` over HTTPS with its
`extenders[].tlsConfig`, as deploy/extender configures it: it trusts the extender's
serving certificate (for the Service's name, checked through serverName) through caFile and
presents the client certificate certFile/keyFile, which the extender's --client-ca-file
signed. Pods are placed through the extender (its filter and bind calls are in its log,
and the node is the one only eventsched's profile allows). With a client certificate another authority signed, kube-scheduler's calls fail
the handshake: the pod is not placed and the extender logs no call for it."""

from __future__ import annotations

from pathlib import Path

import yaml

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.events import EventStore
from tests.differential.extenderserver.cases import SCHEDULER, node, pod
from tests.differential.extenderserver.harness import (
    Extender,
    ExtenderTLS,
    empty_cluster,
    kube_scheduler_config,
    wait_for,
)
from tests.differential.kubeapi import KubeApi
from tests.serving.certs import issue, make_ca

#: Only worker-b has the label eventsched's profile requires: kube-scheduler alone would
#: place the pod on either node.
CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": SCHEDULER,
            "plugins": {"multiPoint": {"enabled": [{"name": "NodeLabel"}]}},
            "pluginConfig": [
                {"name": "NodeLabel", "args": {"requiredLabels": ["example.com/extended"]}}
            ],
        }
    ],
}
NODES = [node("worker-a"), node("worker-b", {"example.com/extended": "yes"})]


#: The Service name deploy/extender's serving certificate is for; kube-scheduler reaches
#: the extender by IP and checks the certificate against tlsConfig.serverName, as there.
SERVER_NAME = "eventsched-extender.eventsched.svc"


def _tls(workdir: Path, client_from_another_ca: bool = False) -> ExtenderTLS:
    serving_ca = make_ca(workdir, "serving-ca")
    client_ca = make_ca(workdir, "client-ca")
    signer = make_ca(workdir, "other-ca") if client_from_another_ca else client_ca
    serving = issue(
        serving_ca, workdir, "extender", SERVER_NAME, client=False, dns_name=SERVER_NAME
    )
    return ExtenderTLS(
        serving=serving,
        serving_ca=serving_ca,
        client_ca=client_ca,
        client=issue(signer, workdir, "kube-scheduler", "system:kube-scheduler"),
        server_name=SERVER_NAME,
    )


def _node_of(api: KubeApi, name: str) -> str:
    return str(api.call("GET", KubeApi.path("Pod", "default", name))["spec"].get("nodeName") or "")


def _verbs(db: str, name: str) -> list[str]:
    with EventStore.connect(db) as store:
        return [
            e.data["extender"]["verb"]
            for e in store.read_pod("default", name)
            if e.kind == "attempt_started" and "extender" in e.data
        ]


def _start(plane: ControlPlane, workdir: Path, tls: ExtenderTLS) -> tuple[KubeApi, Extender]:
    api = KubeApi(plane.url, plane.admin_token, str(plane.ca_file))
    empty_cluster(api)
    plane.make_ready_nodes(NODES)
    return api, Extender(CONFIG, plane, workdir, tls)


def test_kube_scheduler_places_pods_through_the_https_extender(
    plane: ControlPlane, tmp_path: Path
) -> None:
    api, extender = _start(plane, tmp_path, _tls(tmp_path))
    config = tmp_path / "kube-scheduler.yaml"
    config.write_text(yaml.safe_dump(kube_scheduler_config(extender, plane.kubeconfig(), True)))
    assert extender.url.startswith("https://")
    scheduler = plane.start_kube_scheduler(config)
    try:
        for name in ("web-0", "web-1"):
            api.call("POST", KubeApi.path("Pod", "default"), pod(name))
        for name in ("web-0", "web-1"):
            try:
                wait_for(lambda n=name: _node_of(api, n), 60, f"{name} bound")
            except AssertionError as exc:
                logs = [plane.workdir / "kube-scheduler.log", extender.log]
                tails = "\n".join(f"--- {p.name}\n{p.read_text()[-4000:]}" for p in logs)
                raise AssertionError(f"{exc}\n{tails}") from None
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=10)
        extender.stop()
    for name in ("web-0", "web-1"):
        assert _node_of(api, name) == "worker-b"
        verbs = _verbs(extender.db, name)
        # One node passes the filter, so kube-scheduler does not ask to prioritize.
        assert {"filter", "bind"} <= set(verbs), verbs


def _scheduler_error(api: KubeApi, name: str) -> str:
    """kube-scheduler's message once it could not schedule `name` for an error."""
    pod = api.call("GET", KubeApi.path("Pod", "default", name))
    for condition in pod.get("status", {}).get("conditions") or []:
        if condition["type"] == "PodScheduled" and condition.get("reason") == "SchedulerError":
            return str(condition.get("message", ""))
    return ""


def test_a_client_certificate_of_another_authority_is_never_served(
    plane: ControlPlane, tmp_path: Path
) -> None:
    api, extender = _start(plane, tmp_path, _tls(tmp_path, client_from_another_ca=True))
    config = tmp_path / "kube-scheduler.yaml"
    config.write_text(yaml.safe_dump(kube_scheduler_config(extender, plane.kubeconfig(), True)))
    scheduler = plane.start_kube_scheduler(config)
    try:
        api.call("POST", KubeApi.path("Pod", "default"), pod("web-0"))
        message = wait_for(
            lambda: _scheduler_error(api, "web-0"), 60, "kube-scheduler's failed extender call"
        )
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=10)
        extender.stop()
    # kube-scheduler's own words: its filter call failed in the TLS handshake.
    assert f'Post "{extender.url}filter"' in message, message
    assert "tls" in message, message
    assert _node_of(api, "web-0") == ""
    assert _verbs(extender.db, "web-0") == []
