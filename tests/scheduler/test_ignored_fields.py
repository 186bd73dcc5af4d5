"""A pod setting a field no plugin of its profile honours is never placed silently (issue 12).

The default profile honours them all; a profile that disables InterPodAffinity,
PodTopologySpread or NodePorts places such a pod as if the field were absent,
and the log, the pod's Events and simulate's summary say so.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from eventsched.cli.main import main
from eventsched.cluster import SimulatedCluster
from eventsched.config.file import parse_config
from eventsched.events import EventStore
from eventsched.model import Pod
from eventsched.plugins import full_registry
from tests.scheduler.helpers import node, pod
from tests.scheduler.test_scheduler import run_scheduler

ANTI_AFFINITY = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"a": "b"}}}
        ]
    }
}


def pod_with(name: str, **spec: object) -> Pod:
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"schedulerName": "eventsched", "containers": [{"name": "c"}], **spec},
        }
    )


def test_fields_a_pod_uses_are_found_in_its_spec() -> None:
    assert pod_with("anti", affinity=ANTI_AFFINITY).uses == ("spec.affinity.podAntiAffinity",)
    spread = pod_with("spread", topologySpreadConstraints=[{"maxSkew": 1}])
    assert spread.uses == ("spec.topologySpreadConstraints",)
    ports = pod_with("ports", containers=[{"name": "c", "ports": [{"hostPort": 8080}]}])
    assert ports.uses == ("spec.containers[].ports[].hostPort",)
    plain = pod_with("plain", containers=[{"name": "c", "ports": [{"containerPort": 80}]}])
    assert plain.uses == () and "uses" not in plain.to_record()
    assert Pod.from_record(ports.to_record()) == ports


def without(plugin: str) -> str:
    """A configuration whose one profile disables `plugin` everywhere."""
    return (
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n  - schedulerName: eventsched\n    plugins:\n      multiPoint:\n"
        f"        disabled: [{{name: {plugin}}}]\n"
    )


def test_the_log_and_the_pod_say_what_was_not_honoured(store: EventStore) -> None:
    cluster = SimulatedCluster(
        [node("a")], [pod_with("anti", affinity=ANTI_AFFINITY), pod("plain")]
    )
    config = parse_config(yaml.safe_load(without("InterPodAffinity")), "c.yaml", full_registry())
    run_scheduler(store, cluster, profiles=list(config.profiles), registry=full_registry())
    notes = [e for e in store.read(kinds=["input_recorded"]) if e.data["key"] == "ignoredFields"]
    assert [(e.name, e.plugin, e.data["value"]) for e in notes] == [
        (
            "anti",
            None,
            {"fields": ["spec.affinity.podAntiAffinity"], "plugins": ["InterPodAffinity"]},
        )
    ]
    warnings = [e for e in cluster.events if e.reason == "FieldsIgnored"]
    assert [(e.type, e.pod_key, e.message) for e in warnings] == [
        (
            "Warning",
            "default/anti",
            "spec.affinity.podAntiAffinity not honoured: profile eventsched has no "
            "InterPodAffinity plugin; the pod is placed as if it were absent",
        )
    ]
    assert {p.key for p in cluster.list_pods() if p.node_name} == {"default/anti", "default/plain"}


def test_simulate_lists_the_pods_it_placed_without_honouring_a_field(
    capsys: pytest.CaptureFixture[str], db_url: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "spread.yaml"
    manifest.write_text(
        """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: spread, namespace: default}
spec:
  schedulerName: eventsched
  containers: [{name: c, image: x}]
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]
"""
    )
    config = tmp_path / "config.yaml"
    config.write_text(without("PodTopologySpread"))
    capsys.readouterr()
    assert main(["--db", db_url, "simulate", "--config", str(config), str(manifest)]) == 0
    out = capsys.readouterr().out
    assert (
        "scheduled without fields eventsched does not honour yet:\n"
        "  default/spread: spec.topologySpreadConstraints not honoured: profile eventsched has "
        "no PodTopologySpread plugin; the pod is placed as if it were absent\n"
    ) in out
