"""State survives the process: a new process rebuilds exactly what the old one had."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from eventsched.events import SNAPSHOT_NAME, EventStore, Projections

ROOT = Path(__file__).resolve().parents[2]


def worker(mode: str, url: str, seed: int = 0) -> Projections:
    result = subprocess.run(
        [sys.executable, "-m", "tests.scheduler.restart_worker", mode, url, str(seed)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return Projections.from_json(result.stdout.strip().splitlines()[-1])


def test_a_new_process_rebuilds_the_projections_the_old_one_had(
    db_url: str, store: EventStore
) -> None:
    first = worker("schedule", db_url, seed=1)
    assert len(first.first_placements) > 0 and first.position > 0
    assert worker("rebuild", db_url) == first

    # A second scheduling process on the same log starts from that state and adds to it.
    second = worker("schedule", db_url, seed=2)
    assert second.position > first.position
    assert set(first.first_placements) <= set(second.first_placements)
    for identity, placement in first.first_placements.items():
        assert second.first_placements[identity] == placement, "a first placement was rewritten"
    assert not second.open_reservations
    assert worker("rebuild", db_url) == second
    snapshots = store.latest_snapshot(SNAPSHOT_NAME)
    assert snapshots is not None and snapshots[0] > 0, "a snapshot was taken"


def test_a_start_that_folds_a_long_tail_snapshots_at_once(db_url: str, store: EventStore) -> None:
    """A process killed before its first snapshot must not leave the next starts folding it all."""
    from eventsched.cluster import SimulatedCluster, generate_cluster
    from eventsched.config import default_profile
    from eventsched.plugins import in_tree_registry
    from eventsched.scheduler import Scheduler, SchedulerOptions

    def scheduler(snapshot_every: int) -> Scheduler:
        cluster = generate_cluster(5, 20, seed=2)
        return Scheduler(
            store,
            SimulatedCluster(cluster.nodes, cluster.pods),
            [default_profile()],
            in_tree_registry(),
            SchedulerOptions(snapshot_every=snapshot_every),
        )

    first = scheduler(1 << 30)
    first.start()
    first.run(until_idle=True)  # no stop(): as if killed, so no snapshot was written
    assert store.latest_snapshot(SNAPSHOT_NAME) is None
    written = store.last_position()
    second = scheduler(written // 2)
    second.start()
    snapshot = store.latest_snapshot(SNAPSHOT_NAME)
    assert snapshot is not None and snapshot[0] >= written
    second.stop()


def test_a_restart_does_not_take_its_own_bound_pods_for_pods_placed_elsewhere(
    store: EventStore,
) -> None:
    """With a StickyNode identity other than namespace/name, listing our own bound pods after a
    restart once added a second, name-keyed first placement for each of them."""
    from eventsched.cluster import SimulatedCluster, load_manifests
    from eventsched.config.file import load_config
    from eventsched.plugins import full_registry
    from eventsched.scheduler import Scheduler

    registry = full_registry()
    config = load_config(str(ROOT / "examples" / "profiles" / "stickynode.yaml"), registry)
    loaded = load_manifests([str(ROOT / "examples" / "stickynode")])
    cluster = SimulatedCluster(loaded.nodes, loaded.pods)
    for _ in range(2):  # the second process lists the pods the first one bound
        scheduler = Scheduler(store, cluster, config.profiles, registry)
        scheduler.start()
        scheduler.run(until_idle=True)
        scheduler.stop()
    firsts = scheduler.projections.first_placements
    assert len(firsts) == len(loaded.pods)
    assert all("/StatefulSet/" in identity for identity in firsts)
    marked = [e for e in store.read(kinds=["pod_observed"]) if e.data.get("firstPlacement")]
    assert marked == []
