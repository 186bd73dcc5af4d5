"""`eventsched ui` as a command: it starts and prints its address, refuses a role that could
write the log, and a page answers 503 in one sentence when the database goes away."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest

from eventsched.cli.kubectl import main as kubectl_eventsched
from eventsched.cli.main import main
from eventsched.ui.app import INSECURE_LOCAL, Settings
from tests.ui.conftest import ROOT, Served, simulate
from tests.ui.test_routes import one_sentence, text


def test_serves_and_prints_its_address(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    simulate(url)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "eventsched.cli.main",
            "--db",
            url,
            "ui",
            "--insecure-local",
            "--listen",
            "127.0.0.1:0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # blocks until the server says where it is
        found = re.fullmatch(
            r"eventsched ui: serving (http://127\.0\.0\.1:(\d+)/) "
            r"\(read-only; anyone on this machine, every namespace\)\n",
            line,
        )
        assert found, (line, process.stderr.read() if process.poll() is not None else "")
        import urllib.request

        with urllib.request.urlopen(found.group(1) + "pods/default/too-big", timeout=30) as r:
            assert r.status == 200
            assert "Dominant blocker" in r.read().decode()
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_refuses_a_role_that_can_write(
    postgres_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The test server's user is a superuser with every privilege: refused, in one line."""
    code = main(["ui", "--db", postgres_server, "--insecure-local", "--listen", "127.0.0.1:0"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1
    assert "may write the event log (superuser" in err
    assert "connect as the read-only role eventsched_reader (deploy/base/readonly-role.sql" in err


def test_missing_sqlite_log_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ui", "--db", f"sqlite:///{tmp_path / 'none.db'}", "--insecure-local"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "none.db" in err
    assert not (tmp_path / "none.db").exists()


def test_database_down_is_503(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    simulate(url)
    with Served(Settings(url, access=INSECURE_LOCAL)) as served:
        assert served.request("/pods/default/too-big").status == 200
        shutil.move(tmp_path / "events.db", tmp_path / "elsewhere.db")
        for path in ("/", "/pods/default/too-big", "/nodes/worker-1", "/search?pod=a/b"):
            reply = served.request(path)
            assert reply.status == 503, (path, reply.body[:300])
            assert one_sentence(reply.body) == (
                "The event log's database is not answering; try again once it is back."
            )


def test_postgresql_down_is_503() -> None:
    """A server that does not answer (nothing listens on port 1)."""
    url = "postgresql+psycopg://eventsched_reader@127.0.0.1:1/eventsched?connect_timeout=2"
    with Served(Settings(url, access=INSECURE_LOCAL)) as served:
        reply = served.request("/")
        assert reply.status == 503
        assert "not answering" in one_sentence(reply.body)


def test_why_not_outside_the_stored_top_k_replays(tmp_path: Path) -> None:
    """30 nodes: the log keeps the top 10 scores; an 11th node's are computed by replay."""
    url = f"sqlite:///{tmp_path / 'big.db'}"
    assert main(["db", "upgrade", "--db", url]) == 0
    assert main(["simulate", "--nodes", "30", "--pods", "2", "--seed", "1", "--db", url]) == 0
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    with engine.connect() as conn:
        namespace, name, data = conn.exec_driver_sql(
            "SELECT namespace, name, data FROM events WHERE kind = 'scored' ORDER BY position LIMIT 1"
        ).one()
        nodes = [
            n
            for (n,) in conn.exec_driver_sql(
                "SELECT node FROM events WHERE kind = 'node_observed'"
            ).all()
        ]
    engine.dispose()
    import json

    top = {t["node"] for t in json.loads(data)["top"]}
    outside = next(n for n in nodes if n not in top)
    with Served(Settings(url, access=INSECURE_LOCAL)) as served:
        reply = served.request(f"/pods/{namespace}/{name}/why-not?" + urlencode({"node": outside}))
        assert reply.status == 200
        page = text(reply.body)
        assert f"{outside} passed every filter but scored" in page
        assert "computed by replaying the log" in page
        assert 'id="replayed"' in reply.body


def test_kubectl_plugin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVENTSCHED_UI_URL", "https://ui.example/")
    assert kubectl_eventsched(["open", "too-big"]) == 0
    assert capsys.readouterr().out == "https://ui.example/pods/default/too-big\n"
    assert kubectl_eventsched(["open", "web-0", "-n", "shop", "--ui-url", "http://h:1"]) == 0
    assert capsys.readouterr().out == "http://h:1/pods/shop/web-0\n"


def test_kubectl_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    simulate(url)
    capsys.readouterr()
    assert kubectl_eventsched(["explain", "too-big", "--db", url]) == 0
    assert capsys.readouterr().out.startswith("Pod default/too-big\n")


def test_all_scores_by_replay_and_preemption(tmp_path: Path) -> None:
    """?full=1 is explain --full; a preemptor's attempt names its victims, a victim its preemptor."""
    big = f"sqlite:///{tmp_path / 'big.db'}"
    assert main(["db", "upgrade", "--db", big]) == 0
    assert main(["simulate", "--nodes", "30", "--pods", "2", "--seed", "1", "--db", big]) == 0
    preemption = f"sqlite:///{tmp_path / 'preemption.db'}"
    simulate(preemption, ROOT / "examples" / "preemption")
    import sqlalchemy as sa

    engine = sa.create_engine(big)
    with engine.connect() as conn:
        namespace, name = conn.exec_driver_sql(
            "SELECT namespace, name FROM events WHERE kind = 'scored' ORDER BY position LIMIT 1"
        ).one()
    engine.dispose()
    with Served(Settings(big, access=INSECURE_LOCAL)) as served:
        page = text(served.request(f"/pods/{namespace}/{name}/attempts").body)
        assert "top 10 kept in the log ( all of them, by replay )" in page
        full = served.request(f"/pods/{namespace}/{name}/attempts?full=1").body
        assert "nodes recomputed by replay (the log keeps the top 10)" in text(full)
        assert full.count('<tr class="chosen">') == 1
    with Served(Settings(preemption, access=INSECURE_LOCAL)) as served:
        page = text(served.request("/pods/shop/payments/attempts").body)
        assert "Preemption: nominated node-c (fewest PDB violations" in page
        assert "jobs/report-1 (priority 50: deleted)" in page
        victim = text(served.request("/pods/jobs/report-1").body)
        assert (
            "Chosen as a victim of shop/payments 's preemption (priority 1000 over this pod's 50)"
            " on node-c (" in victim
        )
        assert "node chosen by fewest PDB violations): deleted (200) at " in victim
        preemptor = text(served.request("/pods/shop/payments").body)
        assert "Preemption by DefaultPreemption" in preemptor
        assert "jobs/report-1 50 respected deleted (200)" in preemptor


def test_the_benchmark_runs(tmp_path: Path) -> None:
    """eventsched/benchmarks/ui.py (the figures in docs/ui.md), on a small log, a few
    requests a page."""
    from eventsched.benchmarks.ui import measure

    url = f"sqlite:///{tmp_path / 'events.db'}"
    simulate(url)
    results = measure(url, requests=3)
    assert [r.path.split("/")[1].split("?")[0] for r in results] == [
        "",
        "pods",
        "pods",
        "cluster-at",
        "nodes",
        "search",
        "search",
        "search",
    ]
    for r in results:
        assert 0 < r.p50_ms <= r.p95_ms <= r.max_ms and r.bytes > 0
        assert 0 < r.first_ms <= r.max_ms
