"""load_manifests: kinds, files and directories, generated names, and errors that say where."""

from __future__ import annotations

import json
import re
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from eventsched.cluster import load_manifests
from eventsched.model import ManifestError
from eventsched.model.disruption import PodDisruptionBudget

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)

NODE = """
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{topology.kubernetes.io/zone: z1}}
spec:
  taints: [{{key: dedicated, value: gpu, effect: NoSchedule}}]
status:
  allocatable: {{cpu: "4", memory: 16Gi, pods: "110"}}
"""

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
spec:
  schedulerName: eventsched
  containers:
    - name: c
      image: nginx
      resources:
        requests: {{cpu: {cpu}, memory: 256Mi}}
"""

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: {team: storefront}
    spec:
      schedulerName: eventsched
      containers:
        - name: web
          image: nginx
          resources: {requests: {cpu: 250m, memory: 128Mi}}
"""

REPLICASET = """
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: cache}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: cache}}
    spec:
      containers: [{name: redis, image: redis, resources: {requests: {cpu: "1"}}}]
"""

STATEFULSET = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop, uid: 11111111-2222-3333-4444-555555555555}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: db}}
    spec:
      schedulerName: eventsched
      containers: [{name: pg, image: postgres, resources: {requests: {cpu: "2", memory: 4Gi}}}]
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def docs(*texts: str) -> str:
    """A multi-document YAML stream."""
    return "\n---\n".join(textwrap.dedent(t) for t in texts)


def error_of(*paths: Path | str) -> str:
    with pytest.raises(ManifestError) as info:
        load_manifests(list(paths), now=NOW)
    return str(info.value)


# -- kinds -----------------------------------------------------------------------------


def test_nodes_and_pods_from_a_multi_document_file(tmp_path: Path) -> None:
    path = write(
        tmp_path / "cluster.yaml",
        docs(
            NODE.format(name="n1"),
            NODE.format(name="n2"),
            POD.format(name="a", namespace="default", cpu="500m"),
        ),
    )
    loaded = load_manifests([path], now=NOW)
    assert [n.name for n in loaded.nodes] == ["n1", "n2"]
    node = loaded.nodes[0]
    assert node.allocatable == {"cpu": 4000, "memory": 16 * 2**30, "pods": 110}
    assert node.labels == {"topology.kubernetes.io/zone": "z1"}
    assert node.taints[0].key == "dedicated"
    assert node.uid  # the API server would have given one
    [pod] = loaded.pods
    assert pod.key == "default/a"
    assert pod.requests == {"cpu": 500, "memory": 256 * 2**20}
    assert pod.scheduler_name == "eventsched"
    assert pod.created == "2025-03-01T12:00:00Z"
    assert re.fullmatch(r"[0-9a-f-]{36}", pod.uid)


def test_given_uid_and_timestamp_are_kept(tmp_path: Path) -> None:
    text = POD.format(name="a", namespace="default", cpu="1").replace(
        "  namespace: default",
        "  namespace: default\n  uid: my-uid\n  creationTimestamp: '2024-01-01T00:00:00Z'",
    )
    [pod] = load_manifests([write(tmp_path / "p.yaml", text)], now=NOW).pods
    assert (pod.uid, pod.created) == ("my-uid", "2024-01-01T00:00:00Z")


def test_each_pod_gets_a_fresh_uid(tmp_path: Path) -> None:
    path = write(tmp_path / "d.yaml", DEPLOYMENT)
    first, second = load_manifests([path]), load_manifests([path])
    uids = [p.uid for p in first.pods + second.pods]
    assert len(set(uids)) == 6


def test_deployment_expands_like_its_controllers(tmp_path: Path) -> None:
    pods = load_manifests([write(tmp_path / "d.yaml", DEPLOYMENT)], now=NOW).pods
    assert len(pods) == 3
    replicaset = pods[0].owner.name if pods[0].owner else ""
    assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{10}", replicaset)
    for pod in pods:
        assert pod.namespace == "shop"
        assert re.fullmatch(rf"{replicaset}-[bcdfghjklmnpqrstvwxz2456789]{{5}}", pod.name)
        assert pod.owner is not None
        assert (pod.owner.kind, pod.owner.name) == ("ReplicaSet", replicaset)
        assert pod.labels == {"app": "web", "pod-template-hash": replicaset[len("web-") :]}
        assert pod.annotations == {"team": "storefront"}
        assert pod.scheduler_name == "eventsched"
        assert pod.requests == {"cpu": 250, "memory": 128 * 2**20}
    assert len({p.name for p in pods}) == 3
    assert len({p.owner.uid for p in pods if p.owner}) == 1


def test_generated_names_are_deterministic_and_follow_the_template(tmp_path: Path) -> None:
    path = write(tmp_path / "d.yaml", DEPLOYMENT)
    names = [p.name for p in load_manifests([path]).pods]
    assert names == [p.name for p in load_manifests([path]).pods]
    write(path, DEPLOYMENT.replace("cpu: 250m", "cpu: 300m"))
    changed = [p.name for p in load_manifests([path]).pods]
    # A new template is a new ReplicaSet, as a rollout makes.
    assert changed[0].rsplit("-", 1)[0] != names[0].rsplit("-", 1)[0]


def test_replicaset_pods(tmp_path: Path) -> None:
    pods = load_manifests([write(tmp_path / "rs.yaml", REPLICASET)]).pods
    assert len(pods) == 2
    for pod in pods:
        assert re.fullmatch(r"cache-[bcdfghjklmnpqrstvwxz2456789]{5}", pod.name)
        assert pod.namespace == "default"
        assert pod.owner is not None and (pod.owner.kind, pod.owner.name) == ("ReplicaSet", "cache")
        assert pod.scheduler_name == "default-scheduler"  # the template names none


def test_statefulset_pods_have_ordinals(tmp_path: Path) -> None:
    pods = load_manifests([write(tmp_path / "sts.yaml", STATEFULSET)]).pods
    assert [p.key for p in pods] == ["shop/db-0", "shop/db-1", "shop/db-2"]
    for index, pod in enumerate(pods):
        assert pod.owner is not None
        assert (pod.owner.kind, pod.owner.name, pod.owner.uid) == (
            "StatefulSet",
            "db",
            "11111111-2222-3333-4444-555555555555",
        )
        assert pod.labels["statefulset.kubernetes.io/pod-name"] == f"db-{index}"
        assert pod.labels["apps.kubernetes.io/pod-index"] == str(index)
        assert pod.requests == {"cpu": 2000, "memory": 4 * 2**30}


def test_replicas_default_to_one_and_zero_makes_none(tmp_path: Path) -> None:
    one = write(tmp_path / "a.yaml", STATEFULSET.replace("replicas: 3", ""))
    assert len(load_manifests([one]).pods) == 1
    zero = write(tmp_path / "b.yaml", STATEFULSET.replace("replicas: 3", "replicas: 0"))
    assert load_manifests([zero]).pods == []


def test_list_kind_and_api_lists_without_item_kinds(tmp_path: Path) -> None:
    kubectl = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}},
        ],
    }
    api = {"apiVersion": "v1", "kind": "NodeList", "items": [{"metadata": {"name": "n2"}}]}
    write(tmp_path / "kubectl.json", json.dumps(kubectl))
    write(tmp_path / "api.json", json.dumps(api))
    loaded = load_manifests([tmp_path / "kubectl.json", tmp_path / "api.json"])
    assert [n.name for n in loaded.nodes] == ["n1", "n2"]
    # A Node manifest without `pods` gets the kubelet's default, or it would fit nothing.
    assert loaded.nodes[0].allocatable["pods"] == 110


def test_directories_recursively_in_sorted_order(tmp_path: Path) -> None:
    write(tmp_path / "b" / "nodes.yml", NODE.format(name="n-b"))
    write(tmp_path / "a" / "z.yaml", NODE.format(name="n-az"))
    write(tmp_path / "a" / "deeper" / "pods.json", json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }))  # fmt: skip
    write(tmp_path / "a" / "notes.txt", "not a manifest")
    write(tmp_path / ".hidden" / "x.yaml", "{{ broken")
    loaded = load_manifests([tmp_path])
    assert [n.name for n in loaded.nodes] == ["n-az", "n-b"]
    assert [p.key for p in loaded.pods] == ["default/p"]


def test_a_single_path_and_repeated_paths(tmp_path: Path) -> None:
    path = write(tmp_path / "n.yaml", NODE.format(name="n1"))
    assert len(load_manifests(path).nodes) == 1
    assert len(load_manifests(str(tmp_path)).nodes) == 1
    # The same file reached twice is read once, not reported as duplicates.
    assert len(load_manifests([tmp_path, path]).nodes) == 1


def test_other_kinds_are_ignored(tmp_path: Path) -> None:
    path = write(
        tmp_path / "misc.yaml",
        docs(
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n",
            "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\n",
            "\n",  # an empty document
            POD.format(name="a", namespace="shop", cpu="1"),
        ),
    )
    loaded = load_manifests([path])
    assert loaded.nodes == []
    assert [p.key for p in loaded.pods] == ["shop/a"]


PDB = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: web, namespace: shop}}
spec:
  minAvailable: 2
  selector: {{matchLabels: {{app: web}}}}
status: {{disruptionsAllowed: {allowed}, disruptedPods: {{web-0: "2026-01-01T00:00:00Z"}}}}
"""


def test_disruption_budgets_are_observed(tmp_path: Path) -> None:
    """A PodDisruptionBudget (status as a `kubectl get -o yaml` copy holds it) is an object
    the scheduler observes, as DefaultPreemption reads it."""
    path = write(tmp_path / "pdb.yaml", PDB.format(allowed=1))
    (budget,) = load_manifests([path]).objects
    assert isinstance(budget, PodDisruptionBudget)
    assert (budget.key, budget.disruptions_allowed, budget.disrupted_pods) == (
        "PodDisruptionBudget/shop/web",
        1,
        {"web-0"},
    )
    assert budget.selector is not None and budget.selector.matches({"app": "web"})


def test_bad_disruption_budget_names_file_document_object_and_field(tmp_path: Path) -> None:
    path = write(tmp_path / "pdb.yaml", docs(NODE.format(name="n1"), PDB.format(allowed=-1)))
    assert error_of(path) == (
        f"{path} (document 2): PodDisruptionBudget shop/web: status.disruptionsAllowed: "
        "must be a non-negative integer (got -1)"
    )


def test_priority_class_fills_in_priority(tmp_path: Path) -> None:
    klass = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    default = (
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
        "metadata: {name: normal}\nvalue: 10\nglobalDefault: true\n"
    )
    named = POD.format(name="a", namespace="default", cpu="1").replace(
        "  schedulerName", "  priorityClassName: high\n  schedulerName"
    )
    template = DEPLOYMENT.replace(
        "      schedulerName", "      priorityClassName: high\n      schedulerName"
    )
    unnamed = POD.format(name="b", namespace="default", cpu="1")
    path = write(tmp_path / "p.yaml", docs(named, template, unnamed, klass, default))
    pods = {p.name: p for p in load_manifests([path]).pods}
    assert pods["a"].priority == 1000
    assert pods["b"].priority == 10  # the global default
    assert {p.priority for p in pods.values() if p.owner} == {1000}


def test_explicit_priority_without_class(tmp_path: Path) -> None:
    text = POD.format(name="a", namespace="default", cpu="1").replace(
        "  schedulerName", "  priority: 1000\n  schedulerName"
    )
    [pod] = load_manifests([write(tmp_path / "p.yaml", text)]).pods
    assert pod.priority == 1000


def test_limits_alone_request_the_limit(tmp_path: Path) -> None:
    text = POD.format(name="a", namespace="default", cpu="1").replace(
        "        requests: {cpu: 1, memory: 256Mi}",
        "        requests: {cpu: 1}\n        limits: {memory: 1Gi, nvidia.com/gpu: 1}",
    )
    [pod] = load_manifests([write(tmp_path / "p.yaml", text)]).pods
    assert pod.requests == {"cpu": 1000, "memory": 2**30, "nvidia.com/gpu": 1}


def test_generate_name(tmp_path: Path) -> None:
    text = POD.format(name="x", namespace="default", cpu="1").replace(
        "  name: x", "  generateName: job-"
    )
    path = write(tmp_path / "p.yaml", text)
    [pod] = load_manifests([path]).pods
    assert re.fullmatch(r"job-[bcdfghjklmnpqrstvwxz2456789]{5}", pod.name)
    assert load_manifests([path]).pods[0].name == pod.name


# -- errors ----------------------------------------------------------------------------


def test_bad_quantity_names_file_document_object_and_field(tmp_path: Path) -> None:
    path = write(
        tmp_path / "cluster.yaml",
        docs(
            NODE.format(name="n1"),
            NODE.format(name="n2"),
            POD.format(name="web", namespace="default", cpu="2x"),
        ),
    )
    message = error_of(path)
    assert message.startswith(
        f"{path} (document 3): Pod default/web: spec.containers[0].resources.requests: "
        "'2x' is not a Kubernetes quantity (examples: "
    )


def test_bad_quantity_in_a_template_points_into_the_template(tmp_path: Path) -> None:
    path = write(tmp_path / "d.yaml", DEPLOYMENT.replace("cpu: 250m", "cpu: lots"))
    message = error_of(path)
    assert message.startswith(
        f"{path} (document 1): Deployment shop/web: "
        "spec.template.spec.containers[0].resources.requests: 'lots' is not a Kubernetes quantity"
    )


def test_bad_node_allocatable(tmp_path: Path) -> None:
    path = write(tmp_path / "n.yaml", NODE.format(name="n1").replace('cpu: "4"', "cpu: four"))
    assert error_of(path).startswith(f"{path} (document 1): Node n1: status.allocatable: 'four'")


def test_bad_taint_effect(tmp_path: Path) -> None:
    path = write(tmp_path / "n.yaml", NODE.format(name="n1").replace("NoSchedule", "Never"))
    assert f"{path} (document 1): Node n1: spec.taints[0].effect: must be one of" in error_of(path)


def test_yaml_that_does_not_parse(tmp_path: Path) -> None:
    path = write(
        tmp_path / "bad.yaml", docs(NODE.format(name="n1"), "kind: Pod\nmetadata: {name: [\n")
    )
    message = error_of(path)
    assert message.startswith(f"{path}: document 2, line ")
    assert "not valid YAML" in message


def test_json_that_does_not_parse(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", '{"kind": "Node",\n "metadata": }')
    assert error_of(path).startswith(f"{path}: line 2, column 14: not valid JSON")


def test_document_that_is_not_an_object(tmp_path: Path) -> None:
    path = write(tmp_path / "list.yaml", docs(NODE.format(name="n1"), "- a\n- b\n"))
    assert error_of(path) == (
        f"{path}: document 2: is a list, not a Kubernetes object "
        "(a mapping with apiVersion, kind and metadata)"
    )


def test_missing_kind(tmp_path: Path) -> None:
    path = write(tmp_path / "k.yaml", "apiVersion: v1\nmetadata: {name: x}\n")
    assert error_of(path).startswith(f"{path} (document 1): kind: is required")


def test_missing_and_invalid_names(tmp_path: Path) -> None:
    nameless = write(tmp_path / "a.yaml", "apiVersion: v1\nkind: Node\nmetadata: {}\n")
    assert error_of(nameless).startswith(
        f"{nameless} (document 1): Node: metadata.name: is required"
    )
    bad = write(tmp_path / "b.yaml", POD.format(name="Web_1", namespace="default", cpu="1"))
    assert error_of(bad).startswith(
        f"{bad} (document 1): Pod: metadata.name: 'Web_1' is not a valid"
    )
    bad_ns = write(tmp_path / "c.yaml", POD.format(name="web", namespace="Shop", cpu="1"))
    assert "Pod web: metadata.namespace: 'Shop' is not a valid DNS-1123 label" in error_of(bad_ns)


def test_pod_without_containers(tmp_path: Path) -> None:
    path = write(tmp_path / "p.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n")
    assert error_of(path) == (
        f"{path} (document 1): Pod default/p: spec.containers: must list at least one container"
    )


def test_wrong_shapes_are_manifest_errors(tmp_path: Path) -> None:
    spec_list = write(
        tmp_path / "a.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: [1]\n"
    )
    assert error_of(spec_list).startswith(f"{spec_list} (document 1): Pod: spec: must be a mapping")
    container_str = write(
        tmp_path / "b.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [x]}\n",
    )
    assert error_of(container_str).startswith(f"{container_str} (document 1): Pod p: (structure):")


def test_workload_errors(tmp_path: Path) -> None:
    replicas = write(tmp_path / "a.yaml", DEPLOYMENT.replace("replicas: 3", "replicas: many"))
    assert error_of(replicas).startswith(
        f"{replicas} (document 1): Deployment shop/web: spec.replicas: must be an integer >= 0"
    )
    no_template = write(
        tmp_path / "b.yaml",
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec: {replicas: 1}\n",
    )
    assert error_of(no_template).startswith(
        f"{no_template} (document 1): StatefulSet default/s: spec.template: is required"
    )
    selector = write(
        tmp_path / "c.yaml",
        DEPLOYMENT.replace("matchLabels: {app: web}", "matchLabels: {app: api}"),
    )
    assert error_of(selector).startswith(
        f"{selector} (document 1): Deployment shop/web: spec.selector.matchLabels: app=api does not match"
    )


def test_unknown_priority_class(tmp_path: Path) -> None:
    text = POD.format(name="a", namespace="default", cpu="1").replace(
        "  schedulerName", "  priorityClassName: gold\n  schedulerName"
    )
    path = write(tmp_path / "p.yaml", text)
    assert error_of(path).startswith(
        f"{path} (document 1): Pod default/a: spec.priorityClassName: no PriorityClass named 'gold'"
    )


def test_list_item_errors_name_the_item(tmp_path: Path) -> None:
    doc = {"apiVersion": "v1", "kind": "List", "items": [
        {"kind": "Node", "metadata": {"name": "n1"}},
        {"kind": "Node", "metadata": {"name": "n2"}, "status": {"allocatable": {"cpu": "x"}}},
    ]}  # fmt: skip
    path = write(tmp_path / "l.json", json.dumps(doc))
    assert error_of(path).startswith(
        f"{path} (document 1, items[1]): Node n2: status.allocatable: 'x'"
    )


def test_duplicate_nodes_name_both_places(tmp_path: Path) -> None:
    first = write(tmp_path / "a.yaml", NODE.format(name="n1"))
    second = write(tmp_path / "b.yaml", docs(NODE.format(name="n2"), NODE.format(name="n1")))
    assert error_of(tmp_path) == (
        f"{second} (document 2): Node n1: metadata.name: duplicate: Node n1 is also defined at "
        f"{first} (document 1): Node n1"
    )


def test_duplicate_pods_name_both_places(tmp_path: Path) -> None:
    path = write(
        tmp_path / "p.yaml",
        docs(STATEFULSET, POD.format(name="db-1", namespace="shop", cpu="1")),
    )
    assert error_of(path) == (
        f"{path} (document 2): Pod shop/db-1: metadata.name: duplicate: Pod shop/db-1 is also "
        f"defined at {path} (document 1): StatefulSet shop/db (pod db-1)"
    )
    # The same name in another namespace is another pod.
    write(path, docs(STATEFULSET, POD.format(name="db-1", namespace="default", cpu="1")))
    assert len(load_manifests([path]).pods) == 4


def test_missing_paths(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no such manifest file or directory: .*nope"):
        load_manifests([tmp_path / "nope.yaml"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"no manifests \(\*.yaml, \*.yml, \*.json\)"):
        load_manifests([tmp_path / "empty"])


def test_errors_come_in_the_order_they_did_before_objects_were_built_as_read(
    tmp_path: Path,
) -> None:
    """Nodes and pods are built as documents are parsed; still a bad PriorityClass, or a
    YAML error, later in the files is what is reported over an earlier pod's error."""
    bad_pod = POD.format(name="Bad_Name", namespace="default", cpu="1")
    bad_class = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\n"
    path = write(tmp_path / "a.yaml", docs(bad_pod, bad_class))
    with pytest.raises(ManifestError) as raised:
        load_manifests([path])
    assert raised.value.field == "value"
    assert raised.value.where.endswith("(document 2): PriorityClass x")
    path = write(tmp_path / "a.yaml", docs(bad_pod, "a: [1, 2\n"))
    with pytest.raises(ManifestError, match="not valid YAML"):
        load_manifests([path])
    path = write(tmp_path / "a.yaml", bad_pod)
    with pytest.raises(ManifestError) as raised:
        load_manifests([path])
    assert raised.value.field == "metadata.name"
