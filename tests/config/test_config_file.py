"""KubeSchedulerConfiguration files: kube-scheduler's fields and defaults, errors that name the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from eventsched.config.file import ConfigError, load_config, parse_config, parse_duration
from eventsched.plugins import full_registry

REGISTRY = full_registry()

HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def test_defaults_are_kube_schedulers() -> None:
    config = parse_config(dict(HEAD), "config", REGISTRY)
    assert config.scheduler_names == ("eventsched",)
    assert (config.client_connection.qps, config.client_connection.burst) == (50.0, 100)
    le = config.leader_election
    assert (le.leader_elect, le.lease_duration, le.renew_deadline, le.retry_period) == (
        True,
        15,
        10,
        2,
    )
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (1.0, 10.0)


def test_a_full_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: /k, qps: -1, burst: 10}
leaderElection:
  leaderElect: false
  leaseDuration: 1m
  renewDeadline: 30s
  retryPeriod: 5s
  resourceName: sched
  resourceNamespace: ops
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 20
profiles:
  - schedulerName: eventsched
  - schedulerName: eventsched-batch
"""
    )
    config = load_config(path, REGISTRY)
    assert config.scheduler_names == ("eventsched", "eventsched-batch")
    assert config.client_connection.kubeconfig == "/k"
    assert config.client_connection.qps == -1
    le = config.leader_election
    assert (le.leader_elect, le.lease_duration, le.renew_deadline, le.retry_period) == (
        False,
        60,
        30,
        5,
    )
    assert (le.resource_name, le.resource_namespace) == ("sched", "ops")
    assert config.pod_max_backoff_seconds == 20.0
    assert [p.scheduler_name for p in config.profiles] == ["eventsched", "eventsched-batch"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("15s", 15.0), ("1m30s", 90.0), ("500ms", 0.5), ("1h", 3600.0), ("2.5s", 2.5)],
)
def test_go_durations(text: str, expected: float) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "15", "s", "15 s", "1x"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize(
    ("extra", "field", "fix"),
    [
        ({"apiVersion": "v1"}, "apiVersion", "kubescheduler.config.k8s.io/v1"),
        ({"kind": "Config"}, "kind", "KubeSchedulerConfiguration"),
        ({"profile": []}, "profile", "known fields here"),
        ({"extenders": [{}]}, "extenders[0].urlPrefix", "is required"),
        ({"profiles": []}, "profiles", "non-empty list"),
        (
            {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
            "profiles[1].schedulerName",
            "duplicate",
        ),
        (
            {
                "profiles": [
                    {"schedulerName": "a", "plugins": {"filter": {"enabled": [{"name": "X"}]}}}
                ]
            },
            "profiles[0].plugins.filter.enabled[0].name",
            "unknown plugin 'X'",
        ),
        (
            {"leaderElection": {"leaseDuration": "1.5s"}},
            "leaderElection.leaseDuration",
            "whole seconds",
        ),
        ({"leaderElection": {"leaseDuration": 15}}, "leaderElection.leaseDuration", "like 15s"),
        (
            {"leaderElection": {"resourceLock": "endpoints"}},
            "leaderElection.resourceLock",
            "leases",
        ),
        ({"leaderElection": {"leaderElect": "yes"}}, "leaderElection.leaderElect", "true or false"),
        ({"clientConnection": {"qps": "fast"}}, "clientConnection.qps", "number"),
        ({"clientConnection": {"burst": -3}}, "clientConnection.burst", ">= 0"),
        (
            {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2},
            "podMaxBackoffSeconds",
            "at least",
        ),
    ],
)
def test_errors_name_the_field_and_the_fix(extra: dict, field: str, fix: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({**HEAD, **extra}, "sched.yaml", REGISTRY)
    assert caught.value.field == field
    assert fix in str(caught.value)
    assert str(caught.value).startswith(f"sched.yaml: {field}: ")


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_config(tmp_path / "missing.yaml", REGISTRY)
    bad = tmp_path / "bad.yaml"
    bad.write_text("profiles: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad, REGISTRY)
