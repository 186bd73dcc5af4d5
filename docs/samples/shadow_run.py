"""`eventsched shadow` beside the real kube-scheduler v1.28, for generate.py's shadow samples.

The real control plane (kube-apiserver, etcd) and kube-scheduler place the shadow tests'
generated mix (eventsched/benchmarks/shadowmix.py: 12 nodes, 60 pods); two `eventsched
shadow` processes watch, as a user starts them: one with kube-scheduler's own
configuration, logging to ./eventsched.db, one with examples/profiles/most-allocated.yaml
(bin packing), logging to ./most-allocated.db. It returns once each has a verdict for
what kube-scheduler finally did with every pod. Needs $EVENTSCHED_KUBE_BIN (the
binaries) and etcd on PATH, as the tests do (tests/shadow/harness.py).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import yaml

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.kubebinaries import kube_binaries
from eventsched.benchmarks.shadowmix import generate
from eventsched.events import upgrade
from tests.differential.kubeapi import KubeApi
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

NODES, PODS = 12, 60
ROOT = Path(__file__).resolve().parents[2]
PACKING = yaml.safe_load((ROOT / "examples" / "profiles" / "most-allocated.yaml").read_text())


def judged(db: Path, kube: dict[str, KubeOutcome]) -> bool:
    """Whether each pod's last verdict in `db` judges what kube-scheduler finally did."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT uid, node, message FROM shadow_verdicts ORDER BY position"
        ).fetchall()
    last = {uid: (node or "", message or "") for uid, node, message in rows}
    return all(
        uid in last and last[uid] == (o.node, "" if o.node else o.message)
        for uid, o in kube.items()
    )


def main() -> None:
    here = Path.cwd()
    binaries = kube_binaries()
    assert binaries is not None, "needs $EVENTSCHED_KUBE_BIN and etcd on PATH"
    upgrade(f"sqlite:///{here / 'most-allocated.db'}")
    with ControlPlane(binaries) as plane:
        api = KubeApi(plane.url, plane.admin_token, str(plane.ca_file))
        mix = generate(NODES, PODS, NAMESPACE)
        create_mix(api, plane, mix)
        theirs = kube_scheduler_config(plane.kubeconfig())
        shadows = {}
        for name, profile in (("eventsched", {}), ("most-allocated", PACKING["profiles"][0])):
            work = here / f"{name}.shadow"
            work.mkdir()
            config = kube_scheduler_config(plane.kubeconfig(), **profile)
            db = here / f"{name}.db"
            shadows[db] = ShadowProcess(plane, work, config, db=f"sqlite:///{db}")
        config_file = here / "kube-scheduler.yaml"
        config_file.write_text(yaml.safe_dump(theirs))
        scheduler = plane.start_kube_scheduler(config_file)
        try:
            warm_up(api)
            create_pods(api, mix.pods)
            kube = wait(lambda: all_decided(api, PODS + 1), 300, "kube-scheduler to decide")
            for db in shadows:
                wait(lambda db=db: judged(db, kube), 300, f"the verdicts in {db.name}")
        finally:
            scheduler.terminate()
            scheduler.wait(timeout=10)
            for shadow in shadows.values():
                shadow.stop()


if __name__ == "__main__":
    main()
