"""`eventsched query`: read-only SQL over a log that `eventsched simulate` wrote, on both databases.

The query cookbook's example queries (docs/querying.md) are the
constants below, run through the command against the log of three
simulations of examples/ and checked against what the raw events say.
Every way of writing is tried and must be refused with one line, exit 2,
and the database must be exactly as before.
"""

from __future__ import annotations

import csv
import io
import json
import os
import secrets
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from eventsched.audit.query import QueryError, single_statement
from eventsched.cli.main import main
from eventsched.config import default_profile, profile_digest
from eventsched.config.featuregates import features_for, newest
from eventsched.events import DECISION_KINDS, EventRecord, EventStore, StoredEvent, upgrade
from eventsched.framework import score_cells
from tests.cookbook import cookbook

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
#: The default profile's configuration digest (config_loaded.digest, attempt_started.configDigest)
#: as `simulate` loads it: at the newest version, which is part of the profile's record.
DEFAULT_DIGEST = profile_digest(default_profile(features=features_for(newest())))

# -- the cookbook's queries -----------------------------------------------------------

MOVED = cookbook("moved", "any")
TOP_REJECTER = {d: cookbook("top-rejecter", d) for d in ("postgresql", "sqlite")}
UNSCHEDULABLE_TIME = {d: cookbook("unschedulable-time", d) for d in ("postgresql", "sqlite")}
CONFIGURATIONS = cookbook("configurations", "any")
UNDER_CONFIGURATION = cookbook("under-configuration", "any")
WINNING_SCORES = cookbook("winning-scores", "any")


# -- the log ----------------------------------------------------------------------------


def eventsched(*args: str, db: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EVENTSCHED_DATABASE_URL": db}
    return subprocess.run(
        [sys.executable, "-m", "eventsched.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        input=stdin,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def simulated(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """(backend, URL) of a log of three simulations; shared, since queries only read.

    examples/cluster twice (the second run re-places every pod by identity,
    some on other nodes) and examples/coscheduling with its own profile (a
    second configuration digest, gang pods left unschedulable).
    """
    backend = str(request.param)
    admin: sa.Engine | None = None
    schema = ""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('query') / 'events.db'}"
    else:
        server = request.getfixturevalue("postgres_server")
        schema = f"eventsched_query_{os.getpid()}_{secrets.token_hex(3)}"
        admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        url = (
            make_url(server)
            .update_query_dict({"options": f"-csearch_path={schema}"})
            .render_as_string(hide_password=False)
        )
    try:
        upgrade(url)
        for args in (
            [str(EXAMPLES / "cluster")],
            [str(EXAMPLES / "cluster")],
            [
                "--config",
                str(EXAMPLES / "profiles" / "coscheduling.yaml"),
                str(EXAMPLES / "coscheduling"),
            ],
        ):
            done = eventsched("simulate", *args, db=url)
            assert done.returncode == 0, done.stderr
        yield backend, url
    finally:
        if admin is not None:
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
            admin.dispose()


def all_events(url: str) -> list[StoredEvent]:
    with EventStore.connect(url) as store:
        return list(store.read())


def query(url: str, sql: str, *args: str, capsys: pytest.CaptureFixture[str]) -> Any:
    """Run `eventsched query SQL --format json` in this process; the parsed rows."""
    capsys.readouterr()  # what ran before (log lines of EventStore.connect) is not output
    code = main(["query", sql, "--format", "json", "--db", url, *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def refused(url: str, sql: str, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run a query that must fail; its one line of error."""
    capsys.readouterr()
    code = main(["query", sql, "--db", url, *args])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("eventsched: error: ")
    return line


def fingerprint(url: str) -> dict[str, Any]:
    """Everything a write could change: row counts, the head of the chain, the schema's objects."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            counts = {
                t: conn.execute(sa.text(f"SELECT COUNT(*) FROM {t}")).scalar()
                for t in ("events", "event_batches", "snapshots", "alembic_version")
            }
            head = conn.execute(
                sa.text("SELECT batch, hash FROM event_batches ORDER BY batch DESC LIMIT 1")
            ).one()
            objects = sorted(sa.inspect(conn).get_table_names() + sa.inspect(conn).get_view_names())
    finally:
        engine.dispose()
    return {"counts": counts, "head": tuple(head), "objects": objects}


# -- what the raw events say --------------------------------------------------------------


def expected_moves(events: list[StoredEvent]) -> dict[str, tuple[str, str]]:
    first: dict[str, str] = {}
    last: dict[str, str] = {}
    for e in events:
        if e.kind == "bound":
            identity = e.data.get("identity") or f"{e.namespace}/{e.name}"
            first.setdefault(identity, e.node or "")
            last[identity] = e.node or ""
    return {i: (first[i], last[i]) for i in first if first[i] != last[i]}


def expected_rejections(events: list[StoredEvent]) -> list[tuple[str, int, int]]:
    pairs: dict[str, set[tuple[int, str]]] = defaultdict(set)
    for e in events:
        if e.kind == "filtered":
            for r in e.data.get("rejections", []):
                for node in r.get("nodes", []):
                    pairs[r["plugin"]].add((e.position, node))
    rows = [(p, len(s), len({n for _, n in s})) for p, s in pairs.items()]
    return sorted(rows, key=lambda r: (-r[1], r[0]))


def expected_waits(events: list[StoredEvent], now: datetime) -> dict[str, tuple[int, int, float]]:
    since: dict[str, tuple[str, datetime]] = {}
    bound: dict[str, datetime] = {}
    for e in events:
        if e.kind == "unschedulable" and e.uid and e.uid not in since:
            since[e.uid] = (e.namespace or "", e.recorded_at)
        if e.kind == "bound" and e.uid and e.uid not in bound:
            bound[e.uid] = e.recorded_at
    out: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0])
    for uid, (namespace, start) in since.items():
        end = bound.get(uid)
        end = end if end is not None and end > start else None
        row = out[namespace]
        row[0] += 1
        row[1] += end is None
        row[2] += ((end or now) - start).total_seconds()
    return {ns: (int(r[0]), int(r[1]), r[2]) for ns, r in out.items()}


# -- the cookbook's queries, checked ---------------------------------------------------------


def test_pods_that_moved_from_their_first_node(
    simulated: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, url = simulated
    events = all_events(url)
    rows = query(url, MOVED, capsys=capsys)
    assert {r["identity"]: (r["first_node"], r["last_node"]) for r in rows} == expected_moves(
        events
    )
    assert len(rows) == len({r["identity"] for r in rows})
    for row in rows:
        assert datetime.fromisoformat(row["bound_at"]).tzinfo is not None
    placements = query(
        url, "SELECT placement, COUNT(*) AS n FROM placements GROUP BY placement", capsys=capsys
    )
    assert {r["placement"]: r["n"] for r in placements} == {"first": 13, "repeat": 9}


def test_the_plugin_that_rejects_the_most_nodes_this_week(
    simulated: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    backend, url = simulated
    rows = query(url, TOP_REJECTER[backend], capsys=capsys)
    expected = expected_rejections(all_events(url))
    assert [(r["plugin"], r["rejections"], r["nodes"]) for r in rows] == expected
    assert rows[0]["plugin"] == "TaintToleration"
    # Nothing in the log is older than a week, so a one-week window and no window agree;
    # a window starting tomorrow proves the time condition is applied at all. (A window
    # starting "now" is flaky on SQLite: its text times carry fractions of a second.)
    empty = (
        TOP_REJECTER[backend]
        .replace("now() - INTERVAL '7 days'", "now() + INTERVAL '1 day'")
        .replace("'-7 days'", "'+1 days'")
    )
    assert empty != TOP_REJECTER[backend]
    assert query(url, empty, capsys=capsys) == []


def test_unschedulable_time_per_namespace(
    simulated: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    backend, url = simulated
    events = all_events(url)
    before = datetime.now(UTC)
    rows = query(url, UNSCHEDULABLE_TIME[backend], capsys=capsys)
    after = datetime.now(UTC)
    low, high = expected_waits(events, before), expected_waits(events, after)
    seconds = [r["unschedulable_seconds"] for r in rows]
    assert seconds == sorted(seconds, reverse=True)
    assert {r["namespace"] for r in rows} == set(low) == {"default", "shop"}
    for r in rows:
        pods, pending, seconds_low = low[r["namespace"]]
        assert (r["pods"], r["still_pending"]) == (pods, pending)
        assert seconds_low - 0.1 <= r["unschedulable_seconds"] <= high[r["namespace"]][2] + 0.1
    # too-big (both runs) and the three members of the coscheduling gang never got a node.
    assert {r["namespace"]: r["pods"] for r in rows} == {"default": 2, "shop": 3}


def test_unschedulable_time_stops_when_the_pod_is_bound(
    db_url: str, backend: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The branch the examples do not reach: a pod unschedulable first, then bound."""

    def event(kind: str, attempt: str, node: str | None = None) -> EventRecord:
        return EventRecord(
            kind=kind, attempt=attempt, uid="u-1", namespace="batch", name="job", node=node
        )

    with EventStore.connect(db_url) as store:
        store.append([event("unschedulable", "a1")])
        time.sleep(1.2)
        store.append([event("bound", "a2", node="n1")])
        events = list(store.read())
    time.sleep(0.5)  # a query counting until now would now say 1.7 s or more
    (row,) = query(db_url, UNSCHEDULABLE_TIME[backend], capsys=capsys)
    waited = (events[1].recorded_at - events[0].recorded_at).total_seconds()
    assert waited >= 1.2
    assert (row["namespace"], row["pods"], row["still_pending"]) == ("batch", 1, 0)
    assert row["unschedulable_seconds"] == pytest.approx(waited, abs=0.06)


def test_decisions_made_under_a_configuration(
    simulated: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, url = simulated
    events = all_events(url)
    configs = query(url, CONFIGURATIONS, capsys=capsys)
    assert configs[0]["digest"] == DEFAULT_DIGEST
    assert len(configs) == 2 and all(c["profile"] == "eventsched" for c in configs)
    loaded = {e.data["digest"] for e in events if e.kind == "config_loaded"}
    assert {c["digest"] for c in configs} == loaded

    rows = query(url, UNDER_CONFIGURATION, capsys=capsys)
    attempts = {
        e.attempt
        for e in events
        if e.kind == "attempt_started" and e.data.get("configDigest") == DEFAULT_DIGEST
    }
    under = [e for e in events if e.attempt in attempts and e.kind in DECISION_KINDS]
    kinds = Counter(e.kind for e in under)
    assert {r["kind"]: r["decisions"] for r in rows} == dict(kinds)
    assert {r["kind"]: r["pods"] for r in rows}[
        "bound"
    ] == 18  # 9 pods in each examples/cluster run
    # The coscheduling run's gang (shop/tune-*) was decided under the other configuration.
    assert any((e.name or "").startswith("tune-") for e in events if e.kind == "unschedulable")
    assert not any((e.name or "").startswith("tune-") for e in under)


def test_what_each_plugin_gave_the_winning_node(
    simulated: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, url = simulated
    events = all_events(url)
    selected = {e.attempt: e.node for e in events if e.kind == "selected"}
    given: dict[str, list[int]] = defaultdict(list)
    for e in events:
        if e.kind == "scored" and e.attempt in selected:
            for (plugin, node), cell in score_cells(e.data).items():
                if node == selected[e.attempt]:
                    given[plugin].append(cell.weighted)
    rows = query(url, WINNING_SCORES, capsys=capsys)
    assert {r["plugin"]: r["attempts"] for r in rows} == {p: len(v) for p, v in given.items()}
    for r in rows:
        values = given[r["plugin"]]
        assert r["avg_weighted"] == pytest.approx(sum(values) / len(values), abs=0.051)


# -- formats ------------------------------------------------------------------------------------


def test_table_is_aligned_truncated_and_counted(
    simulated: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, url = simulated
    sql = "SELECT position, kind, data FROM events WHERE kind = 'config_loaded' ORDER BY position"
    capsys.readouterr()
    assert main(["query", sql, "--db", url, "--max-width", "30"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["position", "kind", "data"]
    assert set(out[1].replace(" ", "")) == {"-"}
    assert out[-1] == "(2 rows)"
    body = out[2:-1]
    assert len(body) == 2
    for line in body:
        position, kind, data = line.split(maxsplit=2)
        assert kind == "config_loaded" and int(position) > 0
        assert data.startswith('{"digest":') and data.endswith("…") and len(data) == 30
    # Columns start at the same place on every line; numbers are right-aligned.
    assert {line.index("config_loaded") for line in body} == {out[0].index("kind")}
    assert len({len(line.split("config_loaded")[0]) for line in body}) == 1

    assert main(["query", "SELECT 1 AS one", "--db", url]) == 0
    assert capsys.readouterr().out == "one\n---\n  1\n(1 row)\n"


def test_csv_and_json_keep_the_values(
    simulated: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, url = simulated
    sql = "SELECT position, recorded_at, kind, node, data FROM events WHERE kind = 'bound' ORDER BY position"
    (first, *_) = rows = query(url, sql, capsys=capsys)
    assert len(rows) == 22
    assert isinstance(first["data"], dict) and first["data"]["code"] == 201
    assert first["node"] and isinstance(first["position"], int)
    assert datetime.fromisoformat(first["recorded_at"]).utcoffset() == timedelta(0)

    assert main(["query", sql, "--format", "csv", "--db", url]) == 0
    table = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert table[0] == ["position", "recorded_at", "kind", "node", "data"]
    assert len(table) == 23
    assert json.loads(table[1][4]) == first["data"]
    assert table[1][1] == first["recorded_at"]


def test_sql_from_stdin_and_a_trailing_semicolon(simulated: tuple[str, str]) -> None:
    _, url = simulated
    done = eventsched(
        "query", "-", "--format", "csv", db=url, stdin="SELECT 'a;b' AS x -- not ; a second\n;\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "x\na;b\n"


def test_json_table_functions_read(simulated: tuple[str, str]) -> None:
    """SQLite's json_each, PostgreSQL's jsonb_array_elements: the plugins of each `scored`
    event, read straight from the events table (SQLite makes json_each's table at its first
    use on a connection, which its authorizer saw as a write)."""
    backend, url = simulated
    elements = (
        "json_each(e.data, '$.plugins') AS p"
        if backend == "sqlite"
        else "jsonb_array_elements(e.data -> 'plugins') AS p(value)"
    )
    sql = f"SELECT count(*) AS n FROM events AS e, {elements} WHERE e.kind = 'scored'"
    done = eventsched("query", sql, "--format", "csv", db=url)
    assert done.returncode == 0, done.stderr
    with EventStore.connect(url) as store:
        expected = sum(len(e.data["plugins"]) for e in store.read(kinds=["scored"]))
    assert expected > 0 and done.stdout == f"n\n{expected}\n"


# -- nothing can change ----------------------------------------------------------------------

WRITES = [
    "INSERT INTO snapshots (projection, position, state, created_at) "
    "VALUES ('x', 1, '{}', CURRENT_TIMESTAMP)",
    "INSERT INTO events (position, recorded_at, kind, data) "
    "SELECT MAX(position) + 1, CURRENT_TIMESTAMP, 'queued', '{}' FROM events",
    "UPDATE snapshots SET projection = 'x'",
    "DELETE FROM snapshots",
    "CREATE TABLE stolen (a INTEGER)",
    "CREATE TEMP TABLE scratch (a INTEGER)",
    "DROP VIEW decisions",
    "ALTER TABLE events ADD COLUMN extra TEXT",
    "CREATE INDEX ix_extra ON events (kind)",
]
CTE_WRITES = {
    "postgresql": [
        "WITH gone AS (DELETE FROM snapshots RETURNING id) SELECT COUNT(*) FROM gone",
        "WITH added AS (INSERT INTO snapshots (projection, position, state, created_at) "
        "VALUES ('x', 1, '{}', now()) RETURNING id) SELECT * FROM added",
    ],
    "sqlite": [
        "WITH src AS (SELECT 1 AS a) INSERT INTO snapshots (projection, position, state, "
        "created_at) SELECT 'x', a, '{}', CURRENT_TIMESTAMP FROM src",
        "WITH old AS (SELECT id FROM snapshots) DELETE FROM snapshots WHERE id IN old",
    ],
}


def test_every_write_is_refused_and_nothing_changes(
    simulated: tuple[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    backend, url = simulated
    before = fingerprint(url)
    for sql in [*WRITES, *CTE_WRITES[backend]]:
        line = refused(url, sql, capsys)
        assert line.startswith("eventsched: error: query refused: "), (sql, line)
        assert "eventsched query only reads" in line, (sql, line)
    if backend == "sqlite":
        # Not the log, but no file may appear either.
        for sql in (
            f"ATTACH '{tmp_path / 'other.db'}' AS other",
            f"VACUUM INTO '{tmp_path / 'copy.db'}'",
        ):
            assert "query refused" in refused(url, sql, capsys)
        assert list(tmp_path.iterdir()) == []
        assert "query refused" in refused(url, "PRAGMA journal_mode = DELETE", capsys)
        assert "query refused" in refused(url, "BEGIN", capsys)
    else:
        # The statement cannot turn the transaction back into a writing one.
        line = refused(url, "SET TRANSACTION READ WRITE", capsys)
        assert "read-write mode must be set before any query" in line
    assert fingerprint(url) == before


def test_the_write_guard_is_the_database_not_a_keyword_check(
    simulated: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A read that merely mentions DELETE runs; a write hidden in a CTE does not."""
    _, url = simulated
    rows = query(
        url, "SELECT 'DELETE FROM events' AS text, COUNT(*) AS n FROM decisions", capsys=capsys
    )
    assert rows[0]["text"] == "DELETE FROM events" and rows[0]["n"] > 0


# -- errors -------------------------------------------------------------------------------------


def test_bad_sql_is_one_line_with_the_database_message(
    simulated: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    backend, url = simulated
    line = refused(url, "SELEC kind FROM events", capsys)
    assert line.startswith("eventsched: error: query failed on ")
    assert ("syntax error" in line) and ("SELEC" in line)
    line = refused(url, "SELECT * FROM no_such_view", capsys)
    assert "no_such_view" in line
    message = "no such table" if backend == "sqlite" else "does not exist"
    assert message in line


def test_several_statements_are_refused_before_running(
    simulated: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, url = simulated
    before = fingerprint(url)
    line = refused(url, "SELECT 1; DELETE FROM snapshots", capsys)
    assert line == (
        "eventsched: error: eventsched query runs exactly one statement, got 2 separated by ';': "
        "run them one at a time"
    )
    assert "no SQL statement given" in refused(url, " ; -- nothing\n", capsys)
    assert fingerprint(url) == before


def test_a_slow_query_is_cancelled_at_the_timeout(
    simulated: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    backend, url = simulated
    slow = (
        "SELECT pg_sleep(10)"
        if backend == "postgresql"
        else "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT MAX(i) FROM c"
    )
    started = time.monotonic()
    line = refused(url, slow, capsys, "--timeout", "0.5")
    assert time.monotonic() - started < 5
    assert "query cancelled after 0.5 s" in line and "--timeout" in line


def test_a_missing_sqlite_file_is_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'nope.db'}"
    line = refused(url, "SELECT 1", capsys)
    assert "no event log at" in line and "nope.db does not exist" in line
    assert not (tmp_path / "nope.db").exists()


def test_a_real_process_exits_2_with_one_line(simulated: tuple[str, str]) -> None:
    _, url = simulated
    done = eventsched("query", "DELETE FROM snapshots", db=url)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("eventsched: error: query refused: ")
    assert "Traceback" not in done.stderr


# -- one statement: the splitter ------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "dialect", "statement"),
    [
        ("SELECT 1;", "sqlite", "SELECT 1"),
        ("  SELECT ';' ; -- trailing comment", "sqlite", "SELECT ';'"),
        ("SELECT 'it''s; fine'", "sqlite", "SELECT 'it''s; fine'"),
        ('SELECT 1 AS "a;b"', "postgresql", 'SELECT 1 AS "a;b"'),
        ("SELECT [a;b] FROM t", "sqlite", "SELECT [a;b] FROM t"),
        ("SELECT $x$ ; $x$", "postgresql", "SELECT $x$ ; $x$"),
        ("SELECT $$;$$", "postgresql", "SELECT $$;$$"),
        ("SELECT E'\\';'", "postgresql", "SELECT E'\\';'"),
        ("SELECT 1 /* ; /* nested ; */ ; */", "postgresql", "SELECT 1 /* ; /* nested ; */ ; */"),
        ("/* a */ SELECT 1 -- ;\n", "sqlite", "/* a */ SELECT 1 -- ;"),
    ],
)
def test_one_statement(sql: str, dialect: str, statement: str) -> None:
    assert single_statement(sql, dialect) == statement


@pytest.mark.parametrize(
    ("sql", "dialect"),
    [
        ("SELECT 1; SELECT 2", "sqlite"),
        ("SELECT 'a'; DELETE FROM events", "postgresql"),
        ("SELECT $1; SELECT 2", "postgresql"),
        ("SELECT 1 /* c */; /* c */ SELECT 2", "sqlite"),
        # SQLite comments do not nest: the second statement is real there.
        ("SELECT 1 /* /* */ ; DELETE FROM events", "sqlite"),
        # In a plain PostgreSQL string a backslash escapes nothing.
        ("SELECT '\\'; DELETE FROM events", "postgresql"),
    ],
)
def test_several_statements(sql: str, dialect: str) -> None:
    with pytest.raises(QueryError, match="exactly one statement, got 2"):
        single_statement(sql, dialect)


# -- the read-only role of deploy/ ------------------------------------------------------------

READER_SQL = ROOT / "deploy" / "base" / "readonly-role.sql"


def test_the_reader_role_reads_the_views_and_nothing_else(
    postgres_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """deploy/base/readonly-role.sql, applied in a private schema under a throwaway role name."""
    role = f"eventsched_reader_{secrets.token_hex(4)}"
    schema = f"eventsched_reader_{os.getpid()}_{secrets.token_hex(3)}"
    script = READER_SQL.read_text().replace("eventsched_reader", role)
    admin = sa.create_engine(postgres_server, isolation_level="AUTOCOMMIT")
    owner_url = make_url(postgres_server).update_query_dict({"options": f"-csearch_path={schema}"})
    reader_url = owner_url.set(username=role, password=None).render_as_string(hide_password=False)
    owner = owner_url.render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        upgrade(owner)
        with EventStore.connect(owner) as store:
            store.append([EventRecord(kind="queued", uid="u", namespace="ns", name="p")])
        owner_engine = sa.create_engine(owner, isolation_level="AUTOCOMMIT")
        try:
            for _ in range(2):  # running it again is harmless
                with owner_engine.connect() as conn:
                    # As psql -f would: the script as it is, no placeholder parsing (%I).
                    driver = conn.connection.driver_connection
                    assert driver is not None
                    driver.execute(script)
        finally:
            owner_engine.dispose()

        for relation in (
            "events",
            "decisions",
            "placements",
            "filter_rejections",
            "plugin_scores",
            "preemptions",
            "preemption_victims",
            "scheduling_gates",
            "shadow_verdicts",
            "event_batches",
            "snapshots",
        ):
            rows = query(reader_url, f"SELECT COUNT(*) AS n FROM {relation}", capsys=capsys)
            assert rows == [{"n": 1 if relation in ("events", "decisions", "event_batches") else 0}]
        for relation in ("alembic_version",):
            line = refused(reader_url, f"SELECT * FROM {relation}", capsys)
            assert f"permission denied for table {relation}" in line

        reader = sa.create_engine(reader_url, isolation_level="AUTOCOMMIT")
        try:
            with reader.connect() as conn:
                assert conn.exec_driver_sql("SHOW default_transaction_read_only").scalar() == "on"
                conn.exec_driver_sql("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE")
                for write in (
                    "INSERT INTO events (position, recorded_at, kind, data) "
                    "VALUES (99, now(), 'queued', '{}')",
                    "CREATE TABLE mine (a integer)",
                    "CREATE VIEW mine AS SELECT 1",
                ):
                    with pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
                        conn.exec_driver_sql(write)
        finally:
            reader.dispose()
        with EventStore.connect(owner) as store:
            assert store.last_position() == 1
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
            if conn.execute(
                sa.text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role}
            ).first():
                conn.execute(sa.text(f'DROP OWNED BY "{role}"'))
                conn.execute(sa.text(f'DROP ROLE "{role}"'))
        admin.dispose()
