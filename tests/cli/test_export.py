"""`eventsched export` as a user runs it: export a slice from a log on SQLite and on
PostgreSQL, copy the file to another directory, take the source away, and open the copy
with explain, replay, query and the web page; then edit it and see replay say so."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shutil
import sqlite3
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from eventsched.cli.database import wait_for_schema
from eventsched.cli.main import main
from eventsched.events import EventStore, EventStoreError, display_url, downgrade, upgrade
from eventsched.ui.app import INSECURE_LOCAL, Settings
from tests.ui.conftest import Served
from tests.ui.test_routes import text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "cluster"
POD = "default/too-big"


def eventsched(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "EVENTSCHED_DATABASE_URL"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "eventsched.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def query_rows(db: str, sql: str, cwd: Path) -> list[dict[str, object]]:
    rows = json.loads(ok(eventsched("query", "--format", "json", "--db", db, sql, cwd=cwd)))
    assert isinstance(rows, list)
    return rows


def batch_hashes(db: str, batches: list[int], cwd: Path) -> dict[int, str]:
    listed = ", ".join(str(b) for b in batches)
    sql = f"SELECT batch, hash FROM event_batches WHERE batch IN ({listed})"
    return {int(str(r["batch"])): str(r["hash"]) for r in query_rows(db, sql, cwd)}


@pytest.fixture
def source(db_url: str) -> str:
    """The example cluster simulated twice (a second process finds what the first bound)."""
    for _ in range(2):
        assert main(["simulate", str(EXAMPLES), "--db", db_url]) == 0
    return db_url


def test_a_pod_slice_opens_elsewhere_as_the_source_showed_it(source: str, tmp_path: Path) -> None:
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    exported = eventsched("export", "--pod", POD, "--out", "slice.db", "--db", source, cwd=here)
    said = ok(exported)
    assert exported.stderr == ""  # no progress bar in a pipe
    assert said.startswith("exported ") and f"(pod {POD}) of " in said
    assert "hash chain: ok (every hash computed again as it was copied)" in said
    origin = json.loads(
        ok(
            eventsched(
                "export", "--pod", POD, "--out", "again.db", "--json", "--db", source, cwd=here
            )
        )
    )["slice"]["held"]
    first, last = origin["first_batch"], origin["last_batch"]
    # What the source says, before it is taken away.
    # As of the slice's end, which is the slice's head (the queue is told at the head).
    end = str(origin["last_position"])
    want_explain = json.loads(
        ok(eventsched("explain", POD, "--json", "--at", end, "--db", source, cwd=here))
    )
    want_explain.pop("clusterAt")
    want_full = ok(eventsched("explain", POD, "--full", "--no-numbers", "--db", source, cwd=here))
    hashes = batch_hashes(source, [first - 1, last], here)
    [counted] = query_rows(
        source,
        f"SELECT COUNT(*) AS n FROM events WHERE position BETWEEN {origin['first_position']} "
        f"AND {origin['last_position']}",
        here,
    )

    shutil.copy(here / "slice.db", elsewhere / "slice.db")
    shutil.rmtree(here)
    if source.startswith("sqlite"):
        for suffix in ("", "-wal", "-shm"):
            Path(source.removeprefix("sqlite:///") + suffix).unlink(missing_ok=True)
    else:
        downgrade(source, "base")  # the source's tables are gone

    explained = json.loads(
        ok(eventsched("explain", POD, "--json", "--db", "slice.db", cwd=elsewhere))
    )
    shown = explained.pop("slice")
    assert explained == want_explain
    assert shown["source"] == display_url(source) and shown["selection"] == f"pod {POD}"
    full = ok(
        eventsched(
            "explain", POD, "--full", "--no-numbers", "--db", "sqlite:///slice.db", cwd=elsewhere
        )
    )
    heading, rest = full.split("\n", 1)
    assert heading.startswith(f"From a slice of {display_url(source)} (on ")
    assert rest == want_full

    replayed = eventsched("replay", "--db", "slice.db", cwd=elsewhere)
    out = ok(replayed)
    lines = out.splitlines()
    assert lines[0].startswith(f"slice of {display_url(source)} (on ")
    assert f"batches {first}..{last}" in lines[0]
    assert lines[1] == (
        f"its chain runs from batch {first - 1}'s hash {hashes[first - 1]} to batch {last}'s "
        f"hash {hashes[last]}"
    )
    assert f"WHERE batch IN ({first - 1}, {last})" in lines[2]
    assert lines[3] == f"hash chain: ok ({last - first + 1} batches, {counted['n']} events)"
    attempts = lines[4].split()
    assert attempts[0] == "attempts:" and int(attempts[1]) > 0 and attempts[1] == attempts[3]
    assert " 0 differ, 0 could not be replayed" in lines[4]

    [row] = query_rows(
        "slice.db",
        "SELECT COUNT(*) AS n, MIN(position) AS low, MAX(position) AS high FROM events",
        elsewhere,
    )
    assert row == {
        "n": counted["n"],
        "low": origin["first_position"],
        "high": origin["last_position"],
    }
    [recorded] = query_rows(
        "slice.db",
        "SELECT json_extract(state, '$.source') AS source FROM snapshots "
        "WHERE projection = 'log-slice/v1'",
        elsewhere,
    )
    assert recorded == {"source": display_url(source)}

    with Served(
        Settings(f"sqlite:///{elsewhere / 'slice.db'}", chain_interval=0.2, access=INSECURE_LOCAL)
    ) as served:
        page = served.request(f"/pods/{POD}")
        assert page.status == 200
        words = text(page.body)
        assert f"Slice of {display_url(source)}" in words and f"pod {POD}" in words
        assert "pending: 0/6 nodes are available" in words
        deadline = time.monotonic() + 20
        head = origin["last_position"]
        while f"verified up to position {head} (the head is {head})" not in text(
            served.request("/").body
        ):
            assert time.monotonic() < deadline, "the page's chain check never reached the head"
            time.sleep(0.1)  # polling for the positive signal above


def test_a_time_range_holds_the_batches_recorded_in_it(source: str, tmp_path: Path) -> None:
    batches = query_rows(
        source, "SELECT batch, recorded_at FROM event_batches ORDER BY batch", tmp_path
    )
    assert len(batches) >= 6
    since, until = str(batches[2]["recorded_at"]), str(batches[-2]["recorded_at"])
    out = ok(
        eventsched(
            "export",
            "--since",
            since,
            "--until",
            until,
            "--out",
            "range.db",
            "--db",
            source,
            cwd=tmp_path,
        )
    )
    assert f"batches {batches[2]['batch']}..{batches[-2]['batch']}," in out
    [held] = query_rows(
        "range.db", "SELECT MIN(batch) AS low, MAX(batch) AS high FROM event_batches", tmp_path
    )
    assert held == {"low": batches[2]["batch"], "high": batches[-2]["batch"]}
    replayed = eventsched("replay", "--db", "range.db", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert " 0 differ, 0 could not be replayed" in replayed.stdout
    # The source checks the same attempts: those started in the slice's batches.
    first = query_rows(
        source,
        f"SELECT first_position AS p FROM event_batches WHERE batch = {batches[2]['batch']}",
        tmp_path,
    )[0]["p"]
    last = query_rows("range.db", "SELECT MAX(position) AS p FROM events", tmp_path)[0]["p"]
    whole = eventsched(
        "replay",
        "--since",
        str(int(str(first)) - 1),
        "--until",
        str(last),
        "--db",
        source,
        cwd=tmp_path,
    )
    checked = [line for line in whole.stdout.splitlines() if line.startswith("attempts:")]
    assert checked and checked[0].split()[:2] == replayed.stdout.splitlines()[-1].split()[:2]


def test_an_edited_slice_is_reported_broken(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    upgrade(url)
    assert main(["simulate", str(EXAMPLES), "--db", url]) == 0
    ok(eventsched("export", "--pod", POD, "--out", "slice.db", "--db", url, cwd=tmp_path))
    [edited] = query_rows(
        "slice.db",
        "SELECT e.position, b.batch FROM events e JOIN event_batches b "
        "ON e.position BETWEEN b.first_position AND b.last_position "
        f"WHERE e.kind = 'unschedulable' AND e.namespace || '/' || e.name = '{POD}'",
        tmp_path,
    )
    for name, statements, words in (
        (
            "event",
            "DROP TRIGGER events_no_update; UPDATE events SET data = json_set(data, "
            f"'$.message', 'fits nowhere, honest') WHERE position = {edited['position']}",
            f"hash chain: BROKEN at batch {edited['batch']}: batch {edited['batch']} (positions ",
        ),
        (
            "base",
            "UPDATE snapshots SET state = json_set(state, '$.replay.edited', 'by hand') "
            "WHERE projection = 'log-base/v1'",
            "does not match the digest recorded when it was exported: it was changed",
        ),
        (
            "tail",
            "DROP TRIGGER events_no_delete; DROP TRIGGER event_batches_no_delete; "
            "DELETE FROM events WHERE position > (SELECT first_position - 1 FROM event_batches "
            "ORDER BY batch DESC LIMIT 1); DELETE FROM event_batches WHERE batch = "
            "(SELECT MAX(batch) FROM event_batches)",
            "batches were added or cut",
        ),
    ):
        copy = tmp_path / f"{name}.db"
        shutil.copy(tmp_path / "slice.db", copy)
        with sqlite3.connect(copy) as conn:
            conn.executescript(statements)
        conn.close()
        replayed = eventsched("replay", "--db", copy.name, cwd=tmp_path)
        assert replayed.returncode == 1, (name, replayed.stdout, replayed.stderr)
        assert words in replayed.stdout, (name, replayed.stdout)


def test_a_slice_is_not_appended_to(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    upgrade(url)
    assert main(["simulate", str(EXAMPLES), "--db", url]) == 0
    ok(eventsched("export", "--pod", POD, "--out", "slice.db", "--db", url, cwd=tmp_path))
    done = eventsched("simulate", str(EXAMPLES), "--db", "slice.db", cwd=tmp_path)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "is a slice of" in line and "made to be read" in line
    listed = ok(eventsched("sticky", "list", "--db", "slice.db", cwd=tmp_path))
    assert listed  # reading it is fine
    # What `shadow` and `extender` wait for before they start: the slice is refused there.
    with (
        EventStore.connect(f"sqlite:///{tmp_path / 'slice.db'}") as store,
        pytest.raises(EventStoreError, match=r"is a slice of .* made to be read"),
    ):
        wait_for_schema(store, threading.Event())


def test_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    upgrade(url)
    assert main(["simulate", str(EXAMPLES), "--db", url]) == 0
    argv = ["export", "--since", "1d", "--out", "s.db", "--db", url]
    primary, secondary = pty.openpty()
    # A terminal of 100 columns (a bare pty has 0, in which the bar draws nothing).
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "eventsched.cli.main", *argv],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=secondary,
    )
    os.close(secondary)
    shown = b""
    while True:
        ready, _, _ = select.select([primary], [], [], 60)
        assert ready, "export printed nothing on its terminal for a minute"
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the terminal's other end closed: the process is done
            break
        if not chunk:
            break
        shown += chunk
    os.close(primary)
    assert process.wait(timeout=60) == 0
    assert b"copying" in shown and b"event" in shown


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--pod", "default/nobody"], "--pod default/nobody: the event log at"),
        (["--since", "2000-01-01", "--until", "2000-01-02"], "recorded no batch from 2000-01-01"),
        (["--since", "2d", "--until", "3d"], "is before --since"),
        (["--pod", POD, "--since", "1d"], "--pod and --since/--until: give one"),
        ([], "give --pod NAMESPACE/NAME, or --since TIME"),
        (["--pod", POD, "--out", "exists.db"], "--out exists.db: exists; choose another path"),
        (["--pod", POD, "--out", "missing/slice.db"], "--out missing/slice.db: No such file"),
        (
            ["--pod", POD, "--out", "exists.db/slice.db"],
            "--out exists.db/slice.db: Not a directory",
        ),
        (["--pod", POD, "--out", "events.db", "--force"], "is the event log being exported"),
        (["--since", "yesterday"], "argument --since: invalid value 'yesterday': give a time"),
        (["--since", "12"], "--since takes a time, not a position"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str],
    words: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = "sqlite:///events.db"
    monkeypatch.chdir(tmp_path)
    upgrade(url)
    assert main(["simulate", str(EXAMPLES), "--db", url]) == 0
    (tmp_path / "exists.db").write_text("mine")
    capsys.readouterr()
    if "--out" not in argv:
        argv = [*argv, "--out", "slice.db"]
    try:
        code = main(["export", *argv, "--db", url])
    except SystemExit as exited:  # argparse's refusals
        code = int(str(exited.code))
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    (line,) = err.splitlines()
    assert words in line and "Traceback" not in err
    assert (tmp_path / "exists.db").read_text() == "mine"
    left = [p.name for p in tmp_path.iterdir() if not p.name.startswith(("events.db", "exists.db"))]
    assert left == []  # no slice, no half-written file
