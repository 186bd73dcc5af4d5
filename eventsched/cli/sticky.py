"""`eventsched sticky list|forget`: the first placements StickyNode sends pods back to.

First placements are a projection of the log (eventsched.events.projections),
so `list` folds the log (from the newest snapshot) and `forget` is itself an
event: a `maintenance` event with `{"action": "sticky_forget", ...}` that the
projection folds by dropping the identity. Nothing is updated in place.

A running scheduler folds events other processes appended when it next
appends its own (any pod or node change, any attempt), so a forget written
here takes effect there from then on and survives its snapshots.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eventsched.cli.commands import summary
from eventsched.cli.database import open_reader, open_store
from eventsched.events import EventReader, EventRecord, Placement, rebuild

#: Above this many placements `list` does not look up each one's time (one read each).
MAX_TIME_LOOKUPS = 1000


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sticky",
        help=summary("sticky"),
        description="First placements per pod identity, as the event log records them "
        "(`bound` events, minus `sticky_forget` maintenance events).",
    )
    commands = p.add_subparsers(dest="sticky_command", required=True, metavar="ACTION")
    listing = commands.add_parser(
        "list", help="every identity with its first node", description="First placements."
    )
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(func=run_list)
    forget = commands.add_parser(
        "forget",
        help="drop an identity's first placement (appends a maintenance event)",
        description="Append a `maintenance` sticky_forget event: the identity's next "
        "binding becomes its new first placement. A running scheduler picks it up at its "
        "next append.",
    )
    forget.add_argument("identity", metavar="IDENTITY", help="as `eventsched sticky list` shows it")
    forget.set_defaults(func=run_forget)


@dataclass(frozen=True, slots=True)
class Row:
    identity: str
    placement: Placement
    since: str | None

    def to_dict(self) -> dict[str, Any]:
        p = self.placement
        return {
            "identity": self.identity,
            "node": p.node,
            "since": self.since,
            "position": p.position,
            "namespace": p.namespace,
            "name": p.name,
            "uid": p.uid,
        }


def run_list(args: argparse.Namespace) -> int:
    reader = open_reader(args.db)
    try:
        placements = rebuild(reader).first_placements
        times = _times(reader, placements) if len(placements) <= MAX_TIME_LOOKUPS else {}
    finally:
        reader.close()
    rows = [Row(k, p, times.get(p.position)) for k, p in sorted(placements.items())]
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2))
        return 0
    if not rows:
        print("no first placements in the event log")
        return 0
    table = [("IDENTITY", "NODE", "SINCE", "POSITION", "POD", "UID")]
    for r in rows:
        p = r.placement
        pod = f"{p.namespace}/{p.name}" if p.namespace and p.name else "-"
        table.append(
            (r.identity, p.node or "-", r.since or "-", str(p.position), pod, p.uid or "-")
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    for line in table:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(line)).rstrip())
    if len(placements) > MAX_TIME_LOOKUPS:
        print(
            f"(more than {MAX_TIME_LOOKUPS} placements: SINCE not looked up; "
            "POSITION is where the log recorded each)",
            file=sys.stderr,
        )
    return 0


def _times(reader: EventReader, placements: Mapping[str, Placement]) -> dict[int, str]:
    """recorded_at of each placement's event: one primary-key read each."""
    out: dict[int, str] = {}
    for position in {p.position for p in placements.values()}:
        for event in reader.read(after=position - 1, until=position, limit=1):
            out[position] = event.recorded_at.isoformat(timespec="seconds")
    return out


def run_forget(args: argparse.Namespace) -> int:
    identity: str = args.identity
    store = open_store(args.db)
    try:
        placement = rebuild(store).first_placements.get(identity)
        if placement is None:
            print(
                f"eventsched: error: identity {identity!r} has no first placement in the event "
                "log; `eventsched sticky list` shows those that do",
                file=sys.stderr,
            )
            return 2
        (position,) = store.append(
            [
                EventRecord(
                    kind="maintenance",
                    instance="cli",
                    uid=placement.uid,
                    namespace=placement.namespace,
                    name=placement.name,
                    node=placement.node,
                    plugin="StickyNode",
                    data={
                        "action": "sticky_forget",
                        "identity": identity,
                        "reason": "eventsched sticky forget",
                        "placedAt": placement.position,
                    },
                )
            ]
        )
    finally:
        store.close()
    print(
        f"forgot {identity}: first placement on {placement.node or '-'} "
        f"(log position {placement.position}); recorded at position {position}"
    )
    return 0
