"""The profile scheduler-plugins' `as-a-second-scheduler` Helm chart (v0.28.9's values)
renders, with only `schedulerName` changed, as both schedulers run it in this suite."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import yaml

from eventsched.config.file import parse_config
from eventsched.framework.profile import Profile
from eventsched.plugins import full_registry

SCHEDULER_NAME = "default-scheduler"
#: The chart's configmap.yaml rendered with its default values; the recorder adds
#: clientConnection (kube-scheduler reads its kubeconfig there when given --config).
CHART_CONFIG = f"""\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
# Compose all plugins in one profile
- schedulerName: {SCHEDULER_NAME}
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
      - name: CapacityScheduling
      - name: NodeResourceTopologyMatch
      - name: NodeResourcesAllocatable
      disabled:
      - name: PrioritySort
  pluginConfig:
  - args:
      permitWaitingTimeSeconds: 10
    name: Coscheduling
"""


def chart_config(args: dict[str, Any] | None = None) -> str:
    """The chart's configuration, with `args` (plugin name -> its args, a case's
    `pluginArgs`) appended to its pluginConfig."""
    extra = [{"name": name, "args": value} for name, value in (args or {}).items()]
    if not extra:
        return CHART_CONFIG
    return CHART_CONFIG + textwrap.indent(yaml.safe_dump(extra, sort_keys=False), "  ")


def chart_profile(args: dict[str, Any] | None = None) -> Profile:
    config = parse_config(yaml.safe_load(chart_config(args)), "chart.yaml", full_registry())
    (profile,) = config.profiles
    return profile


def recorder_config(path: Path, kubeconfig: Path, args: dict[str, Any] | None = None) -> Path:
    path.write_text(f"clientConnection:\n  kubeconfig: {kubeconfig}\n" + chart_config(args))
    return path
