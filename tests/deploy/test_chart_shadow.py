"""The Helm chart's `shadow.enabled` and `scheduler.enabled`: deploy/shadow/, rendered by Helm.

Rendered with Helm's own engine as tests/deploy/test_chart.py renders the chart:

- `shadow.enabled` adds, object for object, what deploy/shadow/ adds to deploy/'s namespace
  and db-upgrade Job: the shadow's ServiceAccount, read-only ClusterRole and binding,
  configuration, Deployment and metrics Service; with `scheduler.enabled: false` as well,
  the release is exactly `kubectl kustomize deploy/shadow`;
- the values reach the shadow's objects (another release and namespace, its own
  configuration given as a file's text), and what needs the scheduler says so;
- the renderings validate, pass `helm lint --strict` and a server-side dry run on the real
  kube-apiserver, as the kustomize build of deploy/shadow/ does.
"""

from __future__ import annotations

from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

from eventsched.cli.shadow import shadowed_profiles
from eventsched.config.file import parse_config
from eventsched.plugins import full_registry
from tests.deploy.test_chart import (
    CHART,
    OTHER_NAMESPACE,
    OTHER_RELEASE,
    Key,
    assert_accepted,
    assert_same_objects,
    by_key,
    kustomize,
    namespaces_in,
    needs_real_server,
    one,
    render,
)
from tests.deploy.test_manifests import (
    DEPLOY,
    K8S_VERSION,
    NAMESPACE,
    assert_hardened,
    cli_args,
    only_container,
)
from tests.kube.realserver import RealApiServer

SHADOW = DEPLOY / "shadow"
SHADOW_ONLY = {"scheduler": {"enabled": False}, "shadow": {"enabled": True}}

#: kube-scheduler's configuration with a profile of its own, as `--set-file` gives it.
THEIR_CONFIG = """\
# kube-scheduler's own, comments and all
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 50
profiles:
  - schedulerName: default-scheduler
  - schedulerName: batch
    plugins:
      score:
        disabled:
          - name: ImageLocality
"""

SHADOW_ALL_ON: dict[str, Any] = {
    "scheduler": {
        "enabled": False,
        "image": "registry.example.com/eventsched:dev",
        "imagePullSecrets": [{"name": "registry"}],
    },
    "database": {"secretName": "my-db", "secretKey": "dsn"},
    "shadow": {
        "enabled": True,
        "config": THEIR_CONFIG,
        "port": 10300,
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
        "priorityClassName": "system-cluster-critical",
        "podAnnotations": {"example.com/team": "platform"},
        "resources": {"requests": {"cpu": "1", "memory": "512Mi"}, "limits": {"memory": "2Gi"}},
    },
}


def shadow_objects() -> dict[Key, dict[str, Any]]:
    """What deploy/shadow/ adds to deploy/: its objects that deploy/ does not have."""
    base = by_key(kustomize(DEPLOY))
    return {k: d for k, d in by_key(kustomize(SHADOW)).items() if k not in base}


def test_shadow_enabled_adds_deploy_shadow_s_objects_to_deploy_s() -> None:
    added = shadow_objects()
    assert sorted(k[1] for k in added) == [
        "ClusterRole",
        "ClusterRoleBinding",
        "ClusterRoleBinding",
        "ConfigMap",
        "Deployment",
        "Service",
        "ServiceAccount",
    ]
    expected = {**by_key(kustomize(DEPLOY)), **added}
    assert_same_objects(
        by_key(render({"shadow": {"enabled": True}})),
        expected,
        "kubectl kustomize deploy/ + deploy/shadow's own",
    )


def test_without_the_scheduler_the_release_is_deploy_shadow_object_for_object() -> None:
    assert_same_objects(
        by_key(render(SHADOW_ONLY)), by_key(kustomize(SHADOW)), "kubectl kustomize deploy/shadow"
    )


def test_the_shadow_is_off_by_default_and_the_scheduler_on() -> None:
    kinds = {(d["kind"], d["metadata"]["name"]) for d in render()}
    assert not [name for _, name in kinds if "shadow" in name]
    assert ("Deployment", "eventsched") in kinds


def test_values_reach_the_shadow_in_another_release_and_namespace() -> None:
    docs = render(SHADOW_ALL_ON, name=OTHER_RELEASE, namespace=OTHER_NAMESPACE)
    prefix = f"{OTHER_RELEASE}-eventsched"
    for doc in docs:
        name = doc["metadata"]["name"]
        assert name == OTHER_NAMESPACE if doc["kind"] == "Namespace" else name.startswith(prefix)
    assert set(namespaces_in(docs)) == {OTHER_NAMESPACE}
    # No scheduler, and nothing that may write: the only role is the shadow's reads.
    assert {d["kind"] for d in docs} == {
        "Namespace",
        "Job",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "Deployment",
        "Service",
    }
    (role,) = [
        d
        for d in docs
        if d["kind"] == "ClusterRole" and d["metadata"]["name"] != f"{prefix}-metrics-reader"
    ]
    assert {v for rule in role["rules"] for v in rule["verbs"]} == {"get", "list", "watch"}
    account = one(docs, "ServiceAccount")["metadata"]["name"]
    binding = one(docs, "ClusterRoleBinding", f"{prefix}-shadow")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account, "namespace": OTHER_NAMESPACE}
    ]

    deployment = one(docs, "Deployment", f"{prefix}-shadow")
    template = deployment["spec"]["template"]
    spec = template["spec"]
    values = SHADOW_ALL_ON["shadow"]
    assert spec["serviceAccountName"] == account
    for field in ("nodeSelector", "tolerations", "priorityClassName"):
        assert spec[field] == values[field], field
    assert spec["imagePullSecrets"] == [{"name": "registry"}]
    assert template["metadata"]["annotations"] == values["podAnnotations"]
    container = only_container(spec)
    assert_hardened(spec, container)
    assert container["image"] == "registry.example.com/eventsched:dev"
    assert container["resources"] == values["resources"]
    env = {e["name"]: e for e in container["env"]}
    assert env["EVENTSCHED_DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {
        "name": "my-db",
        "key": "dsn",
    }
    args = cli_args(container)
    assert args.command == "shadow"
    assert (args.secure_port, args.http_address) == (10300, None)
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {"https": 10300}

    service = one(docs, "Service", f"{prefix}-shadow-metrics")
    assert service["spec"]["selector"].items() <= template["metadata"]["labels"].items()
    assert service["spec"]["ports"][0]["port"] == 10300
    assert service["metadata"]["annotations"]["prometheus.io/port"] == "10300"

    # The configuration is the file given, as written; the shadow loads its profiles.
    volume = next(v for v in spec["volumes"] if v["name"] == "config")
    configmap = one(docs, "ConfigMap", volume["configMap"]["name"])
    assert configmap["data"]["config.yaml"] == THEIR_CONFIG
    loaded = parse_config(yaml.safe_load(THEIR_CONFIG), "chart", full_registry())
    profiles = shadowed_profiles(loaded, ["default-scheduler", "batch"], from_file=True)
    assert "ImageLocality" not in profiles[1].plugin_names()


@pytest.mark.parametrize(
    ("needs", "values"),
    [
        ("ui.enabled", {"ui": {"enabled": True}}),
        ("metrics.serviceMonitor.enabled", {"metrics": {"serviceMonitor": {"enabled": True}}}),
        ("metrics.prometheusRule.enabled", {"metrics": {"prometheusRule": {"enabled": True}}}),
    ],
)
def test_what_needs_the_scheduler_says_so(needs: str, values: dict[str, Any]) -> None:
    with pytest.raises(helm.HelmRenderError, match=rf"{needs} needs scheduler\.enabled"):
        render({**SHADOW_ONLY, **values})


RENDERINGS = {
    "shadow-beside-scheduler": lambda: render({"shadow": {"enabled": True}}),
    "shadow-only-all-on": lambda: render(
        SHADOW_ALL_ON, name=OTHER_RELEASE, namespace=OTHER_NAMESPACE
    ),
}


@pytest.mark.parametrize("rendering", sorted(RENDERINGS))
def test_rendered_objects_validate_against_the_kubernetes_schema(rendering: str) -> None:
    for doc in RENDERINGS[rendering]():
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


@pytest.mark.parametrize("values", [SHADOW_ONLY, SHADOW_ALL_ON], ids=["shadow-only", "all-on"])
def test_helm_lint_strict_finds_nothing(values: dict[str, Any]) -> None:
    report = helm.lint(CHART, values, strict=True, namespace=NAMESPACE, kube_version="v1.28.0")
    assert report["errors"] == [], report
    assert [m for m in report["messages"] if m["severity"] > 1] == [], report


@needs_real_server
@pytest.mark.parametrize("rendering", sorted(RENDERINGS))
def test_rendered_objects_are_accepted_by_the_real_api_server(
    rendering: str, real_apiserver: RealApiServer
) -> None:
    assert_accepted(real_apiserver, RENDERINGS[rendering]())


@needs_real_server
def test_kustomize_build_is_accepted_by_the_real_api_server(
    real_apiserver: RealApiServer,
) -> None:
    assert_accepted(real_apiserver, kustomize(SHADOW))
