"""The profile scheduler-plugins' `as-a-second-scheduler` Helm chart (v0.28.9's values)
renders, with only `schedulerName` changed, as both schedulers run it in this suite."""

from __future__ import annotations

from pathlib import Path

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

#: The plugins eventsched does not have yet are left out of its side until it does
#: (the recorded answers are the full chart profile's).
NOT_YET: tuple[str, ...] = tuple(
    name
    for name in ("NodeResourceTopologyMatch", "NodeResourcesAllocatable")
    if name not in full_registry()
)


def chart_profile() -> Profile:
    text = CHART_CONFIG
    for name in NOT_YET:
        text = text.replace(f"      - name: {name}\n", "")
    config = parse_config(yaml.safe_load(text), "chart.yaml", full_registry())
    (profile,) = config.profiles
    return profile


def recorder_config(path: Path, kubeconfig: Path) -> Path:
    path.write_text(f"clientConnection:\n  kubeconfig: {kubeconfig}\n" + CHART_CONFIG)
    return path
