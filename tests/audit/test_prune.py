"""`eventsched db prune`: old days go, what later decisions depend on stays, and it is all recorded."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from eventsched.audit import replay
from eventsched.cli.db import prune
from eventsched.cli.main import main
from eventsched.cluster import SimulatedCluster, generate_cluster, load_manifests
from eventsched.config.file import load_config
from eventsched.events import EventStore, read_base, rebuild
from eventsched.plugins import full_registry
from eventsched.scheduler import Scheduler, SchedulerOptions

ROOT = Path(__file__).resolve().parents[2]
STICKY = ROOT / "examples" / "profiles" / "stickynode.yaml"
NOW = datetime.now(UTC)


def run_phase(url: str, when: datetime, seed: int) -> Scheduler:
    """One scheduler process whose events are recorded at `when`: generated pods, then sticky ones."""
    registry = full_registry()
    config = load_config(str(STICKY), registry)
    sticky = load_manifests([str(ROOT / "examples" / "stickynode")])
    pods = generate_cluster(0, 12, seed=seed).pods
    store = EventStore.connect(url)
    store.clock = lambda: when
    scheduler = Scheduler(
        store,
        SimulatedCluster(sticky.nodes, [*sticky.pods, *pods]),
        config.profiles,
        registry,
        SchedulerOptions(initial_backoff=0.01, max_backoff=0.02),
    )
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()
    store.close()
    return scheduler


@pytest.fixture
def three_days(db_url: str) -> str:
    """Three scheduler runs, three and one days ago and today, on the same sticky pods."""
    for days_ago, seed in ((3, 1), (1, 2), (0, 3)):
        run_phase(db_url, NOW - timedelta(days=days_ago), seed)
    return db_url


def state_of(store: EventStore) -> tuple[object, ...]:
    p = rebuild(store)
    return p.first_placements, p.open_reservations, p.backoff, p.observed


def test_prune_keeps_first_placements_and_replay_of_what_remains(three_days: str) -> None:
    registry = full_registry()
    with EventStore.connect(three_days) as store:
        before = state_of(store)
        whole = replay(store, registry)
        assert whole.ok and whole.attempts > 0
        result = prune(store, NOW - timedelta(days=2))
        assert result is not None and result.recorded is not None
        cut = result.plan
        assert cut.position > 0 and cut.events == cut.position
        # Nothing before the cut is left; the chain continues from the last dropped batch.
        first = next(store.read())
        assert first.position == cut.position + 1
        chain = store.verify_chain()
        assert chain.ok, chain.detail
        assert state_of(store) == before
        base = read_base(store)
        assert base is not None and base.position == cut.position
        assert result.recorded.data["action"] == "pruned"
        assert result.recorded.data["throughPosition"] == cut.position
        assert result.recorded.data["baseDigest"] == base.digest
        # Every attempt after the cut still reproduces, starting from the base.
        rest = replay(store, registry)
        assert rest.ok and rest.skipped == []
        assert 0 < rest.attempts < whole.attempts
        assert rest.reproduced == rest.attempts


def test_a_restart_after_prune_keeps_sticky_placement(three_days: str) -> None:
    registry = full_registry()
    with EventStore.connect(three_days) as store:
        firsts = dict(rebuild(store).first_placements)
        assert prune(store, NOW - timedelta(hours=12)) is not None
    scheduler = run_phase(three_days, NOW, seed=4)
    sticky = load_manifests([str(ROOT / "examples" / "stickynode")]).pods
    assert sticky
    after = scheduler.projections.first_placements
    assert {k: after[k] for k in firsts} == firsts  # none lost, none moved
    with EventStore.connect(three_days) as store:
        for pod in sticky:
            [first] = [
                p for p in firsts.values() if (p.namespace, p.name) == (pod.namespace, pod.name)
            ]
            bound = [e for e in store.read_pod(pod.namespace, pod.name) if e.kind == "bound"]
            assert bound[-1].node == first.node and bound[-1].position > first.position
        assert store.verify_chain().ok
        assert replay(store, registry).ok


def test_prune_twice_and_dry_run(three_days: str) -> None:
    registry = full_registry()
    with EventStore.connect(three_days) as store:
        last = store.last_position()
        dry = prune(store, NOW - timedelta(days=2), dry_run=True)
        assert dry is not None and dry.recorded is None
        assert store.last_position() == last and next(store.read()).position == 1
        first = prune(store, NOW - timedelta(days=2))
        assert first is not None
        assert prune(store, NOW - timedelta(days=2)) is None
        second = prune(store, NOW - timedelta(hours=12))
        assert second is not None and second.plan.since.position == first.plan.position
        assert store.verify_chain().ok
        assert replay(store, registry).ok


def test_an_edited_base_is_reported_by_the_chain(three_days: str) -> None:
    with EventStore.connect(three_days) as store:
        assert prune(store, NOW - timedelta(days=2)) is not None
        base = read_base(store)
        assert base is not None
        state = json.loads(json.dumps(base.state))
        state["projections"]["first_placements"]["nodes"][0] = "somewhere-else"
        with store.engine.begin() as conn:
            conn.execute(
                sa.text("UPDATE snapshots SET state = :s WHERE projection = 'log-base/v1'"),
                {"s": json.dumps(state)},
            )
        chain = store.verify_chain()
        assert not chain.ok
        assert "does not match the digest its prune recorded" in chain.detail


def test_the_append_only_guard_survives_a_prune(three_days: str) -> None:
    with EventStore.connect(three_days) as store:
        assert prune(store, NOW - timedelta(days=2)) is not None
        with store.engine.connect() as conn:
            for statement in ("DELETE FROM events", "UPDATE event_batches SET hash = ''"):
                with pytest.raises(sa.exc.DBAPIError, match="append-only"), conn.begin():
                    conn.execute(sa.text(statement))


@pytest.mark.parametrize("backend", ["postgresql"])
def test_postgresql_drops_whole_days(three_days: str) -> None:
    with EventStore.connect(three_days) as store:
        result = prune(store, NOW - timedelta(days=2))
        assert result is not None
        cut = result.plan
        midnight = (NOW - timedelta(days=2)).replace(hour=0, minute=0, second=0, microsecond=0)
        assert cut.cut == midnight
        assert f"events_{NOW - timedelta(days=3):%Y%m%d}" in cut.partitions
        with store.engine.connect() as conn:
            left = conn.execute(
                sa.text("SELECT count(*) FROM pg_class WHERE relname = ANY(:n)"),
                {"n": cut.partitions},
            ).scalar()
        assert left == 0


def test_db_prune_command(three_days: str, capsys: pytest.CaptureFixture[str]) -> None:
    when = (NOW - timedelta(days=2)).isoformat()
    assert main(["db", "prune", "--before", when, "--dry-run", "--db", three_days]) == 0
    assert "would drop" in capsys.readouterr().out
    assert main(["db", "prune", "--before", "36h", "--json", "--db", three_days]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["pruned"] is True and summary["events"] > 0
    with pytest.raises(SystemExit) as exited:
        main(["db", "prune", "--before", "12", "--db", three_days])
    assert exited.value.code == 2
    assert "takes a time, not a position" in capsys.readouterr().err
    assert main(["replay", "--db", three_days]) == 0


#: Plugins whose decisions depend on more than the cluster: recorded inputs, first placements.
#: (Coscheduling replays from a base too, but its example waits out a 60 s Permit timeout.)
PLUGINS = ["networktraffic", "stickynode"]


@pytest.mark.parametrize("plugin", PLUGINS)
def test_a_cut_in_the_middle_of_a_run_replays_from_the_base(db_url: str, plugin: str) -> None:
    """The cut falls between two batches of one process: the attempts after it must be decided
    on the view, inputs and profiles the base carried over (nothing is re-observed there)."""
    registry = full_registry()
    config = load_config(str(ROOT / "examples" / "profiles" / f"{plugin}.yaml"), registry)
    example = load_manifests([str(ROOT / "examples" / plugin)])
    generated = generate_cluster(0, 30, seed=9).pods
    midnight = (NOW - timedelta(days=2)).replace(hour=0, minute=0, second=0, microsecond=0)
    store = EventStore.connect(db_url)
    # The example's pods are scheduled before midnight, the generated ones (added to the
    # running process once it is idle) after it. Counting batches would not place the cut:
    # how many attempts join one batch depends on how fast the appender commits.
    now = midnight - timedelta(minutes=30)
    store.clock = lambda: now
    cluster = SimulatedCluster(example.nodes, example.pods)
    scheduler = Scheduler(
        store,
        cluster,
        config.profiles,
        registry,
        SchedulerOptions(initial_backoff=0.01, max_backoff=0.02, group_commit_attempts=4),
    )
    scheduler.start()
    scheduler.run(until_idle=True)
    now = midnight + timedelta(minutes=30)
    for pod in generated:
        cluster.add_pod(pod)
    scheduler.run(until_idle=True)
    scheduler.stop()
    whole = replay(store, registry)
    assert whole.ok and whole.skipped == []
    result = prune(store, midnight + timedelta(minutes=1))
    assert result is not None and result.plan.position > 0
    assert any(e.kind == "attempt_started" for e in store.read())  # the cut is mid-run
    rest = replay(store, registry)
    assert rest.ok, rest.mismatches[:2]
    assert rest.skipped == [] and 0 < rest.attempts < whole.attempts
    assert store.verify_chain().ok
    store.close()
