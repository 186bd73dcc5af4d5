"""ImageLocality against kube-scheduler v1.28's image_locality_test.go."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from eventsched.framework import CycleState
from eventsched.model import Node, NodeTable, Pod
from eventsched.model.node import NodeImage
from eventsched.plugins.imagelocality import ImageCodes, ImageLocality, normalized_image_name
from tests.plugins.conftest import plugin

MB = 1024 * 1024


def image_node(name: str, *images: tuple[tuple[str, ...], int]) -> Node:
    """upstream's `makeImageNode`: a node whose status lists these (names, size in MB)."""
    return Node(name=name, images=tuple(NodeImage(names, size * MB) for names, size in images))


def image_pod(*images: str, init: tuple[str, ...] = ()) -> Pod:
    containers = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    init_containers = [{"name": f"i{i}", "image": image} for i, image in enumerate(init)]
    meta = {"name": "p", "namespace": "default", "uid": "uid-p"}
    spec = {"containers": containers, "initContainers": init_containers}
    return Pod.from_manifest({"metadata": meta, "spec": spec})


# The node statuses of TestImageLocalityPriority.
NODE_40_300_2000 = (
    (("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), 40),
    (("gcr.io/300:latest", "gcr.io/300:v1"), 300),
    (("gcr.io/2000:latest",), 2000),
)
NODE_250_10 = ((("gcr.io/250:latest",), 250), (("gcr.io/10:latest", "gcr.io/10:v1"), 10))
NODE_600_40_900 = (
    (("gcr.io/600:latest",), 600),
    (("gcr.io/40:latest",), 40),
    (("gcr.io/900:latest",), 900),
)
NODE_300_600_900 = (
    (("gcr.io/300:latest",), 300),
    (("gcr.io/600:latest",), 600),
    (("gcr.io/900:latest",), 900),
)
NODE_4000_30 = ((("gcr.io/4000:latest",), 4000), (("gcr.io/30:latest",), 30))
NODE_20_30_40 = (
    (("gcr.io/20:latest",), 20),
    (("gcr.io/30:latest",), 30),
    (("gcr.io/40:latest",), 40),
)

# TestImageLocalityPriority (v1.28: regular containers only), with upstream's expected scores.
CASES = [
    (
        "two images spread on two nodes, prefer the larger image one",
        image_pod("gcr.io/40", "gcr.io/250"),
        [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_250_10)],
        [0, 5],
    ),
    (
        "two images on one node, prefer this node",
        image_pod("gcr.io/40", "gcr.io/300"),
        [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_250_10)],
        [7, 0],
    ),
    (
        "if exceed limit, use limit",
        image_pod("gcr.io/10", "gcr.io/4000"),
        [image_node("node1", *NODE_4000_30), image_node("node2", *NODE_250_10)],
        [100, 0],
    ),
    (
        "if exceed limit, use limit (with node which has no images present)",
        image_pod("gcr.io/10", "gcr.io/4000"),
        [
            image_node("node1", *NODE_4000_30),
            image_node("node2", *NODE_250_10),
            image_node("node3"),
        ],
        [66, 0, 0],
    ),
    (
        "pod with multiple large images, node2 is preferred",
        image_pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        [
            image_node("node1", *NODE_600_40_900),
            image_node("node2", *NODE_300_600_900),
            image_node("node3"),
        ],
        [32, 36, 0],
    ),
    (
        "pod with multiple small images",
        image_pod("gcr.io/30", "gcr.io/40"),
        [image_node("node1", *NODE_20_30_40), image_node("node2", *NODE_4000_30)],
        [1, 0],
    ),
]


def scores(pod: Pod, nodes: list[Node], p: ImageLocality | None = None) -> list[int]:
    table = NodeTable(nodes)
    p = p or plugin("ImageLocality", table=table)
    return [int(s) for s in p.score_batch(CycleState(), pod, table, np.arange(len(table)))]


@pytest.mark.parametrize(("name", "pod", "nodes", "expected"), CASES, ids=[c[0] for c in CASES])
def test_upstream_table(name: str, pod: Pod, nodes: list[Node], expected: list[int]) -> None:
    """TestImageLocalityPriority, case by case."""
    assert scores(pod, nodes) == expected


def test_init_container_images_do_not_count_in_v1_28() -> None:
    """upstream's "include InitContainers" case expects 6 for node1 from v1.30 on; v1.28
    reads spec.containers only: gcr.io/30 is not on node1 and the pod has one container."""
    pod = image_pod("gcr.io/30", init=("gcr.io/300",))
    assert pod.images == ("gcr.io/30",)
    nodes = [image_node("node1", *NODE_40_300_2000), image_node("node2", *NODE_20_30_40)]
    assert scores(pod, nodes) == [0, 0]


def fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("case", "given", "normalized"),
    [
        ("add :latest postfix 1", "root", "root:latest"),
        ("add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("keep it as is 1", "root:tag", "root:tag"),
        ("keep it as is 2", "root@" + fake_digest("root"), "root@" + fake_digest("root")),
    ],
)
def test_normalized_image_name(case: str, given: str, normalized: str) -> None:
    """TestNormalizedImageName."""
    assert normalized_image_name(given) == normalized


def test_node_counts_follow_node_changes_only() -> None:
    """NumNodes is the current count (v1.28's consistent image states); the index is
    rebuilt when nodes change, not when pods do."""
    table = NodeTable([image_node("a", (("big:latest",), 1000)), image_node("b")])
    p: ImageLocality = plugin("ImageLocality", table=table)
    pod = image_pod("big")
    rows = np.arange(2)
    # 1000MB * 1/2 = 500MB: 100 * (500 - 23) // (1000 - 23) = 48
    assert p.score_batch(CycleState(), pod, table, rows).tolist() == [48, 0]
    built = p.image_index(table)
    table.add_pod(image_pod("other"), "b")
    assert p.image_index(table) is built
    table.upsert_node(image_node("b", (("big:latest",), 1000)))
    # On both nodes: 1000MB * 2/2, the maximum.
    assert p.score_batch(CycleState(), pod, table, rows).tolist() == [100, 100]
    table.remove_node("b")
    assert p.score_batch(CycleState(), pod, table, np.arange(1)).tolist() == [100]


def test_scores_only_the_candidate_rows_but_counts_every_node() -> None:
    """totalNumNodes is every node of the snapshot, not only the candidates."""
    nodes = [image_node(n, (("gcr.io/900:latest",), 900)) for n in ("a", "b")] + [image_node("c")]
    table = NodeTable(nodes)
    p = plugin("ImageLocality", table=table)
    # 900MB * 2/3 = 600MB: 100 * (600 - 23) // (1000 - 23) = 59
    got = p.score_batch(CycleState(), image_pod("gcr.io/900"), table, np.array([1, 2]))
    assert got.tolist() == [59, 0]


def test_a_name_listed_twice_on_a_node_counts_that_node_once() -> None:
    table_nodes = [
        image_node("a", (("x:latest",), 100), (("x:latest", "x:v1"), 100)),
        image_node("b"),
    ]
    # 100MB * 1/2 = 50MB: 100 * (50 - 23) // (1000 - 23) = 2
    assert scores(image_pod("x"), table_nodes) == [2, 0]


def test_container_without_image_scores_zero() -> None:
    """Upstream looks up ":latest" for it (a name no node reports) and scores 0 as here.

    The API server refuses such a pod; the model keeps no image for it."""
    meta = {"name": "p", "namespace": "default", "uid": "uid-p"}
    pod = Pod.from_manifest({"metadata": meta, "spec": {"containers": [{"name": "c"}]}})
    assert pod.images == ()
    assert scores(pod, [image_node("a", (("x:latest",), 4000))]) == [0]


def test_takes_no_args_and_has_no_normalize() -> None:
    from eventsched.framework import PluginArgsError

    with pytest.raises(PluginArgsError, match="ImageLocality takes no args"):
        plugin("ImageLocality", {"x": 1})
    assert not hasattr(plugin("ImageLocality"), "normalize_score")


def test_the_size_is_the_first_nodes_report() -> None:
    """kube-scheduler's cache keeps the size of the first report of an image name."""
    nodes = [image_node("a", (("x:latest",), 500)), image_node("b", (("x:latest",), 100))]
    # 500MB * 2/2: 100 * (500 - 23) // (1000 - 23) = 48 on both nodes.
    assert scores(image_pod("x"), nodes) == [48, 48]


def test_image_codes_forget_names_no_node_reports_any_more() -> None:
    codes = ImageCodes()
    many = NodeTable([image_node("a", *(((f"img{i}:latest",), 1) for i in range(2000)))])
    codes.build(many)
    assert len(codes.codes) == 2000
    few = NodeTable([image_node("a", (("x:latest",), 100))])
    index = codes.build(few)
    assert len(codes.codes) == 1
    found = index.holders("x:latest")
    assert found is not None and found[0].tolist() == [0] and found[1] == 100 * MB
    assert index.holders("img0:latest") is None
