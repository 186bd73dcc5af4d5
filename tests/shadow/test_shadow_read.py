"""The shadow's record read back: `eventsched explain`, `replay` and `query` on real shadow logs.

One run per module: the real control plane and kube-scheduler v1.28 place a generated mix
(12 nodes, 60 pods), and two `eventsched shadow` processes run beside it as a user starts
them: one with kube-scheduler's own configuration, logging to PostgreSQL (it agrees or
ties, and gives the same FailedScheduling messages), one with a bin-packing profile
(NodeResourcesFit MostAllocated), logging to SQLite (it differs, naming the plugin). The
commands then read those logs as a user would.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import yaml
from sqlalchemy.engine import make_url

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.shadowmix import generate
from eventsched.cli.main import main
from eventsched.events import upgrade
from tests.differential.kubeapi import KubeApi
from tests.kube.realserver import real_binaries
from tests.shadow.harness import (
    NAMESPACE,
    KubeOutcome,
    ShadowProcess,
    all_decided,
    create_mix,
    create_pods,
    kube_scheduler_config,
    wait,
    warm_up,
)

pytestmark = pytest.mark.skipif(
    real_binaries() is None or real_binaries().scheduler is None,  # type: ignore[union-attr]
    reason="needs kube-apiserver and kube-scheduler ($EVENTSCHED_KUBE_BIN) and etcd",
)

ROOT = Path(__file__).resolve().parents[2]
NODES, PODS = 12, 60
#: The bin-packing shadow's profile: examples/profiles/most-allocated.yaml's.
PACKING = yaml.safe_load((ROOT / "examples" / "profiles" / "most-allocated.yaml").read_text())[
    "profiles"
][0]


@dataclass(frozen=True)
class Logs:
    """What kube-scheduler did with each pod (by uid), and the two shadows' logs."""

    kube: dict[str, KubeOutcome]
    #: The shadow with kube-scheduler's configuration (PostgreSQL).
    same: str
    #: The shadow with the bin-packing profile (SQLite).
    packing: str


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str


def _last_verdicts(db: str) -> dict[str, dict[str, Any]]:
    """Each pod's last verdict (by uid), from the log itself."""
    engine = sa.create_engine(db)
    try:
        with engine.connect() as conn:
            found = conn.execute(
                sa.text(
                    "SELECT uid, node, data FROM events WHERE kind = 'shadow_verdict' "
                    "ORDER BY position"
                )
            ).all()
    finally:
        engine.dispose()
    last = {}
    for uid, node, data in found:
        last[uid] = {**(json.loads(data) if isinstance(data, str) else data), "column": node}
    return last


def _judged(db: str, kube: dict[str, KubeOutcome]) -> dict[str, dict[str, Any]] | None:
    """Every pod's last verdict, once each judges what kube-scheduler finally did."""
    last = _last_verdicts(db)
    for uid, outcome in kube.items():
        verdict = last.get(uid)
        if verdict is None:
            return None
        if outcome.node and verdict.get("node") != outcome.node:
            return None
        if not outcome.node and verdict.get("message") != outcome.message:
            return None
    return last


@pytest.fixture(scope="module")
def postgres_log(postgres_server: str) -> Iterator[str]:
    """A PostgreSQL database URL in a schema of its own, at head, for this module's run."""
    schema = f"eventsched_shadow_{os.getpid()}_{secrets.token_hex(3)}"
    admin = sa.create_engine(postgres_server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(postgres_server).update_query_dict({"options": f"-csearch_path={schema}"})
    owner = url.render_as_string(hide_password=False)
    try:
        upgrade(owner)
        yield owner
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(scope="module")
def logs(postgres_log: str, tmp_path_factory: pytest.TempPathFactory) -> Logs:
    binaries = real_binaries()
    assert binaries is not None
    work = tmp_path_factory.mktemp("shadow-read")
    (work / "same").mkdir()
    (work / "packing").mkdir()
    with ControlPlane(binaries) as plane:
        api = KubeApi(plane.url, plane.admin_token, str(plane.ca_file))
        mix = generate(NODES, PODS, NAMESPACE)
        create_mix(api, plane, mix)
        theirs = kube_scheduler_config(plane.kubeconfig())
        same = ShadowProcess(plane, work / "same", theirs, db=postgres_log)
        packing = ShadowProcess(
            plane, work / "packing", kube_scheduler_config(plane.kubeconfig(), **PACKING)
        )
        config = work / "kube-scheduler.yaml"
        config.write_text(yaml.safe_dump(theirs))
        scheduler = plane.start_kube_scheduler(config)
        try:
            warm_up(api)
            create_pods(api, mix.pods)
            kube = wait(lambda: all_decided(api, PODS + 1), 300, "kube-scheduler to decide")
            for shadow in (same, packing):
                wait(lambda s=shadow: _judged(s.db, kube), 300, f"the verdicts in {shadow.db}")
        finally:
            scheduler.terminate()
            scheduler.wait(timeout=10)
            same.stop()
            packing.stop()
    return Logs(kube, same.db, packing.db)


def eventsched(capsys: pytest.CaptureFixture[str], db: str, *args: str) -> Done:
    """`eventsched ARGS --db DB`, in this process."""
    capsys.readouterr()
    code = main([*args, "--db", db])
    out = capsys.readouterr()
    return Done(code, out.out, out.err)


def shadow_lines(out: str) -> list[str]:
    return [line.strip() for line in out.splitlines() if line.strip().startswith("Shadow: ")]


def test_explain_says_what_kube_scheduler_did_and_the_verdict(
    logs: Logs, capsys: pytest.CaptureFixture[str]
) -> None:
    """With kube-scheduler's configuration: each pod's last attempt is explained like any
    attempt (Filter, and the node eventsched selects) and ends with one line naming the
    node kube-scheduler placed it on, or the message it left it pending with, and the
    verdict."""
    last = _last_verdicts(logs.same)
    seen: dict[str, int] = {}
    for uid, outcome in logs.kube.items():
        done = eventsched(capsys, logs.same, "explain", f"{NAMESPACE}/{outcome.name}")
        assert done.code == 0, done.err
        line = shadow_lines(done.out)[-1]
        verdict = last[uid]
        last_attempt = done.out.split("\nAttempt ")[-1]
        assert "Filter: 12 nodes, evaluated 12" in last_attempt
        assert "(no outcome recorded yet)" not in done.out
        if outcome.node:
            head = f"Shadow: default-scheduler placed it on {outcome.node}; "
            assert line.startswith(head), line
            assert f"not bound by eventsched; observed on {outcome.node}" in done.out
            assert f"  Selected {verdict['picked']}" in last_attempt
            ours = line[len(head) :]
            if verdict["verdict"] == "agree":
                assert ours == f"eventsched agrees (total {verdict['totals']['ours']})"
                assert verdict["picked"] == outcome.node
            elif verdict["verdict"] == "tie":
                assert ours == f"eventsched picks {verdict['picked']}, a tie: {verdict['cause']}"
            else:
                assert (
                    ours == f"eventsched would pick {verdict['picked']} because {verdict['cause']}"
                )
            kind = f"placed {verdict['verdict']}"
        else:
            assert line == (
                f"Shadow: default-scheduler left it pending: {outcome.message}; "
                "eventsched gives the same message"
            )
            assert "PostFilter: DefaultPreemption Unschedulable" in last_attempt
            kind = "unschedulable"
        seen[kind] = seen.get(kind, 0) + 1
    assert seen["placed agree"] > 0 and seen["unschedulable"] > 0, seen


def test_explain_of_a_differing_verdict_names_the_plugin(
    logs: Logs, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bin-packing shadow picks another node than kube-scheduler's: the line says which,
    with the cause (NodeResourcesFit's weighted scores of the two nodes)."""
    differing = [
        (uid, v)
        for uid, v in _last_verdicts(logs.packing).items()
        if v["verdict"] == "differ" and v["observed"] == "placed"
    ]
    assert differing
    for uid, verdict in differing[:5]:
        outcome = logs.kube[uid]
        done = eventsched(capsys, logs.packing, "explain", f"{NAMESPACE}/{outcome.name}")
        assert done.code == 0, done.err
        picked = verdict["picked"]
        assert shadow_lines(done.out)[-1] == (
            f"Shadow: default-scheduler placed it on {outcome.node}; eventsched would pick "
            f"{picked} because {picked} totals {verdict['totals']['ours']} against "
            f"{verdict['totals']['theirs']} for default-scheduler's node {outcome.node}: "
            + verdict["cause"].split(": ", 1)[1]
        )
        assert "NodeResourcesFit" in verdict["cause"]
        assert f"  Selected {picked} with score {verdict['totals']['ours']}" in done.out


def test_explain_json_carries_the_verdict(logs: Logs, capsys: pytest.CaptureFixture[str]) -> None:
    last = _last_verdicts(logs.same)
    placed = next(uid for uid, o in logs.kube.items() if o.node)
    failed = next(uid for uid, o in logs.kube.items() if not o.node)
    for uid in (placed, failed):
        outcome = logs.kube[uid]
        done = eventsched(capsys, logs.same, "explain", "--json", f"{NAMESPACE}/{outcome.name}")
        assert done.code == 0, done.err
        attempt = json.loads(done.out)["attempts"][-1]
        shadow = attempt["shadow"]
        assert attempt["outcome"] == "shadow verdict"
        assert attempt["pod_uid"] == uid
        assert shadow["scheduler"] == "default-scheduler"
        assert shadow["verdict"] == last[uid]["verdict"]
        assert shadow["picked"] == last[uid]["picked"] == attempt["selected"]
        if outcome.node:
            assert (shadow["observed"], shadow["node"]) == ("placed", outcome.node)
            assert shadow["our_total"] == last[uid]["totals"]["ours"]
        else:
            assert (shadow["observed"], shadow["node"]) == ("unschedulable", None)
            assert shadow["message"] == shadow["our_message"] == outcome.message
            assert attempt["message"] == outcome.message
        assert shadow["lag_seconds"] == last[uid]["lagSeconds"] >= 0


@pytest.mark.parametrize("which", ["same", "packing"])
def test_replay_reproduces_every_shadow_attempt(
    logs: Logs, which: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Replay decides each shadow attempt again from the log alone: the node eventsched
    selected, or its failure (and its PostFilter's dry run), every one reproduced."""
    db = getattr(logs, which)
    engine = sa.create_engine(db)
    try:
        with engine.connect() as conn:
            started = conn.execute(
                sa.text("SELECT COUNT(*) FROM events WHERE kind = 'attempt_started'")
            ).scalar_one()
            verdicts = conn.execute(sa.text("SELECT COUNT(*) FROM shadow_verdicts")).scalar_one()
    finally:
        engine.dispose()
    assert started == verdicts >= PODS
    done = eventsched(capsys, db, "replay")
    assert done.code == 0, done.out + done.err
    assert f"attempts: {started} checked, {started} reproduced, 0 differ" in done.out
    report = json.loads(eventsched(capsys, db, "replay", "--json").out)
    assert report["chain"]["ok"] and report["mismatches"] == [] and report["skipped"] == []
    assert report["attempts"] == report["reproduced"] == started


@pytest.mark.parametrize("which", ["same", "packing"])
def test_query_reads_the_verdicts_view(
    logs: Logs, which: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`eventsched query` over the view: one row per verdict, each pod's last naming what
    kube-scheduler did (its node, or its message) and eventsched's pick."""
    db = getattr(logs, which)
    done = eventsched(
        capsys, db, "query", "--format", "json",
        "SELECT uid, name, scheduler, observed, verdict, node, picked, message, our_message, "
        "cause, our_total, their_total, lag_seconds, attempt FROM shadow_verdicts ORDER BY position",
    )  # fmt: skip
    assert done.code == 0, done.err
    rows = json.loads(done.out)
    last = {row["uid"]: row for row in rows}
    recorded = _last_verdicts(db)
    assert len(rows) >= PODS + 1 and last.keys() == logs.kube.keys()
    for uid, outcome in logs.kube.items():
        row, data = last[uid], recorded[uid]
        assert (row["name"], row["scheduler"]) == (outcome.name, "default-scheduler")
        assert (row["verdict"], row["picked"], row["cause"]) == (
            data["verdict"], data["picked"], data.get("cause")
        )  # fmt: skip
        assert row["attempt"] and row["lag_seconds"] == data["lagSeconds"]
        if outcome.node:
            assert (row["observed"], row["node"], row["message"]) == ("placed", outcome.node, None)
            assert (row["our_total"], row["their_total"]) == (
                data["totals"]["ours"], data["totals"]["theirs"]
            )  # fmt: skip
        else:
            assert (row["observed"], row["node"]) == ("unschedulable", None)
            assert (row["message"], row["our_message"]) == (outcome.message, data["ourMessage"])
    counts = eventsched(
        capsys, db, "query", (ROOT / "docs/samples/queries/shadow-verdicts.sql").read_text()
    )
    assert counts.code == 0, counts.err
    assert counts.out.splitlines()[0].split() == [
        "scheduler", "observed", "verdict", "verdicts", "max_lag_s"
    ]  # fmt: skip
    assert f"({len({(r['observed'], r['verdict']) for r in rows})} rows)" in counts.out
