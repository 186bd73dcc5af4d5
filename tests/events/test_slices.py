"""Exporting a slice (events/export.py, cli/export.py): what the file holds, page by page,
from a whole log, from a pruned one, and from one whose chain is broken."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from eventsched.audit import replay
from eventsched.audit.retention import fold_until
from eventsched.cli.db import prune
from eventsched.cli.export import ExportRequest, export
from eventsched.cli.main import main
from eventsched.events import EventStore, LogBase, LogReader, read_base, upgrade
from eventsched.events.export import SliceFile, batches_recorded, copy_slice
from eventsched.events.slices import read_origin
from eventsched.plugins import full_registry
from tests.audit.test_prune import NOW, run_phase

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "cluster"


@pytest.mark.parametrize("page_size", [1, 7, 5000])
def test_any_page_size_copies_the_whole_log_as_it_is(
    db_url: str, tmp_path: Path, page_size: int
) -> None:
    assert main(["simulate", str(EXAMPLES), "--db", db_url]) == 0
    source = LogReader.connect(db_url)
    try:
        chosen = batches_recorded(source, None, None)
        assert chosen is not None and chosen.first_batch == 1 and chosen.anchor.hash == ""
        base = fold_until(source, LogBase.genesis(), chosen.anchor.position)
        out = tmp_path / "out" / "whole.db"
        out.parent.mkdir()
        with SliceFile(out) as target:
            copied = copy_slice(source, target, chosen, base.state, "all", page_size=page_size)
            target.finish(replace=False)
        assert copied.chain.ok and copied.chain.events == chosen.events
        want = list(source.read())
    finally:
        source.close()
    assert sorted(p.name for p in out.parent.iterdir()) == ["whole.db"]  # no -wal, no .partial
    sliced = LogReader.connect(f"sqlite:///{out}")
    try:
        assert list(sliced.read()) == want
        chain = sliced.verify_chain()
        assert chain.ok and chain.last_hash == chosen.last_hash, chain.detail
        origin = read_origin(sliced)
        assert origin is not None and origin.held.anchor.batch == 0 and origin.selection == "all"
        assert replay(sliced, full_registry()).ok
    finally:
        sliced.close()


def test_a_slice_of_a_pruned_log_starts_from_what_the_prune_kept(
    db_url: str, tmp_path: Path
) -> None:
    for days_ago, seed in ((3, 1), (1, 2), (0, 3)):
        run_phase(db_url, NOW - timedelta(days=days_ago), seed)
    with EventStore.connect(db_url) as store:
        assert prune(store, NOW - timedelta(days=2)) is not None
        kept = read_base(store)
    assert kept is not None
    source = LogReader.connect(db_url)
    try:
        whole = replay(source, full_registry())
        # The day after the cut starts at the prune's base; today's is folded on from it.
        middle = ExportRequest(None, NOW - timedelta(days=2), NOW - timedelta(hours=12))
        first = export(source, middle, tmp_path / "middle.db", force=False)
        last = export(
            source,
            ExportRequest(None, NOW - timedelta(hours=12), None),
            tmp_path / "last.db",
            force=False,
        )
    finally:
        source.close()
    assert first.chain.ok and first.origin.held.anchor.batch == kept.batch
    assert (
        last.chain.ok and last.origin.held.anchor.batch == first.origin.held.last_batch > kept.batch
    )
    attempts = 0
    for name in ("middle.db", "last.db"):
        sliced = LogReader.connect(f"sqlite:///{tmp_path / name}")
        try:
            assert sliced.verify_chain().ok
            again = replay(sliced, full_registry())
        finally:
            sliced.close()
        assert again.ok and again.skipped == [] and again.reproduced == again.attempts > 0
        attempts += again.attempts
    assert attempts == whole.attempts  # the two days after the cut, every attempt of each


def test_a_broken_source_is_copied_as_it_is_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    upgrade(url)
    assert main(["simulate", str(EXAMPLES), "--db", url]) == 0
    with sqlite3.connect(tmp_path / "events.db") as conn:
        conn.executescript(
            "DROP TRIGGER events_no_update; UPDATE events SET node = 'worker-9' "
            "WHERE position = (SELECT MIN(position) FROM events WHERE kind = 'bound')"
        )
        [batch] = conn.execute(
            "SELECT batch FROM event_batches b JOIN events e ON e.position BETWEEN "
            "b.first_position AND b.last_position WHERE e.node = 'worker-9'"
        ).fetchone()
    conn.close()
    capsys.readouterr()
    out = tmp_path / "slice.db"
    assert main(["export", "--since", "1d", "--out", str(out), "--db", url]) == 1
    said = capsys.readouterr().out
    assert f"hash chain: BROKEN at batch {batch} in the source: batch {batch} " in said
    assert out.exists()
    sliced = LogReader.connect(f"sqlite:///{out}")
    try:
        chain = sliced.verify_chain()
    finally:
        sliced.close()
    assert not chain.ok and chain.first_broken_batch == batch
