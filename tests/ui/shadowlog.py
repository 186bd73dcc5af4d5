"""A real shadow log for the web page's tests: the real control plane and kube-scheduler
place a generated mix while `eventsched shadow` (tests/shadow/harness.py) decides every
pod beside it, with one score plugin weighted otherwise so that some verdicts differ.

`record` runs it once; `copy_log` copies the log, row for row, into another database
(PostgreSQL), as the web page must read either.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
import yaml

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.shadowmix import generate
from eventsched.events import upgrade
from eventsched.events.schema import event_batches, events
from tests.differential.kubeapi import KubeApi
from tests.kube.realserver import real_binaries
from tests.shadow.harness import (
    NAMESPACE,
    ShadowProcess,
    all_decided,
    create_mix,
    create_pods,
    kube_scheduler_config,
    wait,
    warm_up,
)

NODES, PODS, WAVE = 12, 60, 12
#: The shadow's profile only: BalancedAllocation weighs 10 (kube-scheduler's: 1).
SHADOW_PROFILE: dict[str, Any] = {
    "plugins": {"score": {"enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 10}]}}
}


@dataclass(slots=True)
class ShadowLog:
    """The SQLite log the shadow wrote, and what it holds."""

    url: str
    path: Path
    #: Every shadow_verdict's data, in order, with its pod: (namespace, name, data).
    verdicts: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def placements(self) -> Counter[str]:
        """Verdicts on placements, by verdict."""
        return Counter(d["verdict"] for _, _, d in self.verdicts if d["observed"] == "placed")

    def failures(self) -> Counter[str]:
        """Verdicts on failures, by verdict (agree: the same message)."""
        return Counter(
            d["verdict"] for _, _, d in self.verdicts if d["observed"] == "unschedulable"
        )

    def first(self, observed: str, verdict: str) -> tuple[str, str, dict[str, Any]]:
        return next(
            v for v in self.verdicts if v[2]["observed"] == observed and v[2]["verdict"] == verdict
        )


def available() -> bool:
    binaries = real_binaries()
    return binaries is not None and binaries.scheduler is not None


def record(workdir: Path) -> ShadowLog:
    """Run kube-scheduler and the shadow over the mix until every pod has its verdict."""
    binaries = real_binaries()
    assert binaries is not None
    mix = generate(NODES, PODS, NAMESPACE)
    with ControlPlane(binaries) as plane:
        api = KubeApi(plane.url, plane.admin_token, str(plane.ca_file))
        create_mix(api, plane, mix)
        shadow = ShadowProcess(
            plane, workdir, kube_scheduler_config(plane.kubeconfig(), **SHADOW_PROFILE)
        )
        config = workdir / "kube-scheduler.yaml"
        config.write_text(yaml.safe_dump(kube_scheduler_config(plane.kubeconfig())))
        scheduler = plane.start_kube_scheduler(config)
        try:
            warm_up(api)
            # In waves, each decided (and judged) before the next: verdicts over some seconds.
            for start in range(0, PODS, WAVE):
                create_pods(api, mix.pods[start : start + WAVE])
                _judged(api, shadow, min(start + WAVE, PODS) + 1)
        finally:
            scheduler.terminate()
            scheduler.wait(timeout=10)
            shadow.stop()
    log = ShadowLog(shadow.db, shadow.db_path)
    with sqlite3.connect(shadow.db_path) as db:
        rows = db.execute(
            "SELECT namespace, name, data FROM events WHERE kind = 'shadow_verdict' "
            "ORDER BY position"
        ).fetchall()
    log.verdicts = [(ns, name, json.loads(data)) for ns, name, data in rows]
    return log


def _judged(api: KubeApi, shadow: ShadowProcess, pods: int) -> None:
    """Wait for kube-scheduler to decide all `pods`, then for the shadow's verdict on each
    (positive signals both: the pods' status, each pod's verdict on what it shows)."""
    kube = wait(lambda: all_decided(api, pods), 300, "kube-scheduler's decisions")
    wait(lambda: _covered(shadow, kube), 300, "a verdict for every pod")


def _covered(shadow: ShadowProcess, kube: dict[str, Any]) -> bool:
    last = {v.uid: v for v in shadow.verdicts()}
    for uid, outcome in kube.items():
        verdict = last.get(uid)
        if verdict is None:
            return False
        if outcome.node and verdict.data.get("node") != outcome.node:
            return False
        if not outcome.node and verdict.data.get("message") != outcome.message:
            return False
    return True


def copy_log(source: str, target: str) -> None:
    """The log at `source` into the empty database at `target` (migrated here), row for row:
    the same positions, times, data and batches (so its hash chain verifies there too)."""
    upgrade(target)
    reading, writing = sa.create_engine(source), sa.create_engine(target)
    try:
        with reading.connect() as src, writing.begin() as dst:
            for table in (event_batches, events):
                rows = [dict(r._mapping) for r in src.execute(sa.select(table))]
                if rows:
                    dst.execute(table.insert(), rows)
    finally:
        reading.dispose()
        writing.dispose()
