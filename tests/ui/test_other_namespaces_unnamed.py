"""A pod page names pods of other namespaces only to a reader who may see them: a victim
in `default` of a preemption by a `shop` pod is "a pod of a namespace you may not see"
to a reader of `shop` alone, and the victim's own page does not name its preemptor to a
reader of `default` alone."""

from __future__ import annotations

from pathlib import Path

from eventsched._httpguard import Guard, UserInfo
from eventsched.ui.app import Access, Settings
from tests.serving.reviewer import FakeReviewer
from tests.ui.conftest import Served, simulate

HIDDEN = "a pod of a namespace you may not see"

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Pod
metadata: {name: low, namespace: default}
spec:
  nodeName: n1
  containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: urgent, namespace: shop}
spec:
  schedulerName: eventsched
  priorityClassName: high
  containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
"""


def test_a_victim_and_a_preemptor_in_hidden_namespaces_are_not_named(tmp_path: Path) -> None:
    manifests = tmp_path / "cluster"
    manifests.mkdir()
    (manifests / "all.yaml").write_text(CLUSTER)
    url = f"sqlite:///{tmp_path / 'events.db'}"
    simulate(url, manifests)
    shop, default, both = UserInfo("shop-reader"), UserInfo("default-reader"), UserInfo("both")
    reviewer = FakeReviewer(
        {"s": shop, "d": default, "both": both},
        {
            (shop.name, "get", "pods/shop"),
            (default.name, "get", "pods/default"),
            (both.name, "get", "pods/shop"),
            (both.name, "get", "pods/default"),
        },
    )
    access = Access(Guard(reviewer, ("/healthz", "/static/*")), reviewer)
    with Served(Settings(url, chain_interval=0.5, access=access)) as served:
        for path in ("/pods/shop/urgent", "/pods/shop/urgent/attempts"):
            hidden = served.request(path, token="s")
            assert hidden.status == 200 and HIDDEN in hidden.body, path
            assert "default/low" not in hidden.body and "/pods/default/" not in hidden.body
            shown = served.request(path, token="both")
            assert "default/low" in shown.body and HIDDEN not in shown.body, path
        victim = served.request("/pods/default/low", token="d")
        assert victim.status == 200 and "Chosen as a victim of the preemption by" in victim.body
        assert "shop/urgent" not in victim.body and "/pods/shop/" not in victim.body
        assert "shop/urgent" in served.request("/pods/default/low", token="both").body
