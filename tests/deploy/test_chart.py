"""deploy/charts/eventsched/: the Helm chart, rendered by Helm's own template engine.

Rendering uses helm-python-sdk (`import helm_python`, a test dependency): bindings over
Helm's Go SDK (v4.2), shipped on PyPI as a wheel with the native library, so the chart is
rendered by the engine `helm template` runs (Go's text/template, Sprig, Helm's include/tpl/
toYaml/.Files, its values coalescing), not by a re-implementation. Helm v4 renders
apiVersion v2 charts as Helm 3 does; the chart uses nothing Helm 3 lacks.

What is checked:

- with default values, release `eventsched` in namespace `eventsched`, the chart renders
  exactly the objects of `kubectl kustomize deploy/`: same keys, same specs, same labels;
- crds/ holds deploy/crds' files unchanged, files/readonly-role.sql deploy/base's;
- `helm lint --strict` finds nothing, with default values and with every option on;
- the values scheduler-plugins' `as-a-second-scheduler` chart has reach the same places,
  and its default profile renders the configuration that chart renders;
- another release name and namespace reach every name, namespace and reference;
- every rendered object validates against the Kubernetes schemas and, with a real
  kube-apiserver (EVENTSCHED_KUBE_BIN), is accepted by a server-side dry run; so is the
  kustomize base. Each pod template is also dry-run as a Pod in a namespace labelled as the
  rendered Namespace (Pod Security admission enforces `restricted` on Pods, not on
  Deployments or Jobs).
"""

from __future__ import annotations

import copy
import difflib
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

import eventsched
from eventsched.config.file import parse_config
from eventsched.plugins import full_registry
from tests.deploy.test_manifests import (
    BASE,
    DEMO,
    DEPLOY,
    IMAGE_REPOSITORY,
    K8S_VERSION,
    KUSTOMIZATION,
    NAMESPACE,
    assert_database_url_from_secret,
    assert_hardened,
    cli_args,
    only_container,
)
from tests.differential.schedplugins.profile import CHART_CONFIG
from tests.kube.realserver import RealApiServer, real_binaries

CHART = DEPLOY / "charts" / "eventsched"
CRDS = DEPLOY / "crds"
RELEASE = "eventsched"

#: Every optional object on, in another release and namespace.
OTHER_RELEASE = "prod"
OTHER_NAMESPACE = "sched-system"
ALL_ON: dict[str, Any] = {
    "scheduler": {
        "name": "batch-scheduler",
        "image": "registry.example.com/eventsched:dev",
        "imagePullPolicy": "Always",
        "imagePullSecrets": [{"name": "registry"}],
        "replicaCount": 3,
        "nodeSelector": {"node-role.kubernetes.io/control-plane": ""},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}
                            ]
                        }
                    ]
                }
            }
        },
        "tolerations": [
            {
                "key": "node-role.kubernetes.io/control-plane",
                "operator": "Exists",
                "effect": "NoSchedule",
            }
        ],
        "resources": {"requests": {"cpu": "1", "memory": "512Mi"}, "limits": {"memory": "2Gi"}},
        "priorityClassName": "system-cluster-critical",
        "podAnnotations": {"example.com/team": "platform"},
    },
    "plugins": {
        "enabled": ["Coscheduling", {"name": "NodeLabel", "weight": 3}],
        "disabled": ["PrioritySort"],
    },
    "pluginConfig": [
        {"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}},
        {"name": "NodeLabel", "args": {"requiredLabels": ["disk"], "scoreLabel": "tier"}},
    ],
    "database": {"url": "postgresql://eventsched:secret@db.example:5432/eventsched"},
    "dbUpgrade": {"hook": True},
    "readonlyRole": {"enabled": True},
    "metrics": {
        "serviceMonitor": {"enabled": True, "labels": {"release": "monitoring"}},
        "dashboard": {"enabled": True, "annotations": {"grafana_folder": "Kubernetes"}},
        "prometheusRule": {"enabled": True, "labels": {"release": "monitoring"}},
    },
    "ui": {
        "enabled": True,
        "database": {"secretName": "reader-url"},
        "nodeSelector": {"kubernetes.io/os": "linux"},
    },
}


# -- rendering ------------------------------------------------------------------------------


def render(
    values: dict[str, Any] | None = None, *, name: str = RELEASE, namespace: str = NAMESPACE
) -> list[dict[str, Any]]:
    """The chart's templates rendered as `helm template NAME deploy/charts/eventsched
    --namespace NAMESPACE -f values` renders them (without crds/), as objects."""
    with helm.Chart.load(CHART) as chart:
        manifests = chart.render(values or {}, name=name, namespace=namespace, is_install=True)
    docs: list[dict[str, Any]] = []
    for path in sorted(manifests):
        if path.endswith((".yaml", ".yml")):
            docs += [d for d in yaml.safe_load_all(manifests[path]) if d is not None]
    return docs


def kustomize(directory: Path) -> list[dict[str, Any]]:
    assert shutil.which("kubectl"), "kubectl (with kustomize) is needed: apt-get install kubectl"
    out = subprocess.run(
        ["kubectl", "kustomize", str(directory)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d]


Key = tuple[str, str, str, str]


def key(doc: dict[str, Any]) -> Key:
    meta = doc["metadata"]
    return (doc["apiVersion"], doc["kind"], meta.get("namespace", ""), meta["name"])


def by_key(docs: list[dict[str, Any]]) -> dict[Key, dict[str, Any]]:
    keyed = {key(d): d for d in docs}
    assert len(keyed) == len(docs), "two objects with the same kind, namespace and name"
    return keyed


def one(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and name in (None, d["metadata"]["name"])]
    assert len(found) == 1, f"{kind} {name}: {len(found)} rendered"
    return found[0]


def config_of(docs: list[dict[str, Any]]) -> dict[str, Any]:
    cm = next(d for d in docs if d["kind"] == "ConfigMap" and "config.yaml" in d["data"])
    config = yaml.safe_load(cm["data"]["config.yaml"])
    assert isinstance(config, dict)
    return config


# -- 1. default values: the kustomize base ----------------------------------------------


def assert_same_objects(
    chart: dict[Key, dict[str, Any]], base: dict[Key, dict[str, Any]], source: str
) -> None:
    assert sorted(chart) == sorted(base)
    for k, want in base.items():
        got = chart[k]
        if got != want:
            diff = difflib.unified_diff(
                yaml.safe_dump(want, sort_keys=True).splitlines(),
                yaml.safe_dump(got, sort_keys=True).splitlines(),
                source,
                "chart",
                lineterm="",
            )
            pytest.fail(f"{k} differs:\n" + "\n".join(diff))


def test_default_values_render_the_kustomize_base_object_for_object() -> None:
    assert_same_objects(by_key(render()), by_key(kustomize(DEPLOY)), "kubectl kustomize deploy/")


def test_ui_enabled_renders_the_ui_overlay_object_for_object() -> None:
    """`ui.enabled: true` adds what `kubectl kustomize deploy/ui` adds to deploy/: the web
    page's Deployment and Service."""
    assert_same_objects(
        by_key(render({"ui": {"enabled": True}})),
        by_key(kustomize(DEPLOY / "ui")),
        "kubectl kustomize deploy/ui",
    )


def test_the_comparison_sees_a_difference() -> None:
    """Guards the comparison above: a changed value is a different object."""
    changed = render({"scheduler": {"replicaCount": 1}})
    base = by_key(kustomize(DEPLOY))
    assert by_key(changed) != base


def test_crds_are_deploy_crds_unchanged() -> None:
    listed = yaml.safe_load((CRDS / KUSTOMIZATION).read_text())["resources"]
    shipped = sorted(p.name for p in (CHART / "crds").iterdir())
    assert shipped == sorted(listed)
    for name in shipped:
        assert (CHART / "crds" / name).read_bytes() == (CRDS / name).read_bytes(), name
    # Helm finds them where it installs CRDs from (before the templates, never upgraded).
    with helm.Chart.load(CHART) as chart:
        assert sorted(c["filename"] for c in chart.crds) == [
            f"eventsched/crds/{n}" for n in shipped
        ]


def test_readonly_role_sql_is_deploy_base_s() -> None:
    sql = (BASE / "readonly-role.sql").read_text()
    assert (CHART / "files" / "readonly-role.sql").read_text() == sql
    docs = render({"readonlyRole": {"enabled": True}})
    assert one(docs, "ConfigMap", "eventsched-readonly-role")["data"]["readonly-role.sql"] == sql


def test_chart_metadata_follows_the_release() -> None:
    meta = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert meta["apiVersion"] == "v2"
    assert meta["name"] == "eventsched"
    assert meta["appVersion"] == eventsched.__version__
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["scheduler"]["image"] == f"{IMAGE_REPOSITORY}:{eventsched.__version__}"


@pytest.mark.parametrize("values", [{}, ALL_ON], ids=["defaults", "all-on"])
def test_helm_lint_strict_finds_nothing(values: dict[str, Any]) -> None:
    report = helm.lint(CHART, values, strict=True, namespace=NAMESPACE, kube_version="v1.28.0")
    assert report["errors"] == [], report
    # Severity 1 is "info" (Helm's recommendation of an icon); warnings and errors fail.
    assert [m for m in report["messages"] if m["severity"] > 1] == [], report


# -- 2. values shaped like scheduler-plugins' chart ------------------------------------


def test_values_have_scheduler_plugins_chart_keys() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    for k in ("name", "image", "replicaCount", "leaderElect", "nodeSelector", "affinity"):
        assert k in values["scheduler"], k
    for k in ("tolerations", "resources", "priorityClassName"):
        assert k in values["scheduler"], k
    assert set(values["plugins"]) == {"enabled", "disabled"}
    assert values["pluginConfig"] == []


def test_scheduler_plugins_chart_profile_renders_as_that_chart_renders_it() -> None:
    """scheduler-plugins v0.28.9's default plugins and pluginConfig, given as values, give
    the profile that chart's configmap.yaml renders (tests/differential/schedplugins)."""
    upstream = yaml.safe_load(CHART_CONFIG)
    (want,) = upstream["profiles"]
    values = {
        "scheduler": {"name": want["schedulerName"]},
        "plugins": {
            "enabled": [p["name"] for p in want["plugins"]["multiPoint"]["enabled"]],
            "disabled": [p["name"] for p in want["plugins"]["multiPoint"]["disabled"]],
        },
        "pluginConfig": want["pluginConfig"],
    }
    config = config_of(render(values))
    (got,) = config["profiles"]
    assert got == want
    loaded = parse_config(config, "chart", full_registry())
    assert list(loaded.scheduler_names) == [want["schedulerName"]]


def test_plugin_weights_and_the_profile_load() -> None:
    docs = render(ALL_ON, name=OTHER_RELEASE, namespace=OTHER_NAMESPACE)
    config = config_of(docs)
    (profile,) = config["profiles"]
    assert profile["schedulerName"] == "batch-scheduler"
    assert profile["plugins"] == {
        "multiPoint": {
            "enabled": [{"name": "Coscheduling"}, {"name": "NodeLabel", "weight": 3}],
            "disabled": [{"name": "PrioritySort"}],
        }
    }
    assert profile["pluginConfig"] == ALL_ON["pluginConfig"]
    loaded = parse_config(config, "chart", full_registry())
    assert list(loaded.scheduler_names) == ["batch-scheduler"]
    assert loaded.leader_election.leader_elect is True
    assert loaded.leader_election.resource_namespace == OTHER_NAMESPACE


def test_leader_elect_false_reaches_the_configuration() -> None:
    config = config_of(render({"scheduler": {"leaderElect": False, "replicaCount": 1}}))
    assert config["leaderElection"]["leaderElect"] is False
    assert parse_config(config, "chart", full_registry()).leader_election.leader_elect is False


def test_scheduling_values_reach_the_pods() -> None:
    docs = render(ALL_ON, name=OTHER_RELEASE, namespace=OTHER_NAMESPACE)
    s = ALL_ON["scheduler"]
    deployment = one(docs, "Deployment", f"{OTHER_RELEASE}-eventsched")
    assert deployment["spec"]["replicas"] == 3
    spec = deployment["spec"]["template"]["spec"]
    for field in ("nodeSelector", "affinity", "tolerations", "priorityClassName"):
        assert spec[field] == s[field], field
    assert spec["imagePullSecrets"] == s["imagePullSecrets"]
    assert deployment["spec"]["template"]["metadata"]["annotations"] == s["podAnnotations"]
    container = only_container(spec)
    assert container["image"] == s["image"]
    assert container["imagePullPolicy"] == "Always"
    assert container["resources"] == s["resources"]
    assert_hardened(spec, container)
    assert cli_args(container).command == "run"
    job = one(docs, "Job", "prod-eventsched-db-upgrade")["spec"]["template"]["spec"]
    assert only_container(job)["image"] == s["image"]
    assert cli_args(only_container(job)).db_command == "upgrade"
    assert_hardened(job, only_container(job))
    assert job["nodeSelector"] == s["nodeSelector"]
    assert job["tolerations"] == s["tolerations"]


# -- 3. another release, another namespace ----------------------------------------------


def namespaces_in(value: Any) -> Iterator[str]:
    """Every `namespace` field, at any depth (metadata, subjects, ...)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "namespace" and isinstance(v, str):
                yield v
            else:
                yield from namespaces_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from namespaces_in(v)


def test_release_name_and_namespace_reach_every_name_and_reference() -> None:
    docs = render(ALL_ON, name=OTHER_RELEASE, namespace=OTHER_NAMESPACE)
    prefix = f"{OTHER_RELEASE}-eventsched"
    for doc in docs:
        name = doc["metadata"]["name"]
        if doc["kind"] == "Namespace":
            assert name == OTHER_NAMESPACE
        else:
            assert name == prefix or name.startswith(prefix + "-"), (doc["kind"], name)
    assert set(namespaces_in(docs)) == {OTHER_NAMESPACE}
    config = config_of(docs)
    assert config["leaderElection"]["resourceName"] == prefix
    assert config["leaderElection"]["resourceNamespace"] == OTHER_NAMESPACE

    sa = one(docs, "ServiceAccount", f"{prefix}")["metadata"]["name"]
    deployment = one(docs, "Deployment", f"{OTHER_RELEASE}-eventsched")
    spec = deployment["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == sa
    for binding in ("ClusterRoleBinding", "RoleBinding"):
        b = one(docs, binding, prefix if binding == "ClusterRoleBinding" else None)
        assert b["subjects"] == [
            {"kind": "ServiceAccount", "name": sa, "namespace": OTHER_NAMESPACE}
        ]
        role = one(docs, b["roleRef"]["kind"], b["roleRef"]["name"])
        assert b["roleRef"]["name"] == role["metadata"]["name"]
    delegator = one(docs, "ClusterRoleBinding", f"{prefix}-auth-delegator")
    assert delegator["roleRef"]["name"] == "system:auth-delegator"
    assert delegator["subjects"] == [
        {"kind": "ServiceAccount", "name": sa, "namespace": OTHER_NAMESPACE}
    ]
    volume = next(v for v in spec["volumes"] if v["name"] == "config")
    assert one(docs, "ConfigMap", volume["configMap"]["name"])["data"]["config.yaml"]

    # The database Secret the chart creates is the one both workloads read.
    secret = one(docs, "Secret")
    assert secret["metadata"]["name"] == f"{prefix}-database"
    assert secret["stringData"] == {"url": ALL_ON["database"]["url"]}
    for kind, name in [("Deployment", prefix), ("Job", f"{prefix}-db-upgrade")]:
        container = only_container(one(docs, kind, name)["spec"]["template"]["spec"])
        env = {e["name"]: e for e in container["env"]}
        assert env["EVENTSCHED_DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {
            "name": f"{prefix}-database",
            "key": "url",
        }

    # The metrics Service and the ServiceMonitor find the scheduler pods.
    service = one(docs, "Service", f"{prefix}-metrics")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    monitor = one(docs, "ServiceMonitor")
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    assert monitor["metadata"]["labels"]["release"] == "monitoring"
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [OTHER_NAMESPACE]}

    # The web page: its Service finds its pods (not the scheduler's), which read the
    # read-only role's Secret and mount the scheduler's configuration for what-if.
    ui = one(docs, "Deployment", f"{prefix}-ui")
    ui_service = one(docs, "Service", f"{prefix}-ui")
    ui_labels = ui["spec"]["template"]["metadata"]["labels"]
    assert ui_service["spec"]["selector"].items() <= ui_labels.items()
    assert not ui_service["spec"]["selector"].items() <= labels.items()
    ui_spec = ui["spec"]["template"]["spec"]
    env = {e["name"]: e for e in only_container(ui_spec)["env"]}
    assert env["EVENTSCHED_DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {
        "name": "reader-url",
        "key": "url",
    }
    assert ui_spec["nodeSelector"] == {"kubernetes.io/os": "linux"}
    ui_config = next(v for v in ui_spec["volumes"] if v["name"] == "config")
    assert ui_config == volume
    # Its own ServiceAccount, allowed the token and access reviews.
    assert one(docs, "ServiceAccount", ui_spec["serviceAccountName"])
    ui_delegator = one(docs, "ClusterRoleBinding", f"{prefix}-ui-auth-delegator")
    assert ui_delegator["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": ui_spec["serviceAccountName"],
            "namespace": OTHER_NAMESPACE,
        }
    ]
    ports = {p["name"] for p in service["spec"]["ports"]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert (endpoint["port"], endpoint["scheme"]) == ("https-metrics", "https")
    assert endpoint["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    assert "https-metrics" in ports


def test_an_existing_database_secret_is_referenced_not_created() -> None:
    docs = render({"database": {"secretName": "my-db", "secretKey": "dsn"}})
    assert not [d for d in docs if d["kind"] == "Secret"]
    deployment = one(docs, "Deployment", "eventsched")
    env = {e["name"]: e for e in only_container(deployment["spec"]["template"]["spec"])["env"]}
    assert env["EVENTSCHED_DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {
        "name": "my-db",
        "key": "dsn",
    }


def test_optional_objects_follow_their_switches() -> None:
    kinds = {(d["kind"], d["metadata"]["name"]) for d in render()}
    assert ("Service", "eventsched-metrics") in kinds
    assert not {k for k, _ in kinds} & {"Secret", "ServiceMonitor", "PrometheusRule"}
    assert ("ConfigMap", "eventsched-dashboard") not in kinds
    assert ("Job", "eventsched-readonly-role") not in kinds
    off = render(
        {
            "namespace": {"create": False},
            "dbUpgrade": {"enabled": False},
            "metrics": {"service": {"enabled": False}},
        }
    )
    assert not {d["kind"] for d in off} & {"Namespace", "Job", "Service"}
    job = one(render(), "Job", "eventsched-db-upgrade")
    assert "annotations" not in job["metadata"]
    hook = one(render({"dbUpgrade": {"hook": True}}), "Job", "eventsched-db-upgrade")
    assert hook["metadata"]["annotations"] == {
        "helm.sh/hook": "post-install,post-upgrade",
        "helm.sh/hook-delete-policy": "before-hook-creation",
    }
    with pytest.raises(helm.HelmRenderError, match=r"needs metrics\.service\.enabled"):
        render({"metrics": {"service": {"enabled": False}, "serviceMonitor": {"enabled": True}}})


def test_the_readonly_role_job_runs_the_sql_as_the_database_owner() -> None:
    docs = render({"readonlyRole": {"enabled": True}})
    job = one(docs, "Job", "eventsched-readonly-role")
    spec = job["spec"]["template"]["spec"]
    container = only_container(spec)
    assert_hardened(spec, container)
    assert_database_url_from_secret(container)
    assert container["command"][0] == "psql"
    assert container["args"] == ["$(EVENTSCHED_DATABASE_URL)"]
    sql_path = container["command"][container["command"].index("--file") + 1]
    mount = next(m for m in container["volumeMounts"] if sql_path.startswith(m["mountPath"] + "/"))
    volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
    cm = one(docs, "ConfigMap", volume["configMap"]["name"])
    assert sql_path.rsplit("/", 1)[1] in cm["data"]


# -- 4. valid Kubernetes, and accepted by a real API server -------------------------------


RENDERINGS = {
    "defaults": lambda: render(),
    "all-on": lambda: render(ALL_ON, name=OTHER_RELEASE, namespace=OTHER_NAMESPACE),
}


@pytest.mark.parametrize("rendering", sorted(RENDERINGS))
def test_rendered_objects_validate_against_the_kubernetes_schema(rendering: str) -> None:
    for doc in RENDERINGS[rendering]():
        if doc["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # a custom resource: the dry run below checks it against its CRD
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


needs_real_server = pytest.mark.skipif(
    real_binaries() is None, reason="needs kube-apiserver v1.28 (EVENTSCHED_KUBE_BIN)"
)

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
FIELD_MANAGER = "eventsched-tests"

#: A ServiceMonitor CRD written for this test (prometheus-operator's own is not shipped
#: here): monitoring.coreos.com/v1, with the fields the chart writes typed and every other
#: field refused by strict field validation, so a misspelt field fails the dry run.
SERVICE_MONITOR_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "servicemonitors.monitoring.coreos.com"},
    "spec": {
        "group": "monitoring.coreos.com",
        "names": {
            "kind": "ServiceMonitor",
            "listKind": "ServiceMonitorList",
            "plural": "servicemonitors",
            "singular": "servicemonitor",
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["endpoints", "selector"],
                                "properties": {
                                    "selector": {
                                        "type": "object",
                                        "properties": {
                                            "matchLabels": {
                                                "type": "object",
                                                "additionalProperties": {"type": "string"},
                                            }
                                        },
                                    },
                                    "namespaceSelector": {
                                        "type": "object",
                                        "properties": {
                                            "matchNames": {
                                                "type": "array",
                                                "items": {"type": "string"},
                                            }
                                        },
                                    },
                                    "endpoints": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {
                                                **{
                                                    name: {"type": "string"}
                                                    for name in (
                                                        "port",
                                                        "scheme",
                                                        "path",
                                                        "interval",
                                                        "scrapeTimeout",
                                                        "bearerTokenFile",
                                                    )
                                                },
                                                "tlsConfig": {
                                                    "type": "object",
                                                    "properties": {
                                                        "insecureSkipVerify": {"type": "boolean"}
                                                    },
                                                },
                                            },
                                        },
                                    },
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}

#: prometheus-operator's PrometheusRule, as small: the fields eventsched's rules use typed,
#: any other refused by strict field validation.
PROMETHEUS_RULE_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "prometheusrules.monitoring.coreos.com"},
    "spec": {
        "group": "monitoring.coreos.com",
        "names": {
            "kind": "PrometheusRule",
            "listKind": "PrometheusRuleList",
            "plural": "prometheusrules",
            "singular": "prometheusrule",
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "groups": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["name", "rules"],
                                            "properties": {
                                                "name": {"type": "string"},
                                                "interval": {"type": "string"},
                                                "rules": {
                                                    "type": "array",
                                                    "items": {
                                                        "type": "object",
                                                        "required": ["expr"],
                                                        "properties": {
                                                            "alert": {"type": "string"},
                                                            "record": {"type": "string"},
                                                            "expr": {
                                                                "x-kubernetes-int-or-string": True
                                                            },
                                                            "for": {"type": "string"},
                                                            "labels": {
                                                                "type": "object",
                                                                "additionalProperties": {
                                                                    "type": "string"
                                                                },
                                                            },
                                                            "annotations": {
                                                                "type": "object",
                                                                "additionalProperties": {
                                                                    "type": "string"
                                                                },
                                                            },
                                                        },
                                                    },
                                                },
                                            },
                                        },
                                    }
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}


class DryRun:
    """Server-side apply with dryRun=All and strict field validation, as `kubectl apply
    --server-side --dry-run=server --validate=strict` sends it: nothing is stored."""

    def __init__(self, server: RealApiServer) -> None:
        self.server = server
        self._resources: dict[str, dict[str, tuple[str, bool]]] = {}

    def _resource(self, api_version: str, kind: str) -> tuple[str, bool]:
        """(plural, namespaced) from the server's discovery."""
        if api_version not in self._resources:
            prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            listed = self.server.call("GET", prefix)["resources"]
            self._resources[api_version] = {
                r["kind"]: (r["name"], r["namespaced"]) for r in listed if "/" not in r["name"]
            }
        return self._resources[api_version][kind]

    def path(self, doc: dict[str, Any], *, named: bool = True) -> str:
        api_version = doc["apiVersion"]
        plural, namespaced = self._resource(api_version, doc["kind"])
        path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        if namespaced:
            path += f"/namespaces/{doc['metadata']['namespace']}"
        path += f"/{plural}"
        return path + (f"/{doc['metadata']['name']}" if named else "")

    def apply(self, doc: dict[str, Any]) -> tuple[int, Any]:
        return self.server.request(
            "PATCH",
            self.path(doc),
            doc,
            content_type="application/apply-patch+yaml",
            query={
                "dryRun": "All",
                "fieldManager": FIELD_MANAGER,
                "fieldValidation": "Strict",
                "force": "true",
            },
        )

    def create(self, doc: dict[str, Any]) -> tuple[int, Any]:
        return self.server.request(
            "POST",
            self.path(doc, named=False),
            doc,
            query={"dryRun": "All", "fieldValidation": "Strict"},
        )


def pods_of(doc: dict[str, Any], namespace: str) -> list[dict[str, Any]]:
    """The Pods a workload's template makes, as a controller would create them."""
    if doc["kind"] not in ("Deployment", "StatefulSet", "Job"):
        return []
    template = copy.deepcopy(doc["spec"]["template"])
    # A StatefulSet's controller adds a volume per claim template.
    for claim in doc["spec"].get("volumeClaimTemplates", []):
        name = claim["metadata"]["name"]
        template["spec"].setdefault("volumes", []).append(
            {
                "name": name,
                "persistentVolumeClaim": {"claimName": f"{name}-{doc['metadata']['name']}-0"},
            }
        )
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{doc['metadata']['name']}-dry-run",
                "namespace": namespace,
                "labels": template["metadata"].get("labels", {}),
            },
            "spec": template["spec"],
        }
    ]


def assert_accepted(server: RealApiServer, docs: list[dict[str, Any]]) -> None:
    """Every object accepted by a dry run; every pod template accepted as a Pod under the
    rendered Namespace's Pod Security labels."""
    dry = DryRun(server)
    kinds = {d["kind"] for d in docs if d["apiVersion"].startswith("monitoring.coreos.com/")}
    for crd in (SERVICE_MONITOR_CRD, PROMETHEUS_RULE_CRD):
        if crd["spec"]["names"]["kind"] not in kinds:
            continue
        status, body = server.request("POST", CRD_PATH, crd)
        assert status in (201, 409), body
        name = crd["metadata"]["name"]

        def established(name: str = name) -> bool:
            status = server.call("GET", f"{CRD_PATH}/{name}").get("status") or {}
            return any(
                c["type"] == "Established" and c["status"] == "True"
                for c in status.get("conditions") or []
            )

        server.wait_for(established, timeout=30)
        dry._resources.pop("monitoring.coreos.com/v1", None)
    namespaces = [d for d in docs if d["kind"] == "Namespace"]
    for doc in namespaces:
        status, body = dry.apply(doc)
        assert status in (200, 201), (key(doc), body)
    # The objects of the release namespace need it to exist (the dry run above stored nothing).
    for namespace in {d["metadata"]["namespace"] for d in docs if "namespace" in d["metadata"]}:
        server.ensure_namespace(namespace)
    rejected = []
    for doc in docs:
        if doc["kind"] == "Namespace":
            continue
        status, body = dry.apply(doc)
        if status not in (200, 201):
            rejected.append(
                (key(doc), status, body.get("message") if isinstance(body, dict) else body)
            )
    assert not rejected, json.dumps(rejected, indent=1)

    # Pod Security admission judges Pods: each pod template, as a Pod, in a namespace of
    # its own that carries the rendered Namespace's labels (so `restricted` is enforced).
    (namespace_doc,) = namespaces
    scratch = f"{namespace_doc['metadata']['name']}-pod-security"
    status, body = server.request(
        "POST",
        "/api/v1/namespaces",
        {"metadata": {"name": scratch, "labels": namespace_doc["metadata"]["labels"]}},
    )
    assert status in (201, 409), body
    assert namespace_doc["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    pods = [pod for doc in docs for pod in pods_of(doc, scratch)]
    assert pods
    for pod in pods:
        status, body = dry.create(pod)
        assert status == 201, (pod["metadata"]["name"], json.dumps(body))
    # ... and a pod that breaks `restricted` is refused there, so the check above means something.
    escalating = copy.deepcopy(pods[0])
    escalating["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = True
    status, body = dry.create(escalating)
    assert status == 403 and "restricted" in body["message"], body


@pytest.fixture
def real_server(real_apiserver: RealApiServer) -> RealApiServer:
    return real_apiserver


@needs_real_server
@pytest.mark.parametrize("rendering", sorted(RENDERINGS))
def test_rendered_objects_are_accepted_by_the_real_api_server(
    rendering: str, real_server: RealApiServer
) -> None:
    assert_accepted(real_server, RENDERINGS[rendering]())


@needs_real_server
def test_chart_crds_are_accepted_by_the_real_api_server(real_server: RealApiServer) -> None:
    dry = DryRun(real_server)
    for path in sorted((CHART / "crds").iterdir()):
        status, body = dry.apply(yaml.safe_load(path.read_text()))
        assert status in (200, 201), (path.name, body)


@needs_real_server
@pytest.mark.parametrize("directory", [DEPLOY, DEMO], ids=["deploy", "demo"])
def test_kustomize_build_is_accepted_by_the_real_api_server(
    directory: Path, real_server: RealApiServer
) -> None:
    assert_accepted(real_server, kustomize(directory))


@needs_real_server
def test_the_dry_run_refuses_a_misspelt_field(real_server: RealApiServer) -> None:
    """Strict field validation: the dry runs above would catch a field the server ignores."""
    deployment = copy.deepcopy(one(render(), "Deployment"))
    deployment["spec"]["template"]["spec"]["containers"][0]["securityContxt"] = {}
    real_server.ensure_namespace(NAMESPACE)
    status, body = DryRun(real_server).apply(deployment)
    assert status >= 400 and "securityContxt" in body["message"], body
