"""Run as a separate process by test_restart: schedule, or only rebuild, and print projections."""

from __future__ import annotations

import sys

from eventsched.cluster import SimulatedCluster, generate_cluster
from eventsched.config import default_profile
from eventsched.events import EventStore, rebuild
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions


def main(mode: str, url: str, seed: int) -> None:
    store = EventStore.connect(url)
    if mode == "schedule":
        cluster = generate_cluster(20, 60, seed=seed)
        scheduler = Scheduler(
            store,
            SimulatedCluster(cluster.nodes, cluster.pods),
            [default_profile()],
            in_tree_registry(),
            SchedulerOptions(snapshot_every=100),
        )
        scheduler.start()
        scheduler.run(until_idle=True)
        scheduler.stop()
        print(scheduler.projections.to_json())
    else:
        print(rebuild(store).to_json())
    store.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
