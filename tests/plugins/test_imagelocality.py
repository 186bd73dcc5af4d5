"""ImageLocality against kube-scheduler v1.28's image_locality_test.go and its cache.

image_locality_test.go builds its snapshot with `cache.NewSnapshot`, whose
`getNodeImageStates` gives every node the count of holders among all nodes and
its own size; the running scheduler's cache (`addNodeImageStates`) gives a node
the count as of its last add or update and the size of the node that created the
image's state. The upstream table runs on a table given NewSnapshot's summaries;
the other cases score the cache's, as eventsched keeps them.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from eventsched.framework import CycleState
from eventsched.model import Node, NodeTable, Pod
from eventsched.model.imagestates import ImageSummary, summary_of
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


def new_snapshot_summaries(nodes: list[Node]) -> dict[str, ImageSummary]:
    """upstream snapshot.go `getNodeImageStates` over `createImageExistenceMap(nodes)`: each
    node's own size per name (its last listing), the number of nodes listing it among all."""
    holders: dict[str, set[str]] = {}
    for node in nodes:
        for image in node.images:
            for name in image.names:
                holders.setdefault(name, set()).add(node.name)
    out = {}
    for node in nodes:
        sizes = {name: image.size for image in node.images for name in image.names}
        out[node.name] = summary_of([(n, s, len(holders[n])) for n, s in sizes.items()])
    return out


def new_snapshot_table(nodes: list[Node]) -> NodeTable:
    """A table whose image summaries are `cache.NewSnapshot(nil, nodes)`'s."""
    table = NodeTable(nodes)
    table.restore_images({}, new_snapshot_summaries(nodes))
    return table


def table_scores(pod: Pod, table: NodeTable) -> list[int]:
    p: ImageLocality = plugin("ImageLocality", table=table)
    return [int(s) for s in p.score_batch(CycleState(), pod, table, np.arange(len(table)))]


def scores(pod: Pod, nodes: list[Node]) -> list[int]:
    """Scores with the cache's summaries: `nodes` added one by one, in order."""
    return table_scores(pod, NodeTable(nodes))


@pytest.mark.parametrize(("name", "pod", "nodes", "expected"), CASES, ids=[c[0] for c in CASES])
def test_upstream_table(name: str, pod: Pod, nodes: list[Node], expected: list[int]) -> None:
    """TestImageLocalityPriority, case by case, on NewSnapshot's summaries."""
    assert table_scores(pod, new_snapshot_table(nodes)) == expected


CACHE_ORDER = [
    # No image on two nodes: as NewSnapshot gives it.
    ("two images spread on two nodes, prefer the larger image one", [0, 5]),
    ("two images on one node, prefer this node", [7, 0]),
    ("if exceed limit, use limit", [100, 0]),
    ("if exceed limit, use limit (with node which has no images present)", [66, 0, 0]),
    # node1 held 600 and 900 alone when added: (600 + 900) * 1/3 = 500MB of 3000MB
    # -> 16, not 32; node2 counts 300 * 1/3 + (600 + 900) * 2/3 = 1100MB -> 36 as upstream.
    ("pod with multiple large images, node2 is preferred", [16, 36, 0]),
    # node1 held gcr.io/30 alone when added: (30 + 40) * 1/2 = 35MB of 2000MB -> 0, not 1.
    ("pod with multiple small images", [0, 0]),
]


@pytest.mark.parametrize(("name", "expected"), CACHE_ORDER, ids=[c[0] for c in CACHE_ORDER])
def test_upstream_table_with_nodes_added_in_order(name: str, expected: list[int]) -> None:
    """The same table as kube-scheduler's cache gives it when the nodes are added in the
    table's order (what the differential suite's recorder does): earlier holders count
    fewer holders."""
    _, pod, nodes, _ = next(c for c in CASES if c[0] == name)
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


def test_a_node_scores_with_its_own_snapshot_until_it_is_updated() -> None:
    """AddNode, AddPod, AddNode, UpdateNode through the cache: NumNodes is the node's
    snapshot (cache.go `createImageStateSummary`), totalNumNodes the count now; the
    index is rebuilt when nodes change, not when pods do."""
    table = NodeTable([image_node("a", (("big:latest",), 1000)), image_node("b")])
    p: ImageLocality = plugin("ImageLocality", table=table)
    pod = image_pod("big")
    # 1000MB * 1/2 = 500MB: 100 * (500 - 23) // (1000 - 23) = 48
    assert p.score_batch(CycleState(), pod, table, np.arange(2)).tolist() == [48, 0]
    built = p.image_index(table)
    table.add_pod(image_pod("other"), "b")
    assert p.image_index(table) is built
    table.upsert_node(image_node("b", (("big:latest",), 1000)))
    # b counts 2 holders (1000MB, the maximum); a still counts the 1 of when it was added.
    assert p.score_batch(CycleState(), pod, table, np.arange(2)).tolist() == [48, 100]
    table.upsert_node(image_node("c"))
    # totalNumNodes is 3 now: a 1000 * 1/3 = 333MB -> 31, b 1000 * 2/3 = 666MB -> 65.
    assert p.score_batch(CycleState(), pod, table, np.arange(3)).tolist() == [31, 65, 0]
    table.upsert_node(image_node("a", (("big:latest",), 1000)))  # an update refreshes a
    assert p.score_batch(CycleState(), pod, table, np.arange(3)).tolist() == [65, 65, 0]


def test_removing_a_holder_changes_no_other_nodes_count() -> None:
    """RemoveNode takes b out of the image's state; c keeps NumNodes 3 from its add, while
    totalNumNodes drops to 2: 900MB * 3/2 clamps to the maximum."""
    nodes = [image_node(n, (("gcr.io/900:latest",), 900)) for n in ("a", "b", "c")]
    table = NodeTable(nodes)
    table.remove_node("b")
    # a: 900 * 1/2 = 450MB -> 43; c: 1350MB clamps to 1000MB -> 100.
    assert table_scores(image_pod("gcr.io/900"), table) == [43, 100]


def test_scores_only_the_candidate_rows_but_counts_every_node() -> None:
    """totalNumNodes is every node of the snapshot, not only the candidates."""
    nodes = [image_node(n, (("gcr.io/900:latest",), 900)) for n in ("a", "b")] + [image_node("c")]
    table = NodeTable(nodes)
    p = plugin("ImageLocality", table=table)
    # b counts 2 holders: 900MB * 2/3 = 600MB: 100 * (600 - 23) // (1000 - 23) = 59
    got = p.score_batch(CycleState(), image_pod("gcr.io/900"), table, np.array([1, 2]))
    assert got.tolist() == [59, 0]
    # a counts 1: 900MB * 1/3 = 300MB -> 28
    got = p.score_batch(CycleState(), image_pod("gcr.io/900"), table, np.array([0]))
    assert got.tolist() == [28]


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
    # a: 500MB * 1/2 = 250MB -> 23; b: 500MB (a's size) * 2/2 -> 48, not 100MB's 7.
    assert scores(image_pod("x"), nodes) == [23, 48]


def test_image_codes_forget_names_no_node_reports_any_more() -> None:
    codes = ImageCodes()
    many = NodeTable([image_node("a", *(((f"img{i}:latest",), 1) for i in range(2000)))])
    codes.build(many)
    assert len(codes.codes) == 2000
    few = NodeTable([image_node("a", (("x:latest",), 100))])
    index = codes.build(few)
    assert len(codes.codes) == 1
    found = index.holders("x:latest")
    assert found is not None and found[0].tolist() == [0] and found[1].tolist() == [100 * MB]
    assert index.holders("img0:latest") is None
