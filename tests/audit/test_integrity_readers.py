"""Every read path of the command line says so when the record it shows contradicts itself:
`explain` (text and --json), `query` and `replay`, on SQLite and PostgreSQL.

Two ways a record goes wrong: a `bound` row's node edited behind the append-only triggers
(the hash chain breaks where the row is, and the pod's events no longer agree), and a
`bound` appended through the store's own API that names another node than the attempt
selected (the chain verifies; the events contradict each other).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from eventsched.events import EventRecord, EventStore
from tests.audit.test_replay import editing_events
from tests.conftest import Done

ROOT = Path(__file__).resolve().parents[2]
POD = ("shop", "checkout")


@dataclass(frozen=True)
class Binding:
    """shop/checkout's binding: its attempt, the node it selected, and the `bound` row."""

    uid: str
    attempt: str
    selected: str
    position: int
    batch: int
    #: Another node of the example cluster, the one the tampering names.
    other: str


def simulated(cli: Callable[..., Done], store: EventStore) -> Binding:
    assert cli("simulate", str(ROOT / "examples" / "cluster")).code == 0
    events = store.read_pod(*POD)
    selected = next(e for e in events if e.kind == "selected")
    bound = next(e for e in events if e.kind == "bound")
    assert selected.node and bound.node == selected.node
    [batch] = store.batches_holding([bound.position])
    other = next(n for n in ("worker-1", "worker-2", "worker-3") if n != selected.node)
    return Binding(
        str(bound.uid), str(bound.attempt), selected.node, bound.position, batch.batch, other
    )


def move_binding(db_url: str, binding: Binding) -> None:
    """An attacker who owns the tables says the pod was bound elsewhere."""
    with editing_events(db_url) as conn:
        conn.execute(
            sa.text("UPDATE events SET node = :node WHERE position = :p"),
            {"node": binding.other, "p": binding.position},
        )


def contradiction(binding: Binding) -> str:
    return (
        f"bound to {binding.other} (position {binding.position}), but the attempt selected "
        f"{binding.selected}"
    )


def test_explain_text_warns_on_the_spot(
    cli: Callable[..., Done], store: EventStore, db_url: str
) -> None:
    binding = simulated(cli, store)
    clean = cli("explain", "shop/checkout")
    assert clean.code == 0 and "WARNING" not in clean.out
    move_binding(db_url, binding)
    done = cli("explain", "shop/checkout")
    assert done.code == 1
    lines = done.out.splitlines()
    assert lines[0] == "Pod shop/checkout"
    assert lines[1].startswith(f"  WARNING: hash chain broken at batch {binding.batch} (positions")
    assert "does not match its hash: an event in it was changed" in lines[1]
    assert any(
        line.startswith("  WARNING: shop/checkout: its events contradict each other: ")
        and contradiction(binding) in line
        for line in lines[2:4]
    ), lines[:5]
    assert f"Bound to {binding.other}" in done.out  # what the log now says, flagged above


def test_explain_json_carries_the_findings(
    cli: Callable[..., Done], store: EventStore, db_url: str
) -> None:
    binding = simulated(cli, store)
    clean = json.loads(cli("explain", "shop/checkout", "--json").out)["integrity"]
    assert clean["ok"] is True and clean["breaks"] == [] and clean["contradictions"] == []
    assert clean["batches"] >= 2 and clean["events"] > 0
    move_binding(db_url, binding)
    done = cli("explain", "shop/checkout", "--json")
    assert done.code == 1
    found = json.loads(done.out)["integrity"]
    assert found["ok"] is False
    [broken] = found["breaks"]
    assert broken["batch"] == binding.batch and broken["found_by"] == "shown"
    assert broken["first_position"] <= binding.position <= broken["last_position"]
    said = next(c for c in found["contradictions"] if c["earlier_position"] != binding.position)
    assert said["kind"] == "bound" and said["position"] == binding.position
    assert said["attempt"] == binding.attempt and said["node"] == binding.other
    assert contradiction(binding) in said["detail"]


def test_query_warns_on_stderr_and_exits_1(
    cli: Callable[..., Done], store: EventStore, db_url: str
) -> None:
    binding = simulated(cli, store)
    rows = "SELECT position, uid, name, node FROM placements ORDER BY position"
    counted = "SELECT node, COUNT(*) AS pods FROM placements GROUP BY node ORDER BY node"
    for sql in (rows, counted):
        clean = cli("query", sql)
        assert clean.code == 0 and clean.err == "", clean.err
    move_binding(db_url, binding)
    done = cli("query", rows)
    assert done.code == 1
    assert f"{binding.position}  {binding.uid}  checkout" in done.out  # the rows, still
    assert f"WARNING: hash chain broken at batch {binding.batch} (positions" in done.err
    assert contradiction(binding) in done.err
    # Counted rows name no position: the chain itself is verified (all of it, this log
    # being smaller than the newest 20,000 events).
    done = cli("query", counted)
    assert done.code == 1
    assert f"WARNING: hash chain broken at batch {binding.batch} (from position" in done.err
    assert cli("query", rows, "--verify", "none").code == 0


def test_replay_counts_the_attempt_as_a_difference(
    cli: Callable[..., Done], store: EventStore, db_url: str
) -> None:
    binding = simulated(cli, store)
    move_binding(db_url, binding)
    done = cli("replay", "--json")
    assert done.code == 1
    report = json.loads(done.out)
    assert report["chain"]["ok"] is False and report["chain"]["firstBrokenBatch"] == binding.batch
    [mismatch] = report["mismatches"]
    assert mismatch["attempt"] == binding.attempt and mismatch["kind"] == "bound"
    assert mismatch["pod"] == "shop/checkout" and mismatch["replayed"] == binding.selected
    assert mismatch["recorded"] == f"bound {binding.other} (position {binding.position})"
    assert contradiction(binding) in mismatch["detail"]
    assert report["reproduced"] == report["attempts"] - 1
    text = cli("replay")
    assert text.code == 1 and "1 differ" in text.out
    assert f"DIFFERS shop/checkout attempt {binding.attempt}" in text.out


def test_a_contradiction_written_through_the_append_api(
    cli: Callable[..., Done], store: EventStore
) -> None:
    """The chain verifies, and still the record cannot all be true: the pod bound a second
    time, elsewhere, by the attempt that selected another node."""
    binding = simulated(cli, store)
    [position] = store.append(
        [
            EventRecord(
                kind="bound",
                attempt=binding.attempt,
                uid=binding.uid,
                namespace="shop",
                name="checkout",
                node=binding.other,
                data={"code": 201},
            )
        ]
    )
    assert store.verify_chain().ok
    text = cli("explain", "shop/checkout")
    assert text.code == 1 and "hash chain broken" not in text.out
    assert (
        f"bound to {binding.other} (position {position}), but the attempt selected "
        f"{binding.selected}" in text.out
    )
    assert f"but it was bound to {binding.selected} (position {binding.position})" in text.out
    found = json.loads(cli("explain", "shop/checkout", "--json").out)["integrity"]
    assert found["breaks"] == [] and {c["position"] for c in found["contradictions"]} == {position}
    query = cli("query", "SELECT position, uid, node FROM placements")
    assert query.code == 1 and "hash chain" not in query.err
    assert "its events contradict each other" in query.err
    replayed = cli("replay", "--json")
    assert replayed.code == 1
    report = json.loads(replayed.out)
    assert report["chain"]["ok"] is True
    [mismatch] = report["mismatches"]
    assert mismatch["attempt"] == binding.attempt and mismatch["kind"] == "bound"
    assert report["reproduced"] == report["attempts"] - 1


def test_explain_says_what_it_left_unchecked(
    cli: Callable[..., Done], store: EventStore, capsys: pytest.CaptureFixture[str]
) -> None:
    simulated(cli, store)
    done = cli("explain", "shop/checkout", "--check-events", "1")
    assert done.code == 0  # nothing found: nothing checked
    note = done.out.splitlines()[1]
    assert note.startswith("  Note: ") and "hash-chain batch(es) holding these events" in note
    assert note.endswith("not checked: over --check-events (0 checks them all)")
    found = json.loads(cli("explain", "shop/checkout", "--json", "--check-events", "1").out)
    assert found["integrity"]["batches"] == 0 and found["integrity"]["unchecked"] >= 2
    everything = json.loads(cli("explain", "shop/checkout", "--json", "--check-events", "0").out)
    assert everything["integrity"]["unchecked"] == 0
    assert everything["integrity"]["batches"] == found["integrity"]["unchecked"]
    with pytest.raises(SystemExit) as refused:
        cli("explain", "shop/checkout", "--check-events", "-1")
    assert refused.value.code == 2
    assert capsys.readouterr().err == (
        "eventsched explain: error: argument --check-events: must be 0 or more, got -1 "
        "(see eventsched explain --help)\n"
    )
