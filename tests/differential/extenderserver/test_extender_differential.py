"""kube-scheduler v1.28 with eventsched as its extender decides as eventsched does.

For each case (cases.py) and each form of the protocol (`nodeCacheCapable`: node names,
else whole Node objects): the real control plane, `eventsched extender` started as a user
starts it (the CLI, its own SQLite log, the admin kubeconfig), and the real kube-scheduler
configured with it as filter, prioritize and bind extender, weighted so that its
prioritize outweighs kube-scheduler's own scores. Each step creates a pending pod (and waits until the API server shows it bound,
or kube-scheduler's PodScheduled=False) or deletes one.

The answer is compared with eventsched's own scheduler (`eventsched run`'s loop, on the
simulated cluster, the same profile, the same steps): the same node for every pod, and
for a pod nothing fits the same "0/N nodes are available: ..." reasons. The extender's
log must hold every call kube-scheduler made for each pod (filter, and prioritize and
bind for a placed one) and the binding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.cluster import SimulatedCluster
from eventsched.config.file import parse_config
from eventsched.events import EventStore, StoredEvent, upgrade
from eventsched.model import Node, Pod
from eventsched.plugins import full_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.differential.builders import admitted
from tests.differential.extenderserver.cases import CASES, Case, Step
from tests.differential.extenderserver.harness import (
    Extender,
    empty_cluster,
    kube_scheduler_config,
    wait_for,
)
from tests.differential.kubeapi import GRACE_0, KubeApi

ROOT = Path(__file__).resolve().parents[3]
FORMS = {"NodeNames": True, "Nodes": False}


@dataclass
class Outcome:
    """Where each created pod went, in the order created (None: not placed), and why not."""

    placements: list[tuple[str, str | None]] = field(default_factory=list)
    messages: dict[str, str] = field(default_factory=dict)
    uids: dict[str, list[str]] = field(default_factory=dict)


@pytest.fixture
def api(plane: ControlPlane) -> KubeApi:
    return KubeApi(plane.url, plane.admin_token, str(plane.ca_file))


# -- kube-scheduler calling `eventsched extender` -------------------------------------------


def _decided(api: KubeApi, name: str) -> tuple[str | None, str] | None:
    """(node, "") once bound; (None, message) once kube-scheduler said Unschedulable."""
    pod = api.call("GET", KubeApi.path("Pod", "default", name))
    if pod["spec"].get("nodeName"):
        return pod["spec"]["nodeName"], ""
    for condition in pod.get("status", {}).get("conditions") or []:
        if condition["type"] == "PodScheduled" and condition.get("reason") == "Unschedulable":
            return None, condition["message"]
    return None


def through_kube_scheduler(
    case: Case, plane: ControlPlane, api: KubeApi, workdir: Path, node_cache_capable: bool
) -> tuple[Outcome, str]:
    empty_cluster(api)
    plane.make_ready_nodes(case.nodes)
    extender = Extender(case.config(), plane, workdir)
    config = workdir / "kube-scheduler.yaml"
    config.write_text(
        yaml.safe_dump(kube_scheduler_config(extender, plane.kubeconfig(), node_cache_capable))
    )
    scheduler = plane.start_kube_scheduler(config)
    outcome = Outcome()
    try:
        for step in case.steps:
            path = KubeApi.path("Pod", "default", step.name)
            if step.action == "delete":
                api.call("DELETE", path, GRACE_0)
                wait_for(lambda p=path: api.request("GET", p)[0] == 404, 30, f"{step.name} gone")
                continue
            created = api.call("POST", KubeApi.path("Pod", "default"), step.pod)
            outcome.uids.setdefault(step.name, []).append(created["metadata"]["uid"])
            try:
                node, message = wait_for(
                    lambda s=step: _decided(api, s.name),
                    60,
                    f"kube-scheduler to decide {step.name}",
                )
            except AssertionError as exc:
                logs = [plane.workdir / "kube-scheduler.log", extender.log]
                tails = "\n".join(f"--- {p.name}\n{p.read_text()[-4000:]}" for p in logs)
                raise AssertionError(f"{exc}\n{tails}") from None
            outcome.placements.append((step.name, node))
            if message:
                outcome.messages[step.name] = message
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=10)
        extender.stop()
    return outcome, extender.db


# -- eventsched's own scheduler ---------------------------------------------------------------


def through_eventsched(case: Case, workdir: Path) -> Outcome:
    """The same profile and steps through the scheduler `eventsched run` runs, on the
    simulated cluster (one log for the whole history, as StickyNode needs)."""
    config = parse_config(case.config(), "case", full_registry())
    cluster = SimulatedCluster([Node.from_manifest(n) for n in case.nodes], [])
    db = f"sqlite:///{workdir / 'eventsched.db'}"
    upgrade(db)
    outcome = Outcome()
    with EventStore.connect(db) as store:
        scheduler = Scheduler(
            store,
            cluster,
            list(config.profiles),
            full_registry(),
            SchedulerOptions(
                initial_backoff=0.05, max_backoff=0.1, binder_workers=1, group_commit_wait=0.0
            ),
        )
        scheduler.start()
        for step in case.steps:
            _apply(step, cluster)
            scheduler.run(until_idle=True)
            if step.action == "create":
                placed = cluster.get_pod(f"default/{step.name}")
                assert placed is not None
                outcome.placements.append((step.name, placed.node_name or None))
                if not placed.node_name:
                    failed = [
                        e.message
                        for e in cluster.events
                        if e.reason == "FailedScheduling" and e.pod_key == f"default/{step.name}"
                    ]
                    outcome.messages[step.name] = failed[-1]
        scheduler.stop()
    return outcome


def _apply(step: Step, cluster: SimulatedCluster) -> None:
    if step.action == "delete":
        cluster.delete_pod(f"default/{step.name}")
    else:
        cluster.add_pod(Pod.from_manifest(admitted(step.pod)))


# -- the comparison ---------------------------------------------------------------------------


def _reasons(message: str) -> str:
    """ "0/N nodes are available: <reasons>." without the PostFilter's part, which each
    side's own preemption writes (kube-scheduler's does not know eventsched's plugins)."""
    return message.split(" preemption: ", 1)[0]


def _calls(events: list[StoredEvent], uid: str) -> set[str]:
    verbs = set()
    for event in events:
        if event.uid == uid and event.kind == "attempt_started":
            verb = (event.data.get("extender") or {}).get("verb")
            if verb:
                verbs.add(str(verb))
    return verbs


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_kube_scheduler_with_the_extender_decides_as_eventsched(
    case: Case, form: str, plane: ControlPlane, api: KubeApi, tmp_path: Path
) -> None:
    kube, db = through_kube_scheduler(case, plane, api, tmp_path, FORMS[form])
    ours = through_eventsched(case, tmp_path)
    assert kube.placements == ours.placements
    assert {k: _reasons(v) for k, v in kube.messages.items()} == {
        k: _reasons(v) for k, v in ours.messages.items()
    }
    uids = {name: list(reversed(each)) for name, each in kube.uids.items()}
    with EventStore.connect(db) as store:
        for name, node in kube.placements:
            uid = uids[name].pop()
            events = store.read_pod("default", name)
            calls = _calls(events, uid)
            bound = [e.node for e in events if e.uid == uid and e.kind == "bound"]
            assert "filter" in calls, (name, calls)
            if node is None:
                assert not bound
            else:
                assert "bind" in calls, (name, calls)
                assert bound == [node]
