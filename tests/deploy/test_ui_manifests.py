"""deploy/ui/: the optional overlay that adds `eventsched ui` beside the scheduler.

Rendered with kubectl's kustomize and validated strictly like the others; the
page's arguments are parsed by the CLI's own parser, it reads the read-only
role's Secret (never the scheduler's), its probes and Service reach the port it
listens on, and the scheduler's objects are exactly deploy/'s.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

from eventsched.cli.ui import READER_ROLE
from tests.deploy.test_manifests import (
    BASE,
    DEPLOY,
    K8S_VERSION,
    NAMESPACE,
    assert_hardened,
    cli_args,
    only_container,
    reachable,
)

UI = DEPLOY / "ui"
READONLY_SECRET = "eventsched-database-readonly"


def rendered(directory: Path) -> list[dict[str, Any]]:
    assert shutil.which("kubectl"), "kubectl (with kustomize) is needed: apt-get install kubectl"
    out = subprocess.run(
        ["kubectl", "kustomize", str(directory)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def by_name(docs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def test_the_overlay_renders_valid_objects_and_leaves_the_scheduler_alone() -> None:
    docs = rendered(UI)
    for doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        if doc["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
            assert doc["metadata"]["namespace"] == NAMESPACE, doc["metadata"]
        assert doc["metadata"]["labels"]["app.kubernetes.io/name"] == "eventsched"
    names = by_name(docs)
    base = by_name(rendered(DEPLOY))
    added = set(names) - set(base)
    assert added == {
        ("Deployment", "eventsched-ui"),
        ("Service", "eventsched-ui"),
        ("ServiceAccount", "eventsched-ui"),
        ("ClusterRoleBinding", "eventsched-ui-auth-delegator"),
    }
    for key, doc in base.items():
        assert names[key] == doc, f"{key} differs from deploy/'s"
    assert reachable(UI) == reachable(DEPLOY) | {
        (UI / "access.yaml").resolve(),
        (UI / "deployment.yaml").resolve(),
        (UI / "service.yaml").resolve(),
    }
    assert not (set(reachable(UI)) - set(reachable(DEPLOY))) & set(BASE.glob("*"))


def test_the_page_runs_hardened_as_the_read_only_role() -> None:
    docs = by_name(rendered(UI))
    deployment = docs[("Deployment", "eventsched-ui")]
    spec = deployment["spec"]["template"]["spec"]
    container = only_container(spec)
    assert_hardened(spec, container)
    # Its own account, allowed TokenReview and SubjectAccessReview only.
    assert spec["serviceAccountName"] == "eventsched-ui"
    assert spec.get("automountServiceAccountToken", True) is True
    delegator = docs[("ClusterRoleBinding", "eventsched-ui-auth-delegator")]
    assert delegator["roleRef"]["name"] == "system:auth-delegator"
    assert delegator["subjects"] == [
        {"kind": "ServiceAccount", "name": "eventsched-ui", "namespace": NAMESPACE}
    ]
    args = cli_args(container)
    assert args.command == "ui"
    assert not args.insecure_local and args.listen is None  # HTTPS, readers reviewed
    env = {e["name"]: e for e in container["env"]}
    assert env["EVENTSCHED_DATABASE_URL"]["valueFrom"] == {
        "secretKeyRef": {"name": READONLY_SECRET, "key": "url"}
    }
    assert READER_ROLE in (UI / "kustomization.yaml").read_text()
    # Listens where the probes and the Service point.
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"https": args.secure_port}
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"] == {
            "path": "/healthz",
            "port": "https",
            "scheme": "HTTPS",
        }
    service = docs[("Service", "eventsched-ui")]
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["targetPort"] == "https"
    # The what-if page offers the scheduler's own configuration, mounted read-only.
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert str(args.configs) in mounts and mounts[str(args.configs)]["readOnly"] is True
    volumes = {v["name"]: v for v in spec["volumes"]}
    config = volumes[mounts[str(args.configs)]["name"]]["configMap"]["name"]
    assert ("ConfigMap", config) in docs
