"""One keep-alive connection for each thread that holds one at a time.

A connection returned to a full pool is closed (urllib3 warns "Connection
pool is full, discarding connection"), and the next request pays a new TLS
handshake: the 14 watches hold theirs for minutes, so a pool sized for the
binders and writers alone ran short while they were all busy.
"""

from __future__ import annotations

import threading

from eventsched.cluster.kube import KubeCluster
from eventsched.cluster.kube.adapter import OBJECT_RESOURCES
from eventsched.cluster.kube.recorder import WORKERS
from tests.kube.realserver import EmulatedApiServer


def test_the_pool_keeps_a_connection_for_each_watch_binder_and_writer(
    apiserver: EmulatedApiServer,
) -> None:
    api = apiserver.client()
    cluster = KubeCluster(api, ["eventsched"], request_threads=16)
    cluster.start(lambda change: None)
    try:
        assert cluster.wait_synced(30)
        watching = {"nodes", "pods", *(r.rpartition("/")[2] for r, _ in OBJECT_RESOURCES)}
        watches = [t for t in threading.enumerate() if t.name in watching]
        assert len(watches) == len(watching) == 14
        # Each Event writer and each status shard sends on a thread of its own.
        assert cluster.connections >= 16 + len(watches) + 2 * WORKERS
    finally:
        cluster.stop()
        api.close()
