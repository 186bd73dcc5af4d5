"""The manifests in deploy/ and the Dockerfile: valid, complete, and in step with the code.

Schema validation uses kubernetes-validate's bundled OpenAPI schemas of the
newest Kubernetes version it ships, in strict mode (unknown fields are errors).
The RBAC rules are compared with eventsched.cluster.kube.access.REQUIRED_ACCESS,
the Deployment's arguments and configuration are parsed by the CLI's own parser
and config loader, so a change on either side that the other does not follow
fails here.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml

import eventsched
from eventsched.cli.main import build_parser
from eventsched.cluster.kube.access import REQUIRED_ACCESS
from eventsched.config.file import parse_config
from eventsched.model.quantity import parse_milli
from eventsched.plugins import full_registry

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BASE = DEPLOY / "base"
DEMO = DEPLOY / "demo"
EXAMPLES = DEPLOY / "examples"
CHARTS = DEPLOY / "charts"
#: The dashboard and the alerts: no Kubernetes schema covers a PrometheusRule, and the rule
#: file is Prometheus', so tests/deploy/test_monitoring.py checks them (promtool, kustomize).
MONITORING = DEPLOY / "monitoring"
KUSTOMIZATION = "kustomization.yaml"

#: The newest Kubernetes version whose schemas kubernetes-validate bundles.
K8S_VERSION = kubernetes_validate.latest_version()

NAMESPACE = "eventsched"
IMAGE_REPOSITORY = "ghcr.io/eventsched/eventsched"
DATABASE_SECRET = "eventsched-database"


# -- loading ------------------------------------------------------------------------


def manifest_files() -> list[Path]:
    """Every YAML file under deploy/ except the kustomizations, the Helm chart (its
    templates are not YAML until rendered: tests/deploy/test_chart.py renders them) and
    deploy/monitoring (tests/deploy/test_monitoring.py)."""
    files = sorted(
        p
        for p in DEPLOY.rglob("*")
        if p.is_file()
        and p.suffix in (".yaml", ".yml")
        and p.name != KUSTOMIZATION
        and not p.is_relative_to(CHARTS)
        and not p.is_relative_to(MONITORING)
    )
    return files


def kustomization_files() -> list[Path]:
    return sorted(DEPLOY.rglob(KUSTOMIZATION))


def documents(path: Path) -> list[dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    for d in docs:
        assert isinstance(d, dict), f"{path}: a document is not a mapping: {d!r}"
    return docs


def all_documents(under: Path = DEPLOY) -> list[tuple[Path, dict[str, Any]]]:
    return [(p, d) for p in manifest_files() if p.is_relative_to(under) for d in documents(p)]


def find(kind: str, name: str, under: Path = DEPLOY) -> dict[str, Any]:
    found = [
        d for _, d in all_documents(under) if d["kind"] == kind and d["metadata"]["name"] == name
    ]
    assert len(found) == 1, (
        f"expected exactly one {kind} {name!r} under {under}, found {len(found)}"
    )
    return found[0]


def of_kind(kind: str, under: Path = DEPLOY) -> list[dict[str, Any]]:
    return [d for _, d in all_documents(under) if d["kind"] == kind]


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# -- 1. every manifest is valid Kubernetes ------------------------------------------


def _validation_cases() -> list[Any]:
    cases = []
    for path in manifest_files():
        for i, doc in enumerate(documents(path)):
            label = f"{rel(path)}#{i}:{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
            cases.append(pytest.param(path, doc, id=label))
    return cases


def test_the_deploy_directory_has_the_expected_objects() -> None:
    """Guards the parametrized validation below against silently validating nothing."""
    kinds = {(d["kind"], d["metadata"]["name"]) for _, d in all_documents()}
    expected = {
        ("Namespace", NAMESPACE),
        ("ServiceAccount", "eventsched"),
        ("ClusterRole", "eventsched"),
        ("ClusterRoleBinding", "eventsched"),
        ("Role", "eventsched-leader-election"),
        ("RoleBinding", "eventsched-leader-election"),
        ("ConfigMap", "eventsched-config"),
        ("Deployment", "eventsched"),
        ("Service", "eventsched-metrics"),
        ("Job", "eventsched-db-upgrade"),
        ("StatefulSet", "eventsched-postgres"),
        ("Service", "eventsched-postgres"),
        ("Pod", "hello"),
        ("Deployment", "eventsched-ui"),
        ("Service", "eventsched-ui"),
        ("ServiceAccount", "eventsched-shadow"),
        ("ClusterRole", "eventsched-shadow"),
        ("ClusterRoleBinding", "eventsched-shadow"),
        ("ConfigMap", "eventsched-shadow-config"),
        ("Deployment", "eventsched-shadow"),
        ("Service", "eventsched-shadow-metrics"),
    }
    assert expected <= kinds, f"missing: {sorted(expected - kinds)}"


@pytest.mark.parametrize(("path", "doc"), _validation_cases())
def test_manifest_validates_against_the_kubernetes_schema(path: Path, doc: dict[str, Any]) -> None:
    try:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        where = ".".join(str(p) for p in exc.path)
        pytest.fail(f"{rel(path)}: {where}: {exc.message} (Kubernetes {exc.version}, strict)")
    except kubernetes_validate.SchemaNotFoundError as exc:
        pytest.fail(f"{rel(path)}: {exc.message}")


def test_strict_validation_rejects_an_unknown_field() -> None:
    """The schema check above is strict: a misspelt field is an error, not ignored."""
    deployment = find("Deployment", "eventsched")
    broken = json.loads(json.dumps(deployment))
    broken["spec"]["template"]["spec"]["containers"][0]["securityContxt"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


# -- 2. the kustomizations list exactly the manifests --------------------------------


def kustomization_refs(path: Path) -> list[Path]:
    """The local files and directories a kustomization names."""
    k = yaml.safe_load(path.read_text())
    refs = list(k.get("resources", [])) + list(k.get("components", []))
    for patch in k.get("patches", []):
        if isinstance(patch, dict) and "path" in patch:
            refs.append(patch["path"])
    for gen in k.get("configMapGenerator", []) + k.get("secretGenerator", []):
        for entry in gen.get("files", []):
            refs.append(entry.split("=", 1)[-1])
        refs.extend(gen.get("envs", []))
    assert all(isinstance(r, str) and "://" not in r for r in refs), f"{rel(path)}: remote ref"
    return [(path.parent / r).resolve() for r in refs]


def reachable(directory: Path) -> set[Path]:
    """The manifest files a `kustomize build directory` reads, following bases."""
    found: set[Path] = set()
    for ref in kustomization_refs(directory / KUSTOMIZATION):
        if ref.is_dir():
            found |= reachable(ref)
        else:
            found.add(ref)
    return found


def test_kustomizations_exist_where_the_readme_applies_them() -> None:
    for directory in (DEPLOY, BASE, DEMO):
        assert (directory / KUSTOMIZATION).is_file(), f"{rel(directory)} has no kustomization"


@pytest.mark.parametrize("path", kustomization_files(), ids=rel)
def test_kustomization_lists_only_existing_files(path: Path) -> None:
    k = yaml.safe_load(path.read_text())
    assert k["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    assert k["kind"] == "Kustomization"
    for ref in kustomization_refs(path):
        if ref.is_dir():
            assert (ref / KUSTOMIZATION).is_file(), f"{rel(path)}: {ref} has no {KUSTOMIZATION}"
            # kustomize refuses a base whose directory contains the overlay ("cycle detected").
            assert not path.parent.resolve().is_relative_to(ref), (
                f"{rel(path)}: base {ref} contains this kustomization"
            )
        else:
            assert ref.is_file(), f"{rel(path)}: {ref} does not exist"


def test_every_manifest_outside_examples_is_in_a_kustomization() -> None:
    listed = {ref for k in kustomization_files() for ref in kustomization_refs(k)}
    unlisted = [
        rel(p)
        for p in manifest_files()
        if not p.is_relative_to(EXAMPLES) and p.resolve() not in listed
    ]
    assert not unlisted, f"not in any kustomization: {unlisted}"


def test_deploy_and_demo_build_on_the_same_base() -> None:
    base = {p.resolve() for p in manifest_files() if p.is_relative_to(BASE)}
    assert reachable(DEPLOY) == base
    assert reachable(DEMO) == base | {(DEMO / "postgres.yaml").resolve()}


def test_kustomizations_set_the_namespace_and_name_label() -> None:
    base = yaml.safe_load((BASE / KUSTOMIZATION).read_text())
    assert base["namespace"] == NAMESPACE
    assert any(
        entry.get("pairs", {}).get("app.kubernetes.io/name") == "eventsched"
        for entry in base.get("labels", [])
    )
    assert yaml.safe_load((DEMO / KUSTOMIZATION).read_text())["namespace"] == NAMESPACE


@pytest.mark.parametrize("directory", [DEPLOY, DEMO], ids=rel)
def test_kustomize_build_renders_valid_objects(directory: Path) -> None:
    # .ci/run installs kubectl where it is missing; a skipped build would hide a broken overlay.
    assert shutil.which("kubectl"), "kubectl (with kustomize) is needed: apt-get install kubectl"
    out = subprocess.run(
        ["kubectl", "kustomize", str(directory)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    assert docs
    for doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        if doc["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
            assert doc["metadata"]["namespace"] == NAMESPACE, doc["metadata"]
        assert doc["metadata"]["labels"]["app.kubernetes.io/name"] in ("eventsched", "postgresql")
    names = {(d["kind"], d["metadata"]["name"]) for d in docs}
    assert ("Deployment", "eventsched") in names
    assert (("Secret", DATABASE_SECRET) in names) == (directory == DEMO)


# -- 3. RBAC is exactly REQUIRED_ACCESS ----------------------------------------------


def expected_rules(own_namespace: bool) -> list[dict[str, Any]]:
    return [
        {"apiGroups": [a.api_group], "resources": [a.resource], "verbs": sorted(a.verbs)}
        for a in REQUIRED_ACCESS
        if a.own_namespace == own_namespace
    ]


def as_set(rules: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in rules)


def test_required_access_is_split_between_cluster_and_namespace() -> None:
    """Both roles have something to compare against; otherwise the checks below are vacuous."""
    assert expected_rules(own_namespace=False)
    assert expected_rules(own_namespace=True)


def test_cluster_role_is_exactly_the_required_access() -> None:
    rules = find("ClusterRole", "eventsched")["rules"]
    assert as_set(rules) == as_set(expected_rules(own_namespace=False))
    assert len(rules) == len(expected_rules(own_namespace=False))


def test_leader_election_role_is_exactly_the_namespaced_access() -> None:
    role = find("Role", "eventsched-leader-election")
    assert role["metadata"]["namespace"] == NAMESPACE
    assert as_set(role["rules"]) == as_set(expected_rules(own_namespace=True))
    assert len(role["rules"]) == len(expected_rules(own_namespace=True))


def test_rule_verbs_are_sorted() -> None:
    for role in of_kind("ClusterRole") + of_kind("Role"):
        for rule in role["rules"]:
            assert rule["verbs"] == sorted(rule["verbs"]), rule


def test_no_other_roles_and_no_wildcards_or_secrets() -> None:
    roles = of_kind("ClusterRole") + of_kind("Role")
    assert sorted(r["metadata"]["name"] for r in roles) == [
        "eventsched",
        "eventsched-leader-election",
        "eventsched-metrics-reader",  # for Prometheus to bind: get on /metrics, nothing else
        "eventsched-shadow",  # deploy/shadow/'s reads (tests/deploy/test_shadow_manifests.py)
    ]
    for role in roles:
        texts = list(strings(role["rules"]))
        assert not [t for t in texts if "*" in t], f"wildcard in {role['metadata']['name']}"
        assert "secrets" not in texts, f"secrets in {role['metadata']['name']}"
        for rule in role["rules"]:
            if role["metadata"]["name"] == "eventsched-metrics-reader":
                assert rule == {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}
            else:
                assert set(rule) == {"apiGroups", "resources", "verbs"}, rule


def test_bindings_grant_the_roles_to_the_scheduler_service_account() -> None:
    deployment = find("Deployment", "eventsched")
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    sa = find("ServiceAccount", account)
    subject = {"kind": "ServiceAccount", "name": account, "namespace": sa["metadata"]["namespace"]}

    crb = find("ClusterRoleBinding", "eventsched")
    assert crb["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "eventsched",
    }
    assert crb["subjects"] == [subject]

    rb = find("RoleBinding", "eventsched-leader-election")
    assert rb["metadata"]["namespace"] == NAMESPACE
    assert rb["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "eventsched-leader-election",
    }
    assert rb["subjects"] == [subject]
    # deploy/shadow/ binds its own role to its own account (test_shadow_manifests.py).
    # The HTTPS endpoints' TokenReview and SubjectAccessReview, as kube-scheduler's.
    delegator = find("ClusterRoleBinding", "eventsched-auth-delegator")
    assert delegator["roleRef"]["name"] == "system:auth-delegator"
    assert delegator["subjects"] == [subject]
    assert sorted(b["metadata"]["name"] for b in of_kind("ClusterRoleBinding", under=BASE)) == [
        "eventsched",
        "eventsched-auth-delegator",
    ]
    assert of_kind("RoleBinding") == [rb]


# -- 4. the Deployment, its configuration, the Job ------------------------------------


def pod_spec(kind: str, name: str) -> dict[str, Any]:
    return find(kind, name)["spec"]["template"]["spec"]


def only_container(spec: dict[str, Any]) -> dict[str, Any]:
    assert len(spec["containers"]) == 1
    return spec["containers"][0]


def effective(spec: dict[str, Any], container: dict[str, Any], key: str) -> Any:
    """A securityContext field as the kubelet applies it: the container's wins."""
    if key in container.get("securityContext", {}):
        return container["securityContext"][key]
    return spec.get("securityContext", {}).get(key)


def assert_hardened(spec: dict[str, Any], container: dict[str, Any]) -> None:
    assert effective(spec, container, "runAsNonRoot") is True
    assert effective(spec, container, "runAsUser") not in (None, 0)
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert "add" not in container["securityContext"]["capabilities"]
    assert effective(spec, container, "seccompProfile") == {"type": "RuntimeDefault"}
    assert not effective(spec, container, "privileged")
    # A read-only root needs a writable /tmp.
    volumes = {v["name"]: v for v in spec["volumes"]}
    tmp = [m for m in container["volumeMounts"] if m["mountPath"] == "/tmp"]
    assert len(tmp) == 1 and "emptyDir" in volumes[tmp[0]["name"]]


def assert_database_url_from_secret(container: dict[str, Any]) -> None:
    env = {e["name"]: e for e in container["env"]}
    assert env["EVENTSCHED_DATABASE_URL"]["valueFrom"] == {
        "secretKeyRef": {"name": DATABASE_SECRET, "key": "url"}
    }


def cli_args(container: dict[str, Any]) -> Any:
    assert "command" not in container, "the image's ENTRYPOINT (eventsched) must be used"
    return build_parser().parse_args(container["args"])


def scheduler_config() -> dict[str, Any]:
    cm = find("ConfigMap", "eventsched-config")
    config = yaml.safe_load(cm["data"]["config.yaml"])
    assert isinstance(config, dict)
    return config


def workload_pod_specs() -> list[tuple[str, dict[str, Any]]]:
    specs = [(f"Pod/{d['metadata']['name']}", d["spec"]) for d in of_kind("Pod")]
    for kind in ("Deployment", "StatefulSet", "Job"):
        specs += [
            (f"{kind}/{d['metadata']['name']}", d["spec"]["template"]["spec"])
            for d in of_kind(kind)
        ]
    return specs


def test_every_container_requests_cpu_and_memory_in_valid_quantities() -> None:
    """The schema takes any string as a quantity; the quantity parser does not."""
    specs = workload_pod_specs()
    assert len(specs) == 7  # with deploy/extender/'s, deploy/ui/'s and deploy/shadow/'s
    for where, spec in specs:
        for c in spec["containers"]:
            resources = c["resources"]
            assert set(resources) <= {"requests", "limits"}, where
            assert {"cpu", "memory"} <= set(resources["requests"]), where
            for section in resources.values():
                assert set(section) <= {"cpu", "memory", "ephemeral-storage"}, (where, section)
                for value in section.values():
                    assert parse_milli(value) > 0, (where, value)
            for name, limit in resources.get("limits", {}).items():
                if name in resources["requests"]:
                    assert parse_milli(resources["requests"][name]) <= parse_milli(limit), where


def test_deployment_runs_two_hardened_replicas() -> None:
    deployment = find("Deployment", "eventsched")
    assert deployment["spec"]["replicas"] == 2
    spec = deployment["spec"]["template"]["spec"]
    container = only_container(spec)
    assert_hardened(spec, container)
    assert spec["terminationGracePeriodSeconds"] >= 30
    requests = container["resources"]["requests"]
    assert requests.get("cpu") and requests.get("memory")
    assert container["resources"]["limits"].get("memory")
    # The two replicas are spread over nodes.
    spread = spec.get("topologySpreadConstraints", [])
    anti = spec.get("affinity", {}).get("podAntiAffinity", {})
    assert any(c["topologyKey"] == "kubernetes.io/hostname" for c in spread) or anti


def test_deployment_arguments_are_accepted_by_the_cli() -> None:
    container = only_container(pod_spec("Deployment", "eventsched"))
    args = cli_args(container)
    assert args.command == "run"
    assert args.log_format == "json"
    assert args.config
    assert_database_url_from_secret(container)


def test_probes_hit_the_served_endpoints_on_the_served_port() -> None:
    container = only_container(pod_spec("Deployment", "eventsched"))
    args = cli_args(container)
    port = args.secure_port
    assert args.http_address is None  # HTTPS only, as kube-scheduler
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["https"] == port

    def probe(kind: str) -> tuple[str, int]:
        get = container[kind]["httpGet"]
        target = get["port"]
        assert get["scheme"] == "HTTPS"
        return get["path"], ports[target] if isinstance(target, str) else target

    assert probe("livenessProbe") == ("/healthz", port)
    assert probe("readinessProbe") == ("/readyz", port)
    if "startupProbe" in container:
        assert probe("startupProbe") == ("/healthz", port)


def test_config_is_mounted_where_the_config_argument_points() -> None:
    spec = pod_spec("Deployment", "eventsched")
    container = only_container(spec)
    path = PurePosixPath(cli_args(container).config)
    mounts = [m for m in container["volumeMounts"] if m["mountPath"] == str(path.parent)]
    assert len(mounts) == 1
    assert mounts[0].get("readOnly") is True
    volume = next(v for v in spec["volumes"] if v["name"] == mounts[0]["name"])
    cm = find("ConfigMap", volume["configMap"]["name"])
    items = {i["path"]: i["key"] for i in volume["configMap"].get("items", [])}
    assert items.get(path.name, path.name) in cm["data"]
    assert cm["metadata"]["name"] == "eventsched-config"


def test_scheduler_config_is_valid_and_matches_rbac() -> None:
    config = scheduler_config()
    assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert config["kind"] == "KubeSchedulerConfiguration"
    names = [p["schedulerName"] for p in config["profiles"]]
    assert "eventsched" in names
    election = config["leaderElection"]
    role = find("Role", "eventsched-leader-election")
    assert election["resourceNamespace"] == role["metadata"]["namespace"]
    assert election["resourceLock"] == "leases"
    assert ("coordination.k8s.io", "leases") in {
        (a.api_group, a.resource) for a in REQUIRED_ACCESS if a.own_namespace
    }
    # The scheduler's own loader accepts it, with the same values.
    loaded = parse_config(config, "deploy/base/configmap.yaml", full_registry())
    assert "eventsched" in loaded.scheduler_names
    assert loaded.leader_election.leader_elect is True
    assert loaded.leader_election.resource_namespace == NAMESPACE


def test_example_pod_asks_for_a_configured_profile() -> None:
    pod = find("Pod", "hello")
    assert pod["metadata"]["namespace"] == "default"
    names = [p["schedulerName"] for p in scheduler_config()["profiles"]]
    assert pod["spec"]["schedulerName"] in names
    for c in pod["spec"]["containers"]:
        assert c["resources"]["requests"].get("cpu") and c["resources"]["requests"].get("memory")


def test_metrics_service_selects_the_scheduler_pods() -> None:
    service = find("Service", "eventsched-metrics")
    template = find("Deployment", "eventsched")["spec"]["template"]
    labels = template["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    container = only_container(template["spec"])
    (port,) = service["spec"]["ports"]
    assert port["targetPort"] in {p["name"] for p in container["ports"]}
    assert port["port"] == 10259
    annotations = service["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == str(port["port"])
    assert annotations["prometheus.io/path"] == "/metrics"
    # No other pods (the demo's PostgreSQL) are selected.
    postgres = find("StatefulSet", "eventsched-postgres")["spec"]["template"]["metadata"]
    assert not service["spec"]["selector"].items() <= postgres["labels"].items()


def test_db_upgrade_job_runs_the_migrations_with_the_same_image() -> None:
    job = find("Job", "eventsched-db-upgrade")
    assert job["spec"]["backoffLimit"] == 6
    assert job["spec"]["ttlSecondsAfterFinished"] == 600
    spec = job["spec"]["template"]["spec"]
    container = only_container(spec)
    args = cli_args(container)
    assert (args.command, args.db_command) == ("db", "upgrade")
    assert_hardened(spec, container)
    assert_database_url_from_secret(container)
    scheduler = only_container(pod_spec("Deployment", "eventsched"))
    assert container["image"] == scheduler["image"]


def test_image_is_the_project_release() -> None:
    image = only_container(pod_spec("Deployment", "eventsched"))["image"]
    assert image == f"{IMAGE_REPOSITORY}:{eventsched.__version__}"


def test_demo_database_secret_points_at_the_demo_postgres() -> None:
    demo = yaml.safe_load((DEMO / KUSTOMIZATION).read_text())
    assert demo["generatorOptions"]["disableNameSuffixHash"] is True
    secrets = {
        g["name"]: dict(lit.split("=", 1) for lit in g["literals"]) for g in demo["secretGenerator"]
    }
    url = urlsplit(secrets[DATABASE_SECRET]["url"])
    assert url.scheme == "postgresql"

    service = find("Service", "eventsched-postgres")
    assert service["spec"]["clusterIP"] == "None"
    assert url.hostname == service["metadata"]["name"]
    assert url.port in {p["port"] for p in service["spec"]["ports"]}

    sts = find("StatefulSet", "eventsched-postgres")
    assert sts["spec"]["replicas"] == 1
    assert sts["spec"]["serviceName"] == service["metadata"]["name"]
    assert (
        service["spec"]["selector"].items() <= sts["spec"]["template"]["metadata"]["labels"].items()
    )
    spec = sts["spec"]["template"]["spec"]
    container = only_container(spec)
    assert re.fullmatch(r"(docker\.io/(library/)?)?postgres:16([.-].*)?", container["image"])
    assert spec["securityContext"]["runAsUser"] == 999
    assert spec["securityContext"]["fsGroup"] == 999
    assert effective(spec, container, "runAsNonRoot") is True
    env = {e["name"]: e for e in container["env"]}
    assert url.username == env["POSTGRES_USER"]["value"]
    assert url.path.lstrip("/") == env["POSTGRES_DB"]["value"]
    ref = env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert url.password == secrets[ref["name"]][ref["key"]]
    mount = container["volumeMounts"][0]["mountPath"]
    assert env["PGDATA"]["value"].startswith(mount.rstrip("/") + "/")
    (claim,) = sts["spec"]["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == container["volumeMounts"][0]["name"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "1Gi"


# -- 5. the Dockerfile ---------------------------------------------------------------


def dockerfile_final_stage() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the last stage, continuation lines joined."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    lines = [ln.strip() for ln in text.splitlines()]
    instructions = [
        (ln.split(None, 1)[0].upper(), ln.split(None, 1)[1] if " " in ln else "")
        for ln in lines
        if ln and not ln.startswith("#")
    ]
    last_from = max(i for i, (op, _) in enumerate(instructions) if op == "FROM")
    return instructions[last_from:]


def test_image_runs_as_the_non_root_user_the_manifests_expect() -> None:
    users = [arg for op, arg in dockerfile_final_stage() if op == "USER"]
    assert users, "the runtime stage sets no USER"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    assert user.isdigit(), "a numeric USER lets runAsNonRoot verify it"
    spec = pod_spec("Deployment", "eventsched")
    assert int(user) == effective(spec, only_container(spec), "runAsUser")


def test_image_entrypoint_is_eventsched() -> None:
    stage = dockerfile_final_stage()
    entrypoints = [arg for op, arg in stage if op == "ENTRYPOINT"]
    assert entrypoints and json.loads(entrypoints[-1]) == ["eventsched"]
    assert any(op == "EXPOSE" and "10259" in arg.split() for op, arg in stage)
    # The final stage's base is the BASE build argument, python:3.11 unless a builder says
    # otherwise (tests/image passes a local stand-in).
    assert stage[0][1].split()[0] == "${BASE}"
    args = re.findall(r"^ARG BASE=(\S+)$", (ROOT / "Dockerfile").read_text(), re.M)
    assert args and args[0].startswith("python:3.11")


def test_dockerignore_keeps_what_the_wheel_needs() -> None:
    patterns = [
        ln.strip()
        for ln in (ROOT / ".dockerignore").read_text().splitlines()
        if ln.strip() and not ln.startswith("#") and not ln.startswith("!")
    ]
    for needed in ("pyproject.toml", "README.md", "eventsched", "migrations"):
        hits = [p for p in patterns if fnmatch.fnmatch(needed, p.removeprefix("**/").rstrip("/"))]
        assert not hits, f".dockerignore excludes {needed} (via {hits})"
