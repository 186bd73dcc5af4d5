"""One entry of KubeSchedulerConfiguration's `extenders[]`, as the framework calls it.

Parsed and validated by eventsched.config (with kube-scheduler's rules); kept in the
framework because the profile carries it and the runtime calls it (framework/extenders/client.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: kube-scheduler's `DefaultExtenderTimeout` (pkg/scheduler/extender.go), in seconds.
DEFAULT_HTTP_TIMEOUT = 5.0


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
    #: Seconds; kube-scheduler's `DefaultExtenderTimeout` when the file sets none.
    http_timeout: float = DEFAULT_HTTP_TIMEOUT
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

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ExtenderConfig:
        """The inverse of `to_record` (a profile's record in `config_loaded`)."""
        timeout = str(record.get("httpTimeout", f"{DEFAULT_HTTP_TIMEOUT:g}s"))
        return cls(
            url_prefix=record["urlPrefix"],
            filter_verb=record.get("filterVerb", ""),
            preempt_verb=record.get("preemptVerb", ""),
            prioritize_verb=record.get("prioritizeVerb", ""),
            weight=int(record.get("weight", 0)),
            bind_verb=record.get("bindVerb", ""),
            enable_https=bool(record.get("enableHTTPS", False)),
            tls_config=dict(record.get("tlsConfig") or {}),
            http_timeout=float(timeout.rstrip("s")),
            node_cache_capable=bool(record.get("nodeCacheCapable", False)),
            managed_resources=tuple(
                ManagedResource(r["name"], bool(r.get("ignoredByScheduler", False)))
                for r in record.get("managedResources") or ()
            ),
            ignorable=bool(record.get("ignorable", False)),
        )

    @property
    def name(self) -> str:
        """What kube-scheduler calls the extender (`HTTPExtender.Name()`): its urlPrefix."""
        return self.url_prefix
