"""The view's saved form gives back kube-scheduler's image state snapshots exactly.

`from_state` re-adds the saved nodes in row order, which by itself would give
each node the holder count of the rows before it and each image the size of its
first row; the saved form also keeps each node's summary and each state's size
(model/imagestates.py), so a pruned log's base decides ImageLocality as the log did.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from eventsched.events.record import EventRecord
from eventsched.framework import CycleState, Handle
from eventsched.model import Node, NodeTable, Pod
from eventsched.model.node import NodeImage
from eventsched.plugins import in_tree_registry
from eventsched.view import ClusterView

MB = 1024 * 1024


def observed(name: str, *images: tuple[str, int]) -> EventRecord:
    node = Node(name, images=tuple(NodeImage((n,), size * MB) for n, size in images))
    return EventRecord("node_observed", node=name, data=node.to_record())


def removed(name: str) -> EventRecord:
    return EventRecord("node_removed", node=name, data={"uid": ""})


def summaries(table: NodeTable) -> dict[str, list[list[Any]]]:
    return {name: s.to_record() for name, s in zip(table.names, table.image_summaries, strict=True)}


def image_scores(table: NodeTable, image: str) -> list[int]:
    pod = Pod.from_manifest(
        {
            "metadata": {"name": "p", "namespace": "default", "uid": "u"},
            "spec": {"containers": [{"name": "c", "image": image}]},
        }
    )
    plugin = in_tree_registry().factory("ImageLocality")({}, Handle(table))
    return plugin.score_batch(CycleState(), pod, table, np.arange(len(table))).tolist()


def test_saved_summaries_and_sizes_come_back() -> None:
    view = ClusterView()
    for fact in [
        observed("a", ("x:latest", 500)),
        observed("b", ("x:latest", 100)),
        observed("c", ("x:latest", 100)),
        removed("a"),  # the state keeps a's size with b and c holding it
        observed("b", ("x:latest", 100)),  # b refreshed: 2 holders
        observed("d", ("x:latest", 50)),
    ]:
        view.apply(fact)
    live = summaries(view.table)
    assert live == {
        "b": [["x:latest", 500 * MB, 2]],
        "c": [["x:latest", 500 * MB, 3]],
        "d": [["x:latest", 500 * MB, 3]],
    }
    state = view.to_state()
    restored = ClusterView.from_state(state)
    assert summaries(restored.table) == live
    assert restored.table.images.sizes() == {"x:latest": 500 * MB}
    assert restored.to_state() == state
    # b: 500MB * 2/3 -> 31; c and d: 500MB * 3/3 -> 48.
    assert image_scores(restored.table, "x") == image_scores(view.table, "x") == [31, 48, 48]
    # Without the saved summaries the nodes re-added in row order would score otherwise:
    # b would create the state with its 100MB and count 1, c 2, d 3.
    assert image_scores(NodeTable(restored.table.nodes), "x") == [1, 4, 7]


def test_a_saved_form_without_images_keeps_the_re_added_summaries() -> None:
    """A base saved before the saved form had "images": the nodes' own re-add."""
    view = ClusterView()
    view.apply(observed("a", ("x:latest", 100)))
    view.apply(observed("b", ("x:latest", 100)))
    state = {k: v for k, v in view.to_state().items() if k != "images"}
    assert summaries(ClusterView.from_state(state).table) == summaries(view.table)


facts = st.lists(
    st.one_of(
        st.builds(
            lambda i, imgs: observed(f"n{i}", *imgs),
            st.integers(0, 4),
            st.lists(
                st.tuples(st.sampled_from(["x:latest", "y:latest", "z:v1"]), st.integers(1, 900)),
                max_size=3,
            ),
        ),
        st.builds(lambda i: removed(f"n{i}"), st.integers(0, 4)),
    ),
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(facts)
def test_from_state_of_to_state_is_the_same_view(events: list[EventRecord]) -> None:
    view = ClusterView()
    for fact in events:
        view.apply(fact)
    state = view.to_state()
    restored = ClusterView.from_state(state)
    assert summaries(restored.table) == summaries(view.table)
    assert restored.table.images.sizes() == view.table.images.sizes()
    assert restored.to_state() == state
    # Nodes added or updated later go on from the same states.
    for fact in (observed("n9", ("x:latest", 1)), observed("n0", ("y:latest", 2))):
        view.apply(fact)
        restored.apply(fact)
    assert summaries(restored.table) == summaries(view.table)
