"""`eventsched bench --replay`: the run's own log replayed, timed, and every attempt reproduced."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import sqlalchemy as sa

from eventsched.cli.main import main
from eventsched.events import EventStore


def bench(capsys: pytest.CaptureFixture[str], db_url: str, *extra: str) -> tuple[int, str]:
    capsys.readouterr()  # what fixtures printed (structlog's default goes to stdout)
    code = main(["bench", "--nodes", "40", "--pods", "80", "--seed", "7", *extra, "--db", db_url])
    return code, capsys.readouterr().out


def test_bench_replay_reports_its_speed_and_reproduces_every_attempt(
    capsys: pytest.CaptureFixture[str], db_url: str
) -> None:
    code, out = bench(capsys, db_url, "--replay", "--json")
    assert code == 0
    result = json.loads(out)
    replayed = result["replay"]
    with EventStore.connect(db_url) as store:
        attempts = sum(1 for _ in store.read(kinds=["attempt_started"]))
        last = store.last_position()
    # Every attempt the run logged was decided again, and the same way; every event folded.
    assert attempts >= result["bound"] + result["unschedulable"] == 80
    assert replayed["attempts"] == replayed["reproduced"] == attempts
    assert replayed["differ"] == replayed["skipped"] == 0
    assert replayed["events"] == last
    # A pod's events (top-10 scores included) take kilobytes; a size that missed
    # PostgreSQL's day partitions of `events` came out near 0.
    assert result["log_bytes_per_pod"] > 1000
    assert replayed["seconds"] > 0
    assert replayed["decisions_per_second"] == pytest.approx(attempts / replayed["seconds"])
    assert replayed["events_per_second"] == pytest.approx(last / replayed["seconds"])


def test_bench_replay_text_and_without_replay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path}/with.db"
    code, out = bench(capsys, url, "--replay")
    assert code == 0
    first, second = out.strip().splitlines()
    assert " pods/s, " in first and "80 bound" in first
    assert second.startswith("replay: ") and " decisions/s, " in second
    counts = re.search(
        r" events/s folded \((\d+) of (\d+) attempts reproduced, 0 differ, 0 skipped", second
    )
    assert counts is not None and counts[1] == counts[2] and int(counts[1]) >= 80
    # Without --replay, nothing is replayed (and the run costs no more than before).
    code, out = bench(capsys, f"sqlite:///{tmp_path}/without.db", "--json")
    assert code == 0 and json.loads(out)["replay"] is None


def test_bench_restart_grows_a_log_and_times_a_restart_from_its_snapshot(
    capsys: pytest.CaptureFixture[str], db_url: str
) -> None:
    capsys.readouterr()
    assert (
        main(["bench", "--restart-events", "60000", "--days", "3", "--json", "--db", db_url]) == 0
    )
    result = json.loads(capsys.readouterr().out)
    with EventStore.connect(db_url) as store:
        last = store.last_position()
        days = {e.recorded_at.date() for e in store.read(kinds=["bound"])}
        removed = sum(1 for _ in store.read(kinds=["pod_removed"]))
        times = [e.recorded_at for e in store.read()]
        with store.engine.connect() as conn:
            batch_times = (
                conn.execute(sa.text("SELECT recorded_at FROM event_batches ORDER BY batch"))
                .scalars()
                .all()
            )
    assert times == sorted(times)  # time order is position order, as in a real log
    assert [str(t) for t in batch_times] == sorted(str(t) for t in batch_times)
    assert result["events"] >= 60000 and last == result["events"] + result["tail_events"]
    assert len(days) >= 2  # the copies are spread back over the days asked for
    assert removed > 0
    # Each copy's pods are new identities; each next copy removes them again.
    assert result["first_placements"] > 2 * 2000 // 2
    assert result["observed"] < result["first_placements"]
    assert (
        len(result["restart_runs"]) == 3
        and 0 < result["restart_seconds"] < result["cold_seconds"] * 10
    )
    # Measuring the same log again does not grow it.
    assert main(["bench", "--restart-events", "60000", "--json", "--db", db_url]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["events"] == last


def test_bench_never_writes_into_the_log_the_environment_names(
    capsys: pytest.CaptureFixture[str], db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The log EVENTSCHED_DATABASE_URL names is a real, append-only one: without --db,
    # a benchmark uses a database of its own.
    monkeypatch.setenv("EVENTSCHED_DATABASE_URL", db_url)
    with EventStore.connect(db_url) as store:
        before = store.last_position()
    capsys.readouterr()
    assert main(["bench", "--nodes", "3", "--pods", "5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["bound"] == 5
    with EventStore.connect(db_url) as store:
        assert store.last_position() == before
