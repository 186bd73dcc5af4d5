"""deploy/extender/: kube-scheduler with eventsched as its extender, in step with the code.

The overlay builds on deploy/base (namespace, ServiceAccount, RBAC, db-upgrade
Job, database Secret) and swaps the second scheduler for the extender
Deployment and its Service. The extender's arguments are parsed by the CLI's
own parser, both configurations by the configuration loader, and the
kube-scheduler configuration's urlPrefix must reach the Service.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import yaml

from eventsched.config.file import parse_config
from eventsched.plugins import full_registry
from tests.deploy.test_manifests import (
    BASE,
    DEPLOY,
    K8S_VERSION,
    KUSTOMIZATION,
    NAMESPACE,
    assert_database_url_from_secret,
    assert_hardened,
    cli_args,
    find,
    only_container,
    reachable,
)

EXTENDER = DEPLOY / "extender"


def rendered() -> list[dict[str, Any]]:
    assert shutil.which("kubectl"), "kubectl (with kustomize) is needed: apt-get install kubectl"
    out = subprocess.run(
        ["kubectl", "kustomize", str(EXTENDER)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def by_name(docs: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def embedded_config(kind_name: tuple[str, str]) -> dict[str, Any]:
    config = yaml.safe_load(find(*kind_name, under=EXTENDER)["data"]["config.yaml"])
    assert isinstance(config, dict)
    return config


def test_the_overlay_builds_on_the_base_and_swaps_the_scheduler_for_the_extender() -> None:
    docs = rendered()
    for doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        if doc["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
            assert doc["metadata"]["namespace"] == NAMESPACE, doc["metadata"]
        assert doc["metadata"]["labels"]["app.kubernetes.io/name"] == "eventsched"
    names = set(by_name(docs))
    # What the extender shares with deploy/: identity, access, schema migrations.
    for shared in [
        ("ServiceAccount", "eventsched"),
        ("ClusterRole", "eventsched"),
        ("ClusterRoleBinding", "eventsched"),
        ("Job", "eventsched-db-upgrade"),
    ]:
        assert shared in names
    assert {
        ("Deployment", "eventsched-extender"),
        ("Service", "eventsched-extender"),
        ("ConfigMap", "eventsched-extender-config"),
        ("ConfigMap", "kube-scheduler-extender-config"),
    } <= names
    # The second scheduler is not run beside the extender.
    assert not names & {
        ("Deployment", "eventsched"),
        ("Service", "eventsched-metrics"),
        ("ConfigMap", "eventsched-config"),
    }
    assert (EXTENDER / KUSTOMIZATION).is_file()
    assert {p for p in reachable(BASE)} <= reachable(EXTENDER)


def test_extender_deployment_runs_the_extender_command_with_the_shared_secret() -> None:
    deployment = find("Deployment", "eventsched-extender", under=EXTENDER)
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"]["type"] == "Recreate"
    spec = deployment["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == "eventsched"
    container = only_container(spec)
    assert_hardened(spec, container)
    assert_database_url_from_secret(container)
    args = cli_args(container)
    assert args.command == "extender"
    assert args.log_format == "json"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"https": args.secure_port}
    assert args.http_address is None  # no plain HTTP
    for probe, path in [
        ("startupProbe", "/healthz"),
        ("livenessProbe", "/healthz"),
        ("readinessProbe", "/readyz"),
    ]:
        # Anonymous over HTTPS: the probes are on --authorization-always-allow-paths.
        assert path in args.authorization_always_allow_paths.split(",")
        assert container[probe]["httpGet"] == {"path": path, "port": "https", "scheme": "HTTPS"}
    # The serving pair and the client CA come from the Secret the operator makes.
    files = [args.tls_cert_file, args.tls_private_key_file, args.client_ca_file]
    (tls_dir,) = {str(PurePosixPath(f).parent) for f in files}
    (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == tls_dir]
    volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
    assert volume["secret"]["secretName"] == "eventsched-extender-tls"
    assert [PurePosixPath(f).name for f in files] == ["tls.crt", "tls.key", "client-ca.crt"]
    # The configuration is mounted where --config points, from the extender's ConfigMap.
    config = PurePosixPath(args.config)
    (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == str(config.parent)]
    volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
    assert volume["configMap"]["name"] == "eventsched-extender-config"
    assert config.name in find("ConfigMap", "eventsched-extender-config", under=EXTENDER)["data"]
    # Same image as the db-upgrade Job that migrates the schema it writes to.
    job = only_container(
        find("Job", "eventsched-db-upgrade", under=BASE)["spec"]["template"]["spec"]
    )
    assert container["image"] == job["image"]


def test_extender_service_selects_the_extender_and_is_scraped() -> None:
    service = find("Service", "eventsched-extender", under=EXTENDER)
    template = find("Deployment", "eventsched-extender", under=EXTENDER)["spec"]["template"]
    assert service["spec"]["selector"].items() <= template["metadata"]["labels"].items()
    (port,) = service["spec"]["ports"]
    container = only_container(template["spec"])
    assert port["targetPort"] in {p["name"] for p in container["ports"]}
    assert service["metadata"]["annotations"]["prometheus.io/port"] == str(port["port"])
    assert service["metadata"]["annotations"]["prometheus.io/path"] == "/metrics"
    assert service["metadata"]["annotations"]["prometheus.io/scheme"] == "https"


def test_the_served_profile_loads() -> None:
    config = embedded_config(("ConfigMap", "eventsched-extender-config"))
    loaded = parse_config(config, "deploy/extender/configmap.yaml", full_registry())
    assert loaded.profiles
    assert "NodeLabel" in loaded.profiles[0].plugin_names()


def test_kube_scheduler_configuration_calls_the_extender_service() -> None:
    config = embedded_config(("ConfigMap", "kube-scheduler-extender-config"))
    # eventsched's loader applies kube-scheduler's rules to extenders[] (validateExtenders).
    loaded = parse_config(config, "deploy/extender/kube-scheduler-config.yaml", full_registry())
    (extender,) = loaded.extenders
    assert (extender.filter_verb, extender.prioritize_verb, extender.bind_verb) == (
        "filter",
        "prioritize",
        "bind",
    )
    assert extender.weight > 0
    assert extender.node_cache_capable
    url = urlsplit(extender.url_prefix)
    service = find("Service", "eventsched-extender", under=EXTENDER)
    assert url.scheme == "https"
    assert url.hostname == f"{service['metadata']['name']}.{NAMESPACE}.svc"
    # kube-scheduler trusts the serving certificate's CA and presents its client
    # certificate; serverName stays right when urlPrefix is changed to the cluster IP.
    tls = extender.tls_config
    assert tls["serverName"] == url.hostname
    assert {"caFile", "certFile", "keyFile"} <= tls.keys()
    assert not tls.get("insecure")
    assert url.port == service["spec"]["ports"][0]["port"]
    # The extender answers on any path ending in the verb; urlPrefix's path is "/".
    assert url.path in ("", "/")
