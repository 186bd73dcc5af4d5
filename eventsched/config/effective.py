"""The effective configuration: what `config check` prints, defaults merged and plugins expanded.

kube-scheduler's `--write-config-to` prints its defaulted MultiPoint set;
this prints the plugins each extension point will actually run, in order,
with weights, because that is what an operator needs to check.
"""

from __future__ import annotations

from typing import Any

from eventsched.config.file import API_VERSION, KIND, SchedulerConfig
from eventsched.framework import Profile


def effective_config(config: SchedulerConfig) -> dict[str, Any]:
    cc, le = config.client_connection, config.leader_election
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "parallelism": config.parallelism,
        "percentageOfNodesToScore": config.percentage_of_nodes_to_score,
        "podInitialBackoffSeconds": _number(config.pod_initial_backoff_seconds),
        "podMaxBackoffSeconds": _number(config.pod_max_backoff_seconds),
        "clientConnection": {
            "kubeconfig": cc.kubeconfig,
            "qps": _number(cc.qps),
            "burst": cc.burst,
        },
        "leaderElection": {
            "leaderElect": le.leader_elect,
            "leaseDuration": f"{le.lease_duration}s",
            "renewDeadline": f"{le.renew_deadline}s",
            "retryPeriod": f"{le.retry_period}s",
            "resourceLock": le.resource_lock,
            "resourceName": le.resource_name,
            "resourceNamespace": le.resource_namespace,
        },
        "extenders": [e.to_record() for e in config.extenders],
        "profiles": [_profile(p) for p in config.profiles],
    }


def _profile(profile: Profile) -> dict[str, Any]:
    # MultiPoint is already expanded below: disabling its defaults makes the
    # printed file mean exactly what runs when it is loaded again.
    plugins: dict[str, Any] = {"multiPoint": {"disabled": [{"name": "*"}]}}
    for point, refs in profile.plugins.items():
        plugins[point] = {
            "enabled": [
                {"name": r.name, "weight": r.weight} if point == "score" else {"name": r.name}
                for r in refs
            ]
        }
    return {
        "schedulerName": profile.scheduler_name,
        "percentageOfNodesToScore": profile.percentage_of_nodes_to_score or 0,
        "plugins": plugins,
        "pluginConfig": [
            {"name": name, "args": dict(args)} for name, args in profile.plugin_args.items()
        ],
    }


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value
