"""The `eventsched` command as a user runs it: a real process, a real database."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from eventsched.events import EventStore

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "cluster"
TOO_BIG = (
    "0/6 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
    "1 node(s) had untolerated taint {nvidia.com/gpu: present}, 1 node(s) were unschedulable, "
    "3 Insufficient cpu. preemption: 0/6 nodes are available: 3 No preemption victims found "
    "for incoming pod, 3 Preemption is not helpful for scheduling.."
)


def eventsched(*args: str, db: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EVENTSCHED_DATABASE_URL": db} if db else dict(os.environ)
    env.pop("EVENTSCHED_DATABASE_URL", None) if db is None else None
    return subprocess.run(
        [sys.executable, "-m", "eventsched.cli.main", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_simulate_examples_then_explain_then_run_again(db_url: str) -> None:
    # v1.28's messages and score table (simulate decides as the newest version by default).
    first = eventsched("simulate", str(EXAMPLES), "--kubernetes-version", "1.28", db=db_url)
    assert first.returncode == 0, first.stderr
    # The examples hold only what is simulated (their Namespace and Services are
    # observed for the plugins that read them) and a PriorityClass it reads.
    assert "not simulated" not in first.stderr
    assert "warning" not in first.stderr
    assert "9 of 10 pending pods bound, 1 unschedulable, on 6 nodes" in first.stdout
    assert f"default/too-big: {TOO_BIG}" in first.stdout
    assert "gpu-1" in first.stdout

    explained = eventsched("explain", "default/too-big", db=db_url)
    assert explained.returncode == 0, explained.stderr
    out = explained.stdout
    assert "1 scheduling attempt(s); not bound" in out
    assert (
        "NodeResourcesFit rejected 3 node(s) (Insufficient cpu): worker-1, worker-2, worker-3"
        in out
    )
    assert "NodeUnschedulable rejected 1 node(s) (node(s) were unschedulable): worker-4" in out
    # The code is not repeated when it says what the word before it says (issue 12).
    assert f"  Unschedulable: {TOO_BIG} → unschedulable queue, backoff 1s" in out

    gpu = json.loads(eventsched("explain", "default/gpu-train", "--json", db=db_url).stdout)
    assert gpu["final_node"] == "gpu-1"
    (attempt,) = gpu["attempts"]
    assert attempt["outcome"] == "bound" and attempt["selected"] == "gpu-1"
    assert attempt["selection"]["reason"] == "only one feasible node"

    web = json.loads(eventsched("explain", "shop/db-0", "--json", db=db_url).stdout)
    scored = web["attempts"][0]
    assert scored["top"], "a pod with several feasible nodes shows its scores"
    top = scored["top"][0]
    # A StatefulSet's pod: PodTopologySpread scores it by the default (System)
    # constraints; NodeAffinity and InterPodAffinity skip a pod without terms.
    assert set(top["plugins"]) == {
        "TaintToleration",
        "NodeResourcesFit",
        "PodTopologySpread",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    }
    assert top["total"] == sum(v["weighted"] for v in top["plugins"].values())
    assert scored["selected"] == web["final_node"]

    second = eventsched("simulate", str(EXAMPLES), "--kubernetes-version", "1.28", db=db_url)
    assert second.returncode == 0, second.stderr
    assert "state rebuilt from the log up to position" in second.stderr
    assert "9 first placements, 0 open reservations" in second.stderr
    assert "9 pods were placed before (by identity)" in second.stdout


@pytest.mark.slow
def test_spread_example_spreads_separates_binds_a_volume_and_provisions_one(
    db_url: str,
) -> None:
    """examples/spread: what PodTopologySpread, InterPodAffinity and VolumeBinding decide."""
    done = eventsched("simulate", str(ROOT / "examples" / "spread"), db=db_url)
    assert done.returncode == 0, done.stderr
    assert "10 of 10 pending pods bound, 0 unschedulable, on 6 nodes" in done.stdout
    placed: dict[str, str] = {}
    for name in ("ledger", "reports"):
        out = json.loads(eventsched("explain", f"default/{name}", "--json", db=db_url).stdout)
        placed[name] = out["final_node"]
    assert placed["ledger"] == "node-b2" and placed["reports"].startswith("node-")
    ledger = eventsched("explain", "default/ledger", db=db_url).stdout
    assert "Reserved node-b2, assuming volume local-b2 for claim default/ledger-data" in ledger
    reports = eventsched("explain", "default/reports", db=db_url).stdout
    node = placed["reports"]
    assert f"Reserved {node}, assuming claim default/reports-data provisioned on {node}" in reports
    rows = eventsched("query", "SELECT name, node FROM placements", "--format", "json", db=db_url)
    assert rows.returncode == 0, rows.stderr
    nodes: dict[str, list[str]] = {"web": [], "cache": []}
    for row in json.loads(rows.stdout):
        app = row["name"].split("-")[0]
        if app in nodes:
            nodes[app].append(row["node"])
    web_zones = sorted(node.split("-")[1][0] for node in nodes["web"])
    assert web_zones == ["a", "a", "b", "b", "c", "c"]  # maxSkew 1 over three zones
    assert len(set(nodes["cache"])) == 2  # required anti-affinity on the hostname


def test_simulate_refuses_a_database_without_schema_and_names_the_command(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    url = f"sqlite:///{empty}"
    result = eventsched("simulate", str(EXAMPLES), db=url)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"eventsched: error: the event log at {url} has no eventsched schema: "
        f"run `eventsched db upgrade --db {url}`"
    ]


def test_a_mistyped_sqlite_path_is_not_created(tmp_path: Path) -> None:
    # Connecting would have created an empty file at the typo (issue 12).
    typo = tmp_path / "evnets.db"
    url = f"sqlite:///{typo}"
    result = eventsched("explain", "default/x", db=url)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"eventsched: error: the event log at {url} does not exist (no file {typo}): check the "
        f"path, or create it with `eventsched db upgrade --db {url}`"
    ]
    assert not typo.exists()


def test_an_empty_db_option_is_refused_not_replaced_by_the_default(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "eventsched.cli.main", "--db", "", "explain", "default/x"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("eventsched: error: --db is empty: give a database URL")
    assert not (tmp_path / "eventsched.db").exists()


def test_query_without_the_schema_names_db_upgrade(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).close()
    url = f"sqlite:///{other}"
    result = eventsched("query", "SELECT * FROM decisions", db=url)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"eventsched: error: query failed on {url}: no such table: decisions ({url} has no "
        f"eventsched schema: run `eventsched db upgrade --db {url}`)"
    )


def test_bad_manifest_is_one_line_naming_file_and_field(tmp_path: Path, db_url: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
        "spec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: 2x}}\n"
    )
    result = eventsched("simulate", str(bad), db=db_url)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert str(bad) in line and "spec.containers[0].resources.requests" in line and "'2x'" in line
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://postgres@127.0.0.1:1/test", "cannot reach the event log"),
        ("nosuchdb://x", "bad database URL"),
    ],
)
def test_database_problems_are_one_clear_line(url: str, expected: str) -> None:
    result = eventsched("explain", "default/x", db=url)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert expected in line and "Traceback" not in result.stderr


def test_explain_unknown_pod(db_url: str) -> None:
    result = eventsched("explain", "default/nobody", db=db_url)
    assert result.returncode == 2
    assert "no event for pod default/nobody" in result.stderr


def test_db_upgrade_is_idempotent(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'log.db'}"
    for _ in range(2):
        result = eventsched("db", "upgrade", db=url)
        assert result.returncode == 0, result.stderr
        assert "is at revision" in result.stdout


def test_bench_prints_pods_per_second(tmp_path: Path) -> None:
    result = eventsched(
        "bench", "--nodes", "50", "--pods", "60", db=f"sqlite:///{tmp_path / 'b.db'}"
    )
    assert result.returncode == 0, result.stderr
    assert " pods/s, " in result.stdout and "log bytes/pod" in result.stdout
    assert "60 bound" in result.stdout


def test_bench_with_quotas_schedules_through_capacity_scheduling_and_replays(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    argv = ["--nodes", "20", "--pods", "200", "--quotas", "4", "--replay", "--json", "--db", url]
    result = eventsched("bench", *argv)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["bound"] + data["unschedulable"] == 200
    assert data["replay"]["reproduced"] == data["replay"]["attempts"] > 0
    with EventStore.connect(url) as store:
        observed = store.read(kinds=["object_observed"])
        quotas = [e for e in observed if e.data["kind"] == "ElasticQuota"]
        recorded = store.read(kinds=["input_recorded"])
        inputs = [e for e in recorded if e.plugin == "CapacityScheduling"]
    assert len(quotas) == 4 and inputs


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "leaderElection: {leaseDuration: 15}\n",
            "leaderElection.leaseDuration: must be whole seconds of at least 1s, like 15s (got 15)",
        ),
        (
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "profiles: [{schedulerName: a, pluginConfig: [{name: NetworkTraffic, args: {}}]}]\n",
            "profiles[0].pluginConfig[0].args.address: required: the Prometheus URL",
        ),
    ],
)
def test_run_with_a_bad_config_is_one_line_naming_the_field(
    tmp_path: Path, config: str, expected: str
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(config)
    result = eventsched("run", "--config", str(path), db=f"sqlite:///{tmp_path}/e.db")
    assert result.returncode == 2
    assert result.stderr.strip().startswith(f"eventsched: error: {path}: {expected}")
    assert "Traceback" not in result.stderr


def test_run_without_a_cluster_says_how_to_name_one(tmp_path: Path) -> None:
    result = eventsched(
        "run", "--kubeconfig", str(tmp_path / "missing"), db=f"sqlite:///{tmp_path}/e.db"
    )
    assert result.returncode == 2
    assert "cannot configure the Kubernetes client from kubeconfig" in result.stderr
    assert "--kubeconfig FILE" in result.stderr
