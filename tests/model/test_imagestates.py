"""NodeTable's image states against kube-scheduler v1.28's cache (internal/cache/cache.go).

Upstream's cache_test.go builds every node without images (its ImageStates are
empty maps), so these cases pin `addNodeImageStates`, `removeNodeImageStates` and
`createImageStateSummary` as AddNode, UpdateNode and RemoveNode call them; the
property test runs a plain transliteration of those functions next to the table.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from eventsched.model import Node, NodeTable, Pod
from eventsched.model.imagestates import ImageSummary
from eventsched.model.node import NodeImage

MB = 1024 * 1024


def image_node(name: str, *images: tuple[tuple[str, ...], int]) -> Node:
    """A node whose `status.images` lists these (names, size in MB)."""
    return Node(name=name, images=tuple(NodeImage(names, size * MB) for names, size in images))


def summary(table: NodeTable, node: str) -> dict[str, tuple[int, int]]:
    """The node's ImageStates as {name: (Size in MB, NumNodes)}."""
    row = table.row_of(node)
    assert row is not None
    return {n: (s // MB, c) for n, s, c in table.image_summaries[row].items()}


def test_a_node_added_before_other_holders_keeps_its_lower_count() -> None:
    """createImageStateSummary snapshots len(state.nodes) when the node is added."""
    table = NodeTable([image_node(n, (("x:latest",), 100)) for n in ("a", "b", "c")])
    assert [summary(table, n) for n in ("a", "b", "c")] == [
        {"x:latest": (100, 1)},
        {"x:latest": (100, 2)},
        {"x:latest": (100, 3)},
    ]
    state = table.images.get("x:latest")
    assert state is not None and state.nodes == {"a", "b", "c"}


def test_an_update_of_the_node_refreshes_its_snapshot() -> None:
    """UpdateNode: removeNodeImageStates(old), then addNodeImageStates(new) counts anew."""
    table = NodeTable([image_node(n, (("x:latest",), 100)) for n in ("a", "b", "c")])
    table.upsert_node(image_node("a", (("x:latest",), 100)))
    assert summary(table, "a") == {"x:latest": (100, 3)}
    assert summary(table, "b") == {"x:latest": (100, 2)}


def test_a_pod_change_refreshes_nothing() -> None:
    """Only AddNode and UpdateNode make summaries: AddPod leaves them (and the index) be."""
    table = NodeTable([image_node(n, (("x:latest",), 100)) for n in ("a", "b")])
    before = table.image_summaries[0]
    generation = table.node_generation
    table.add_pod(Pod(uid="u", namespace="default", name="p"), "a")
    assert table.image_summaries[0] is before and table.node_generation == generation


def test_removing_a_holder_leaves_the_others_snapshots() -> None:
    """RemoveNode takes the node out of the states; no other node's summary changes."""
    table = NodeTable([image_node(n, (("x:latest",), 100)) for n in ("a", "b", "c")])
    table.remove_node("b")
    assert summary(table, "a") == {"x:latest": (100, 1)}
    assert summary(table, "c") == {"x:latest": (100, 3)}
    state = table.images.get("x:latest")
    assert state is not None and state.nodes == {"a", "c"}
    table.upsert_node(image_node("c", (("x:latest",), 100)))
    assert summary(table, "c") == {"x:latest": (100, 2)}


def test_the_size_is_the_creating_nodes_report_while_the_state_lives() -> None:
    """addNodeImageStates creates a state with this node's sizeBytes and only inserts into
    an existing one; a state no node holds is deleted and the next holder sizes it anew."""
    table = NodeTable(
        [image_node("a", (("x:latest",), 500)), image_node("b", (("x:latest",), 100))]
    )
    assert summary(table, "b") == {"x:latest": (500, 2)}
    table.remove_node("a")  # the creator goes, the state stays with b
    table.upsert_node(image_node("c", (("x:latest",), 50)))
    assert summary(table, "c") == {"x:latest": (500, 2)}
    table.remove_node("b")
    table.remove_node("c")
    assert table.images.get("x:latest") is None and len(table.images) == 0
    table.upsert_node(image_node("d", (("x:latest",), 50)))
    assert summary(table, "d") == {"x:latest": (50, 1)}


def test_an_updated_node_that_dropped_an_image_is_no_holder() -> None:
    table = NodeTable(
        [image_node("a", (("x:latest",), 100)), image_node("b", (("x:latest",), 100))]
    )
    table.upsert_node(image_node("a", (("y:latest",), 10)))
    assert summary(table, "a") == {"y:latest": (10, 1)}
    state = table.images.get("x:latest")
    assert state is not None and state.nodes == {"b"}


def test_a_name_the_node_lists_twice_takes_its_first_listing() -> None:
    """newSum keeps the first summary of a name; the second listing inserts the node again."""
    table = NodeTable([image_node("a", (("x:latest", "x:v1"), 300), (("x:latest",), 7))])
    assert summary(table, "a") == {"x:latest": (300, 1), "x:v1": (300, 1)}


# -- the table against a transliteration of cache.go --------------------------------------

NAMES = ("x:latest", "x:v1", "y:latest", "z:latest")


class ReferenceCache:
    """cache.go's AddNode / UpdateNode / RemoveNode as far as image states go."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.image_states: dict[str, tuple[int, set[str]]] = {}
        self.summaries: dict[str, dict[str, tuple[int, int]]] = {}

    def add_or_update(self, node: Node) -> None:
        old = self.nodes.get(node.name)
        if old is not None:
            self._remove_images(old)
        self.nodes[node.name] = node
        new_sum: dict[str, tuple[int, int]] = {}
        for image in node.images:
            for name in image.names:
                if name not in self.image_states:
                    self.image_states[name] = (image.size, {node.name})
                else:
                    self.image_states[name][1].add(node.name)
                if name not in new_sum:
                    size, holders = self.image_states[name]
                    new_sum[name] = (size, len(holders))
        self.summaries[node.name] = new_sum

    def remove(self, name: str) -> None:
        node = self.nodes.pop(name, None)
        if node is not None:
            self._remove_images(node)
            del self.summaries[name]

    def _remove_images(self, node: Node) -> None:
        for image in node.images:
            for name in image.names:
                if name in self.image_states:
                    self.image_states[name][1].discard(node.name)
                    if not self.image_states[name][1]:
                        del self.image_states[name]


images = st.lists(
    st.tuples(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2), st.integers(1, 900)),
    max_size=3,
)
operations = st.lists(
    st.tuples(st.sampled_from(["upsert", "upsert", "remove"]), st.integers(0, 4), images),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(operations)
def test_summaries_and_states_equal_cache_gos(ops: list[tuple[str, int, list]]) -> None:
    table = NodeTable()
    reference = ReferenceCache()
    for op, i, node_images in ops:
        name = f"n{i}"
        if op == "remove":
            table.remove_node(name)
            reference.remove(name)
            continue
        node = Node(name, images=tuple(NodeImage(tuple(n), s) for n, s in node_images))
        table.upsert_node(node)
        reference.add_or_update(node)
    got = {
        name: {n: (s, c) for n, s, c in table.image_summaries[row].items()}
        for name, row in table.index.items()
    }
    assert got == reference.summaries
    assert table.images.sizes() == {n: s for n, (s, _) in reference.image_states.items()}
    for name, (_, holders) in reference.image_states.items():
        state = table.images.get(name)
        assert state is not None and state.nodes == holders


def test_summary_record_round_trips() -> None:
    table = NodeTable([image_node("a", (("x:latest", "x:v1"), 300), (("y:latest",), 7))])
    saved = table.image_summaries[0]
    assert ImageSummary.from_record(saved.to_record()) == saved
    assert saved.get("y:latest") == (7 * MB, 1) and saved.get("nope") is None
