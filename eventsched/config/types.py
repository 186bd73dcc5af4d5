"""A loaded KubeSchedulerConfiguration: what `run` reads of it, and its errors."""

from __future__ import annotations

from dataclasses import dataclass, field

from eventsched.config.defaults import default_profile
from eventsched.config.extenders import ExtenderConfig
from eventsched.framework import Features, Profile
from eventsched.framework.features import LEGACY


class ConfigError(ValueError):
    """A configuration file that cannot be used; `field` is the path inside it."""

    def __init__(self, source: str, field: str, problem: str) -> None:
        self.source = source
        self.field = field
        self.problem = problem
        super().__init__(f"{source}: {field}: {problem}" if field else f"{source}: {problem}")


@dataclass(frozen=True, slots=True)
class ClientConnectionConfig:
    kubeconfig: str = ""
    qps: float = 50.0
    burst: int = 100


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    leader_elect: bool = True
    lease_duration: int = 15
    renew_deadline: int = 10
    retry_period: int = 2
    resource_lock: str = "leases"
    resource_name: str = "eventsched"
    resource_namespace: str = "kube-system"


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    profiles: tuple[Profile, ...] = field(default_factory=lambda: (default_profile(),))
    client_connection: ClientConnectionConfig = field(default_factory=ClientConnectionConfig)
    leader_election: LeaderElectionConfig = field(default_factory=LeaderElectionConfig)
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    #: 0: kube-scheduler's adaptive percentage; a profile's own value wins over this one.
    percentage_of_nodes_to_score: int = 0
    parallelism: int = 16
    extenders: tuple[ExtenderConfig, ...] = ()
    #: Things accepted but worth telling (a plugin configured that eventsched does not have).
    warnings: tuple[str, ...] = ()
    #: What kube-scheduler's default profile at this version has and the profiles run
    #: without, not implemented by eventsched yet (config/upstreamplugins.py).
    notes: tuple[str, ...] = ()
    #: The Kubernetes version decided as and its feature gates; every profile carries them.
    features: Features = LEGACY

    @property
    def scheduler_names(self) -> tuple[str, ...]:
        return tuple(p.scheduler_name for p in self.profiles)
