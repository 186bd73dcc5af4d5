"""deploy/shadow/: `eventsched shadow` beside kube-scheduler, read-only, in step with the code.

The overlay builds on deploy/base (namespace, db-upgrade Job, database Secret) and leaves
out the second scheduler and every grant that lets it write. Its ClusterRole is checked
against the code twice: it is the reads of REQUIRED_ACCESS (`read_access()`), and what it
lets list and watch is what the Kubernetes adapter's informers watch (the nodes, the pods,
`OBJECT_RESOURCES` and every custom kind a plugin may read). The Deployment's arguments
are parsed by the CLI's own parser and the configuration by the configuration loader.
tests/shadow/test_shadow_rbac.py runs the shadow under this role on a real API server.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import PurePosixPath
from typing import Any

import kubernetes_validate
import yaml

import eventsched
from eventsched.cli.shadow import shadowed_profiles
from eventsched.cluster.kube.access import READ_VERBS, REQUIRED_ACCESS, read_access
from eventsched.cluster.kube.adapter import OBJECT_RESOURCES
from eventsched.config.defaults import default_profile
from eventsched.config.file import parse_config
from eventsched.model.customkinds import CUSTOM_KINDS
from eventsched.plugins import full_registry
from tests.deploy.test_manifests import (
    BASE,
    DEPLOY,
    IMAGE_REPOSITORY,
    K8S_VERSION,
    KUSTOMIZATION,
    NAMESPACE,
    as_set,
    assert_database_url_from_secret,
    assert_hardened,
    cli_args,
    only_container,
    reachable,
    strings,
)

SHADOW = DEPLOY / "shadow"
ACCOUNT = "eventsched-shadow"

Docs = dict[tuple[str, str], dict[str, Any]]


def rendered(directory: Any = SHADOW) -> Docs:
    """`kubectl kustomize directory`, by (kind, name)."""
    assert shutil.which("kubectl"), "kubectl (with kustomize) is needed: apt-get install kubectl"
    out = subprocess.run(
        ["kubectl", "kustomize", str(directory)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    keyed = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    assert len(keyed) == len(docs)
    return keyed


def watched_resources(custom: bool = True) -> set[tuple[str, str]]:
    """(API group, plural) of every informer the adapter may start: nodes, pods, the kinds
    plugins read (OBJECT_RESOURCES), and (`custom`) each custom kind some plugin reads."""
    registry = full_registry()
    resources = ["nodes", "pods", *(r for r, _ in OBJECT_RESOURCES)]
    if custom:
        resources += [CUSTOM_KINDS[k].resource for k in registry.custom_kinds(list(registry))]
    watched = set()
    for resource in resources:
        parts = resource.split("/")
        # "plural" (core), or "group/version/plural".
        watched.add(("", parts[0]) if len(parts) == 1 else (parts[0], parts[2]))
    return watched


def test_the_overlay_keeps_the_base_s_database_and_leaves_out_the_scheduler() -> None:
    docs = rendered()
    for doc in docs.values():
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        if doc["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
            assert doc["metadata"]["namespace"] == NAMESPACE, doc["metadata"]
        assert doc["metadata"]["labels"]["app.kubernetes.io/name"] == "eventsched"
    assert set(docs) == {
        ("Namespace", NAMESPACE),
        ("Job", "eventsched-db-upgrade"),
        ("ServiceAccount", ACCOUNT),
        ("ClusterRole", ACCOUNT),
        ("ClusterRoleBinding", ACCOUNT),
        ("ClusterRoleBinding", f"{ACCOUNT}-auth-delegator"),
        ("ClusterRole", "eventsched-metrics-reader"),
        ("ConfigMap", "eventsched-shadow-config"),
        ("Deployment", "eventsched-shadow"),
        ("Service", "eventsched-shadow-metrics"),
    }
    # What it shares with deploy/ is deploy/'s, unchanged.
    deploy = rendered(DEPLOY)
    for shared in [("Namespace", NAMESPACE), ("Job", "eventsched-db-upgrade")]:
        assert docs[shared] == deploy[shared]
    assert (SHADOW / KUSTOMIZATION).is_file()
    assert reachable(BASE) <= reachable(SHADOW)


def test_the_cluster_role_is_the_scheduler_s_reads() -> None:
    role = rendered()[("ClusterRole", ACCOUNT)]
    expected = [
        {"apiGroups": [a.api_group], "resources": [a.resource], "verbs": sorted(a.verbs)}
        for a in read_access()
    ]
    assert as_set(role["rules"]) == as_set(expected)
    assert len(role["rules"]) == len(expected)
    for rule in role["rules"]:
        assert set(rule) == {"apiGroups", "resources", "verbs"}, rule
        assert rule["verbs"] == sorted(rule["verbs"]), rule
        assert set(rule["verbs"]) <= READ_VERBS, rule
    texts = list(strings(role["rules"]))
    assert not [t for t in texts if "*" in t]
    assert "secrets" not in texts
    # read_access() drops every write and the namespaced Lease, and nothing else.
    writes = {(a.api_group, a.resource) for a in REQUIRED_ACCESS if not READ_VERBS & set(a.verbs)}
    assert writes == {("", "pods/binding"), ("", "pods/status"), ("events.k8s.io", "events")}
    reads = {(a.api_group, a.resource) for a in read_access()}
    cluster_wide = {(a.api_group, a.resource) for a in REQUIRED_ACCESS if not a.own_namespace}
    assert reads == cluster_wide - writes


def test_the_cluster_role_lets_list_and_watch_exactly_what_the_informers_watch() -> None:
    role = rendered()[("ClusterRole", ACCOUNT)]
    listed = {
        (group, resource)
        for rule in role["rules"]
        if {"list", "watch"} <= set(rule["verbs"])
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    assert listed == watched_resources()
    assert ("topology.node.k8s.io", "noderesourcetopologies") in listed  # the custom kinds too
    # `get` only where the cluster reads one object: a volume, a claim, a node and its
    # CSINode (read_volume, read_claim, read_node, read_csi_node, which the shadow's
    # read-only cluster forwards).
    got = {
        (group, resource)
        for rule in role["rules"]
        if "get" in rule["verbs"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    assert got == {
        ("", "persistentvolumes"),
        ("", "persistentvolumeclaims"),
        ("", "nodes"),
        ("storage.k8s.io", "csinodes"),
    }


def test_the_role_is_bound_to_the_shadow_s_account_only() -> None:
    docs = rendered()
    spec = docs[("Deployment", "eventsched-shadow")]["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == ACCOUNT
    assert docs[("ServiceAccount", ACCOUNT)]["metadata"]["namespace"] == NAMESPACE
    binding = docs[("ClusterRoleBinding", ACCOUNT)]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": ACCOUNT,
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": ACCOUNT, "namespace": NAMESPACE}
    ]
    # No other grant: no Role (no Lease: the shadow elects no leader), no other binding.
    assert {kind for kind, _ in docs} & {"Role", "RoleBinding"} == set()
    # The HTTPS endpoints' TokenReview and SubjectAccessReview: system:auth-delegator.
    delegator = docs[("ClusterRoleBinding", f"{ACCOUNT}-auth-delegator")]
    assert delegator["roleRef"]["name"] == "system:auth-delegator"
    assert delegator["subjects"] == binding["subjects"]
    assert sorted(k for k in docs if k[0] == "ClusterRoleBinding") == [
        ("ClusterRoleBinding", ACCOUNT),
        ("ClusterRoleBinding", f"{ACCOUNT}-auth-delegator"),
    ]


def test_the_deployment_runs_one_hardened_shadow_with_the_shared_secret() -> None:
    docs = rendered()
    deployment = docs[("Deployment", "eventsched-shadow")]
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"]["type"] == "Recreate"
    spec = deployment["spec"]["template"]["spec"]
    assert spec["terminationGracePeriodSeconds"] >= 30
    container = only_container(spec)
    assert_hardened(spec, container)
    assert_database_url_from_secret(container)
    args = cli_args(container)
    assert args.command == "shadow"
    assert args.log_format == "json"
    assert args.db is None  # EVENTSCHED_DATABASE_URL, from the Secret
    assert args.kubeconfig is None  # the in-cluster ServiceAccount
    assert args.scheduler_name is None  # the configuration's profiles name them
    assert container["resources"]["requests"]["cpu"]
    assert container["resources"]["limits"]["memory"]
    # Same image as the db-upgrade Job that migrates the schema it writes to: the release.
    job = only_container(docs[("Job", "eventsched-db-upgrade")]["spec"]["template"]["spec"])
    assert container["image"] == job["image"] == f"{IMAGE_REPOSITORY}:{eventsched.__version__}"


def test_probes_and_metrics_reach_the_served_port() -> None:
    docs = rendered()
    template = docs[("Deployment", "eventsched-shadow")]["spec"]["template"]
    container = only_container(template["spec"])
    args = cli_args(container)
    port = args.secure_port
    assert port == 10259 and args.http_address is None
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["https"] == port
    for probe, path in [
        ("startupProbe", "/healthz"),
        ("livenessProbe", "/healthz"),
        ("readinessProbe", "/readyz"),
    ]:
        assert container[probe]["httpGet"] == {"path": path, "port": "https", "scheme": "HTTPS"}
    service = docs[("Service", "eventsched-shadow-metrics")]
    assert service["spec"]["selector"].items() <= template["metadata"]["labels"].items()
    (service_port,) = service["spec"]["ports"]
    assert service_port["targetPort"] == "https" and service_port["port"] == port
    annotations = service["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/scheme"] == "https"
    assert annotations["prometheus.io/port"] == str(port)
    assert annotations["prometheus.io/path"] == "/metrics"
    # Not the scheduler's pods (deploy/), nor the db-upgrade Job's.
    scheduler = rendered(DEPLOY)[("Deployment", "eventsched")]["spec"]["template"]
    job = docs[("Job", "eventsched-db-upgrade")]["spec"]["template"]
    for other in (scheduler, job):
        assert not service["spec"]["selector"].items() <= other["metadata"]["labels"].items()


def test_the_configuration_is_kube_scheduler_s_default_profile() -> None:
    docs = rendered()
    spec = docs[("Deployment", "eventsched-shadow")]["spec"]["template"]["spec"]
    container = only_container(spec)
    path = PurePosixPath(cli_args(container).config)
    (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == str(path.parent)]
    assert mount["readOnly"] is True
    volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
    configmap = docs[("ConfigMap", volume["configMap"]["name"])]
    assert configmap["metadata"]["name"] == "eventsched-shadow-config"
    config = yaml.safe_load(configmap["data"][path.name])
    registry = full_registry()
    loaded = parse_config(config, "deploy/shadow/configmap.yaml", registry)
    assert list(loaded.scheduler_names) == ["default-scheduler"]
    # The shadow reaches the API server with its ServiceAccount, not a kubeconfig path.
    assert loaded.client_connection.kubeconfig == ""
    # The profile the shadow decides default-scheduler's pods with: kube-scheduler's defaults.
    (profile,) = shadowed_profiles(loaded, ["default-scheduler"], from_file=True)
    assert profile.plugin_names() == default_profile().plugin_names()
    # ... which read no custom kind: the custom kinds' rules are unused until a profile
    # enables CapacityScheduling or NodeResourceTopologyMatch.
    assert not registry.custom_kinds(profile.plugin_names())
