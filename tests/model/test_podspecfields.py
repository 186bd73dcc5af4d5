"""A pod's spec is read once for each distinct spec (model/podspecfields.py)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from eventsched.model import Pod
from eventsched.model import podspecfields as fields_module
from eventsched.model.errors import ManifestError
from eventsched.model.podspecfields import read_spec, spec_fields


def manifest(name: str, node: str = "", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "schedulerName": "eventsched",
        "containers": [
            {
                "name": "app",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                "ports": [{"containerPort": 80, "hostPort": 8080}],
            }
        ],
        "tolerations": [
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}
        ],
        **spec,
    }
    if node:
        body["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": "web", "uid": f"uid-{name}"},
        "spec": body,
        "status": {"phase": "Pending"},
    }


@pytest.fixture(autouse=True)
def empty_memo() -> None:
    fields_module._memo.clear()


def test_pods_of_one_template_share_what_their_spec_reads_as_and_keep_their_own_node() -> None:
    pending = Pod.from_manifest(manifest("a"))
    bound = Pod.from_manifest(manifest("b", node="node-7"))
    assert len(fields_module._memo) == 1
    assert bound.node_name == "node-7" and pending.node_name == ""
    assert (bound.name, bound.uid) == ("b", "uid-b")
    assert bound.requests is pending.requests
    assert bound.requests == {"cpu": 100, "memory": 64 * 2**20}
    assert [p.port for p in bound.host_ports] == [8080]


def test_a_remembered_spec_reads_as_a_fresh_reading_of_it() -> None:
    spec = manifest("a", node="node-1")["spec"]
    first = spec_fields(spec, "Pod web/a")
    again = spec_fields(copy.deepcopy(spec), "Pod web/b")
    assert again is first
    assert again == read_spec(spec, "Pod web/a")


def test_a_different_spec_is_read_for_itself() -> None:
    small = Pod.from_manifest(manifest("a"))
    large = Pod.from_manifest(manifest("b", priority=1000, nodeSelector={"disk": "ssd"}))
    assert len(fields_module._memo) == 2
    assert (small.priority, dict(small.node_selector)) == (0, {})
    assert (large.priority, dict(large.node_selector)) == (1000, {"disk": "ssd"})


def test_a_wrong_spec_is_refused_for_every_pod_that_has_it_naming_that_pod() -> None:
    wrong = {"containers": [{"name": "app", "resources": {"requests": {"cpu": "-1"}}}]}
    for name in ("a", "b"):
        with pytest.raises(ManifestError) as refused:
            Pod.from_manifest({"metadata": {"name": name, "namespace": "web"}, "spec": wrong})
        assert f"Pod web/{name}" in str(refused.value)
        assert "spec.containers[0].resources.requests" in str(refused.value)
    assert not fields_module._memo


def test_a_spec_that_is_not_plain_json_is_read_every_time() -> None:
    """A manifest's YAML may hold a date or an integer beyond 64 bits: still read."""
    spec = manifest("a", node="n", annotationsDate=datetime(2026, 1, 1, tzinfo=UTC))["spec"]
    assert spec_fields(spec, "Pod web/a") == read_spec(spec, "Pod web/a")
    huge = manifest("b", priority=2**70)["spec"]
    assert spec_fields(huge, "Pod web/b").priority == 2**70
    assert not fields_module._memo


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fields_module, "MEMO_SIZE", 3)
    for priority in range(7):
        Pod.from_manifest(manifest(f"p{priority}", priority=priority))
        assert len(fields_module._memo) <= 3
    assert Pod.from_manifest(manifest("x", priority=6)).priority == 6
