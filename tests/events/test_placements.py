"""PlacementTable behaves as a dict of first placements, packed or not."""

from __future__ import annotations

import json
import random

import pytest

from eventsched.events.placements import Placement, PlacementTable


def placement(i: int) -> Placement:
    return Placement(f"node-{i % 7}", i, f"uid-{i}", "ns", f"pod-{i}")


def reload(table: PlacementTable) -> PlacementTable:
    return PlacementTable.unpack(json.loads(json.dumps(table.pack())))


def test_a_packed_table_loads_back_equal_and_keeps_changing_like_a_dict() -> None:
    rng = random.Random(5)
    table, model = PlacementTable(), {}
    for step in range(3000):
        key = f"ns/pod-{rng.randrange(400)}"
        action = rng.random()
        if action < 0.6:
            table[key] = model[key] = placement(step)
        elif action < 0.8 and key in model:
            del table[key]
            del model[key]
        elif action < 0.9:
            assert table.pop(key, None) == model.pop(key, None)
        else:
            table = reload(table)
        assert len(table) == len(model)
        assert (key in table) == (key in model)
        assert table.get_node(key) == (model[key].node if key in model else None)
    assert dict(table.items()) == model
    assert reload(table) == table
    assert sorted(table) == sorted(model)


def test_none_fields_and_odd_identities_survive_packing() -> None:
    table = PlacementTable()
    table["ns/derived"] = Placement("n1", 2, "u2", "ns", "derived")
    table["ns/StatefulSet/db/0"] = Placement("n2", 4, "u4", "ns", "db-0")
    table["other/x"] = Placement("n2", 5, "u5", "ns", "x")
    table["a b\nc"] = Placement(None, 3, None, None, None)
    table["ns/x"] = Placement("n1", 1, "u", "ns", "x")
    assert dict(reload(table).items()) == dict(table.items())
    # Packed again after a change: the loaded identity with a space still survives.
    loaded = reload(table)
    loaded["ns/later"] = Placement("n3", 9, "u9", "ns", "later")
    assert dict(reload(loaded).items()) == dict(loaded.items())
    assert reload(PlacementTable()) == PlacementTable()


def test_a_damaged_packed_column_is_refused() -> None:
    table = PlacementTable()
    for i in range(3):
        table[f"ns/{i}"] = placement(i)
    packed = table.pack()
    packed["uid"] = "only-one"
    with pytest.raises(ValueError, match="different lengths"):
        PlacementTable.unpack(packed)
    packed = table.pack()
    packed["key"] = "ns/2 ns/1 ns/0"
    with pytest.raises(ValueError, match="not sorted"):
        PlacementTable.unpack(packed)
