"""`eventsched shadow` under deploy/shadow/'s role, on the real authorizer: it reads, and
writes nothing.

A control plane of its own, with RBAC and kube-apiserver's audit log of every request.
deploy/shadow/'s Namespace, ServiceAccount, ClusterRole and ClusterRoleBinding are created
as `kubectl kustomize deploy/shadow` renders them, and the shadow runs (the CLI, with the
rendered configuration) with a token of that ServiceAccount; kube-scheduler runs as the
admin and places a generated mix, some pods of which fit nowhere. Once the shadow has a
verdict for every pod, the audit log shows what the shadow asked of the API server: lists
and watches (a positive signal: the audit caught it) and no request with another verb,
none refused; the same log holds kube-scheduler's Bindings (writes are logged). The
shadow's own rest_client metrics count no 403, and its log no write its read-only cluster
refused (nothing was even attempted).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from eventsched.benchmarks.auditlog import AuditEvent
from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.shadowmix import generate
from eventsched.cluster.kube.access import READ_VERBS
from tests.deploy.test_shadow_manifests import ACCOUNT, rendered, watched_resources
from tests.differential.kubeapi import KubeApi
from tests.kube.realserver import real_binaries
from tests.shadow.harness import (
    NAMESPACE,
    ShadowProcess,
    all_decided,
    covered,
    create_mix,
    create_pods,
    kube_scheduler_config,
    wait,
    warm_up,
)

pytestmark = pytest.mark.skipif(
    real_binaries() is None or real_binaries().scheduler is None,  # type: ignore[union-attr]
    reason="needs kube-apiserver and kube-scheduler ($EVENTSCHED_KUBE_BIN) and etcd",
)

NODES, PODS = 10, 40
RBAC_PATHS = {
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
}
#: What kube-scheduler (and `eventsched run`) writes: none of it is the shadow's to do.
WRITES = [
    ("", "pods", "binding", "create"),
    ("", "pods", "status", "patch"),
    ("", "pods", "", "delete"),
    ("events.k8s.io", "events", "", "create"),
    ("", "persistentvolumes", "", "update"),
    ("coordination.k8s.io", "leases", "", "create"),
]
#: The shadow's read-only cluster says this of a write it refuses (eventsched/shadow/readonly.py).
REFUSED = "the shadow writes nothing to the cluster"


def create_identity(api: KubeApi, docs: dict[tuple[str, str], dict[str, Any]]) -> str:
    """deploy/shadow/'s namespace, account, role and binding as rendered; the account's
    token (TokenRequest, as the kubelet asks for a pod's)."""
    namespace = docs[("Namespace", "eventsched")]
    api.call("POST", KubeApi.path("Namespace"), namespace)
    account = docs[("ServiceAccount", ACCOUNT)]
    account_path = f"/api/v1/namespaces/{account['metadata']['namespace']}/serviceaccounts"
    api.call("POST", account_path, account)
    for kind, path in RBAC_PATHS.items():
        api.call("POST", path, docs[(kind, ACCOUNT)])
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    answer = api.call("POST", f"{account_path}/{ACCOUNT}/token", request)
    return str(answer["status"]["token"])


def allowed(api: KubeApi, user: str, namespace: str, access: tuple[str, str, str, str]) -> bool:
    """What the authorizer answers for `user` (a SubjectAccessReview, asked as the admin)."""
    group, resource, subresource, verb = access
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": user,
            "groups": [
                "system:serviceaccounts",
                f"system:serviceaccounts:{namespace}",
                "system:authenticated",
            ],
            "resourceAttributes": {
                "group": group,
                "resource": resource,
                "subresource": subresource,
                "verb": verb,
                "namespace": NAMESPACE if resource != "leases" else namespace,
            },
        },
    }
    answer = api.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    return bool(answer["status"].get("allowed"))


def rest_client_codes(metrics: str) -> Counter[str]:
    """rest_client_requests_total by code, summed over methods and hosts."""
    codes: Counter[str] = Counter()
    for line in metrics.splitlines():
        if line.startswith("rest_client_requests_total{"):
            code = re.search(r'code="([^"]*)"', line)
            assert code is not None, line
            codes[code.group(1)] += int(float(line.rsplit(" ", 1)[1]))
    return codes


def test_the_shadow_under_deploy_shadow_s_role_lists_watches_and_writes_nothing(
    tmp_path: Path,
) -> None:
    binaries = real_binaries()
    assert binaries is not None
    docs = rendered()
    config = yaml.safe_load(docs[("ConfigMap", "eventsched-shadow-config")]["data"]["config.yaml"])
    with ControlPlane(binaries, tmp_path / "plane", audit=True) as plane:
        assert plane.audit is not None
        api = KubeApi(plane.url, plane.admin_token, str(plane.ca_file))
        token = create_identity(api, docs)
        user = f"system:serviceaccount:eventsched:{ACCOUNT}"
        # The role is in force for the account (RBAC's caches have it), and refuses every
        # write a scheduler makes.
        wait(lambda: allowed(api, user, "eventsched", ("", "pods", "", "list")), 30, "the grant")
        for write in WRITES:
            assert not allowed(api, user, "eventsched", write), write

        mix = generate(NODES, PODS, NAMESPACE)
        create_mix(api, plane, mix)
        shadow = ShadowProcess(plane, tmp_path, config, kubeconfig=plane.kubeconfig(token=token))
        scheduler_config = tmp_path / "kube-scheduler.yaml"
        scheduler_config.write_text(yaml.safe_dump(kube_scheduler_config(plane.kubeconfig())))
        scheduler = plane.start_kube_scheduler(scheduler_config)
        try:
            warm_up(api)
            create_pods(api, mix.pods)
            kube = wait(lambda: all_decided(api, PODS + 1), 300, "kube-scheduler's decisions")
            last = wait(lambda: covered(shadow, kube), 300, "a verdict for every pod")
            metrics = shadow.metrics()
        finally:
            scheduler.terminate()
            scheduler.wait(timeout=10)
            shadow.stop()
        events = plane.audit.events()

    # The shadow decided every pod, the ones that fit nowhere among them.
    observed = Counter(v.data["observed"] for v in last.values())
    assert observed["placed"] and observed["unschedulable"], observed
    assert shadow.proc.returncode == 0

    # What the shadow asked: lists and watches of what its informers watch, all allowed.
    theirs = [e for e in events if e.user == user]
    verbs = Counter(e.verb for e in theirs)
    assert verbs["list"] and verbs["watch"], verbs
    assert set(verbs) <= READ_VERBS, [e for e in theirs if e.verb not in READ_VERBS]
    refused = [e for e in theirs if e.decision != "allow" or e.code == 403]
    assert not refused, refused
    # Each informer of the configuration's profile (kube-scheduler's default: no custom kind).
    for verb in ("list", "watch"):
        asked = {(e.api_group, e.resource) for e in theirs if e.verb == verb}
        assert asked == watched_resources(custom=False), verb
    # The log catches writes: kube-scheduler's Bindings, as the admin.
    assert bindings(events, "admin") >= observed["placed"]

    # Nothing refused on the shadow's side either: no 403 answered, no write attempted.
    codes = rest_client_codes(metrics)
    assert codes["200"] and "403" not in codes, codes
    assert REFUSED not in shadow.log.read_text()


def bindings(events: list[AuditEvent], user: str) -> int:
    return sum(
        1 for e in events if e.user == user and e.verb == "create" and e.resource == "pods/binding"
    )
