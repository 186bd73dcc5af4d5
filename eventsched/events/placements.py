"""First placements: a mapping that loads a million entries from a snapshot in well under a second.

First placements grow with history (every pod identity ever bound), so
after months a restart would spend most of its time turning the snapshot
into a million Python objects. Instead the snapshot stores each field as
one packed column (text joined by spaces, integers as base64 of a
machine array) with the identities sorted, loading is a few `split`s, a
lookup is a binary search, and a `Placement` is made only when someone
asks for that identity. Entries added or removed after loading live in a
small overlay until the next snapshot packs them in.

Packed text needs a separator no value contains: node names, uids,
namespaces and names cannot hold a space (Kubernetes forbids it), but an
identity taken from an annotation could, so such keys are stored as a
plain JSON list instead.
"""

from __future__ import annotations

import base64
import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterator, MutableMapping
from typing import Any, NamedTuple

__all__ = ["Placement", "PlacementTable"]

#: Kubernetes allows no space in names, namespaces, uids or label values, and a
#: space needs no escaping in JSON (a newline would make the parser unescape each one).
_SEP = " "
#: Namespace and name column value for "the identity is namespace/name": the usual
#: case, stored in one byte instead of twice over ("=" is not allowed in either).
_FROM_KEY = "="


class Placement(NamedTuple):
    """Where a pod identity was first bound: sticky placement keeps it there."""

    node: str | None
    position: int
    uid: str | None
    namespace: str | None
    name: str | None


class PlacementTable(MutableMapping[str, Placement]):
    """identity -> Placement, packed columns underneath plus an overlay of later changes."""

    __slots__ = (
        "_count",
        "_gone",
        "_keys",
        "_names",
        "_namespaces",
        "_node",
        "_nodes",
        "_overlay",
        "_positions",
        "_uids",
    )

    def __init__(self) -> None:
        #: Loaded identities, sorted; row i of every column belongs to _keys[i].
        self._keys: list[str] = []
        self._nodes: list[str | None] = []
        self._node: array[int] = array("i")
        self._positions: array[int] = array("q")
        self._uids = _Column()
        self._namespaces = _Column()
        self._names = _Column()
        #: Entries set since loading, and loaded keys deleted since.
        self._overlay: dict[str, Placement] = {}
        self._gone: set[str] = set()
        self._count = 0

    # -- the mapping --------------------------------------------------------------

    def __getitem__(self, key: str) -> Placement:
        found = self._overlay.get(key)
        if found is not None:
            return found
        row = self._row(key)
        if row is None:
            raise KeyError(key)
        namespace, name = self._namespaces[row], self._names[row]
        if namespace == _FROM_KEY:
            namespace, name = key.split("/", 1)
        return Placement(
            self._nodes[self._node[row]],
            self._positions[row],
            self._uids[row] or None,
            namespace or None,
            name or None,
        )

    def get_node(self, key: str) -> str | None:
        """The node alone (what StickyNode asks for), without making a Placement."""
        found = self._overlay.get(key)
        if found is not None:
            return found.node
        row = self._row(key)
        return None if row is None else self._nodes[self._node[row]]

    def _row(self, key: str) -> int | None:
        """The loaded row of `key` (binary search), unless deleted since."""
        keys = self._keys
        row = bisect_left(keys, key)
        if row == len(keys) or keys[row] != key or key in self._gone:
            return None
        return row

    def __setitem__(self, key: str, value: Placement) -> None:
        if key not in self:
            self._count += 1
        self._overlay[key] = value

    def __delitem__(self, key: str) -> None:
        loaded = self._row(key) is not None
        if key in self._overlay:
            del self._overlay[key]
        elif not loaded:
            raise KeyError(key)
        if loaded:
            self._gone.add(key)
        self._count -= 1

    def __contains__(self, key: object) -> bool:
        if key in self._overlay:
            return True
        return isinstance(key, str) and self._row(key) is not None

    def __iter__(self) -> Iterator[str]:
        gone, overlay = self._gone, self._overlay
        if not gone and not overlay:
            yield from self._keys
            return
        for key in self._keys:
            if key not in gone and key not in overlay:
                yield key
        yield from overlay

    def __len__(self) -> int:
        return self._count

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PlacementTable):
            return len(self) == len(other) and dict(self.items()) == dict(other.items())
        return super().__eq__(other)

    def __repr__(self) -> str:
        return f"PlacementTable({len(self)} identities)"

    def copy(self) -> PlacementTable:
        """An independent table sharing the loaded columns (never changed after loading).

        Cheap (the overlay is copied, not the million loaded rows), so the
        scheduler can hand a copy to the thread that writes the snapshot.
        """
        other = PlacementTable()
        other._keys, other._nodes, other._node = self._keys, self._nodes, self._node
        other._positions = self._positions
        other._uids, other._namespaces, other._names = self._uids, self._namespaces, self._names
        other._overlay = dict(self._overlay)
        other._gone = set(self._gone)
        other._count = self._count
        return other

    # -- packing --------------------------------------------------------------------

    def pack(self) -> dict[str, Any]:
        """The snapshot form: one packed column per field, rows sorted by identity.

        Loaded rows keep their columns; only overlay entries become rows, and
        the two sorted runs merge in one pass of the sort.
        """
        gone, overlay = self._gone, self._overlay
        if not gone and not overlay:
            return self._pack_loaded()
        kept = [i for i, k in enumerate(self._keys) if k not in gone and k not in overlay]
        extra = sorted(overlay)
        keys = [self._keys[i] for i in kept] + extra
        order = sorted(range(len(keys)), key=keys.__getitem__)
        base_nodes, base_node = self._nodes, self._node
        node_names = [base_nodes[base_node[i]] for i in kept] + [overlay[k].node for k in extra]
        positions = [self._positions[i] for i in kept] + [overlay[k].position for k in extra]
        uid, space, name = self._uids.values, self._namespaces.values, self._names.values
        uids = [uid[i] for i in kept] + [overlay[k].uid or "" for k in extra]
        derived = [_derived(k, overlay[k]) for k in extra]
        spaces = [space[i] for i in kept] + [
            _FROM_KEY if d else overlay[k].namespace or ""
            for k, d in zip(extra, derived, strict=True)
        ]
        names = [name[i] for i in kept] + [
            _FROM_KEY if d else overlay[k].name or "" for k, d in zip(extra, derived, strict=True)
        ]
        nodes: dict[str | None, int] = {}
        node = array("i", [nodes.setdefault(node_names[i], len(nodes)) for i in order])
        return _packed(
            [keys[i] for i in order],
            list(nodes),
            node,
            array("q", [positions[i] for i in order]),
            _SEP.join([uids[i] for i in order]),
            _SEP.join([spaces[i] for i in order]),
            _SEP.join([names[i] for i in order]),
        )

    def _pack_loaded(self) -> dict[str, Any]:
        """Nothing changed since loading: the loaded columns are the packed form already."""
        return _packed(
            self._keys,
            list(self._nodes),
            self._node,
            self._positions,
            self._uids.text(),
            self._namespaces.text(),
            self._names.text(),
        )

    @classmethod
    def unpack(cls, state: Any) -> PlacementTable:
        """From `pack()`'s form."""
        table = cls()
        if not state:
            return table
        count = int(state["count"])
        keys = state["key"]
        if isinstance(keys, str):
            keys = keys.split(_SEP) if count else []
        table._nodes = list(state["nodes"])
        table._node = _array("i", state["node"])
        table._positions = _array("q", state["position"])
        table._uids = _Column(state["uid"], count)
        table._namespaces = _Column(state["namespace"], count)
        table._names = _Column(state["name"], count)
        if any(len(c) != count for c in (keys, table._node, table._positions)):
            raise ValueError("packed first placements: columns of different lengths")
        if keys != sorted(keys):  # linear on sorted input; a lookup relies on the order
            raise ValueError("packed first placements: identities not sorted")
        table._keys = keys
        table._count = count
        return table


def _packed(
    keys: list[str],
    nodes: list[str | None],
    node: array[int],
    positions: array[int],
    uids: str,
    namespaces: str,
    names: str,
) -> dict[str, Any]:
    """The snapshot form of sorted rows; identities holding the separator force a JSON list."""
    return {
        "packed": 1,
        "count": len(keys),
        "key": keys if any(_SEP in k for k in keys) else _SEP.join(keys),
        "nodes": nodes,
        "node": _ints(node),
        "position": _ints(positions),
        "uid": uids,
        "namespace": namespaces,
        "name": names,
    }


def _derived(key: str, placement: Placement) -> bool:
    return bool(placement.namespace and placement.name) and (
        key == f"{placement.namespace}/{placement.name}"
    )


def _ints(values: array[int]) -> str:
    """Little-endian machine integers in base64: what any reader of the snapshot can decode."""
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return base64.b64encode(values.tobytes()).decode()


def _array(typecode: str, text: str) -> array[int]:
    values = array(typecode)
    values.frombytes(base64.b64decode(text))
    if sys.byteorder == "big":
        values.byteswap()
    return values


class _Column:
    """A packed text column, split into values only when a value is first asked for.

    The hot path (StickyNode) needs only the node, so a restart does not pay
    for a million uids, namespaces and names it may never look at.
    """

    __slots__ = ("_text", "_values")

    def __init__(self, text: str = "", count: int = 0) -> None:
        if count and text.count(_SEP) != count - 1:
            raise ValueError("packed first placements: columns of different lengths")
        self._text: str | None = text if count else None
        self._values: list[str] | None = None if count else []

    @property
    def values(self) -> list[str]:
        if self._values is None:
            self._values = (self._text or "").split(_SEP)
            self._text = None
        return self._values

    def __getitem__(self, row: int) -> str:
        return self.values[row]

    def text(self) -> str:
        return self._text if self._text is not None else _SEP.join(self.values)
