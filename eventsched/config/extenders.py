"""`extenders[]` of KubeSchedulerConfiguration v1: parsed and validated as kube-scheduler does.

The extender client itself is a later piece of work (docs/status.md); the
configuration is checked now so a file that kube-scheduler would refuse is
refused here too, with the same rules (`validateExtenders`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Fields of `Extender` in kubescheduler.config.k8s.io/v1.
EXTENDER_FIELDS = frozenset(
    {
        "urlPrefix",
        "filterVerb",
        "preemptVerb",
        "prioritizeVerb",
        "weight",
        "bindVerb",
        "enableHTTPS",
        "tlsConfig",
        "httpTimeout",
        "nodeCacheCapable",
        "managedResources",
        "ignorable",
    }
)
TLS_FIELDS = frozenset(
    {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"}
)


@dataclass(frozen=True, slots=True)
class ManagedResource:
    name: str
    ignored_by_scheduler: bool = False


@dataclass(frozen=True, slots=True)
class ExtenderConfig:
    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = False
    tls_config: Mapping[str, Any] = field(default_factory=dict)
    #: Seconds; kube-scheduler's default is 30s.
    http_timeout: float = 30.0
    node_cache_capable: bool = False
    managed_resources: tuple[ManagedResource, ...] = ()
    ignorable: bool = False

    def to_record(self) -> dict[str, Any]:
        return {
            "urlPrefix": self.url_prefix,
            "filterVerb": self.filter_verb,
            "preemptVerb": self.preempt_verb,
            "prioritizeVerb": self.prioritize_verb,
            "weight": self.weight,
            "bindVerb": self.bind_verb,
            "enableHTTPS": self.enable_https,
            "tlsConfig": dict(self.tls_config),
            "httpTimeout": f"{self.http_timeout:g}s",
            "nodeCacheCapable": self.node_cache_capable,
            "managedResources": [
                {"name": r.name, "ignoredByScheduler": r.ignored_by_scheduler}
                for r in self.managed_resources
            ],
            "ignorable": self.ignorable,
        }


def is_extended_resource_name(name: str) -> bool:
    """Upstream's `IsExtendedResourceName`: domain-prefixed, not kubernetes.io, not requests.*"""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))
