"""KubeSchedulerConfiguration files (kubescheduler.config.k8s.io/v1), the part `run` needs.

Field names, defaults and duration syntax are kube-scheduler's, so an
operator's existing file reads the same. Every error names the field's path
and the fix; a field kube-scheduler has but eventsched does not implement
yet is refused by name instead of being silently ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from eventsched.config.defaults import DEFAULT_SCHEDULER_NAME, default_profile
from eventsched.framework import Profile

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"


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

    @property
    def scheduler_names(self) -> tuple[str, ...]:
        return tuple(p.scheduler_name for p in self.profiles)


_NOT_YET = {
    "extenders": "scheduler extenders are not supported yet",
    "percentageOfNodesToScore": "is not configurable yet (the adaptive default is used)",
    "parallelism": "is not configurable (eventsched filters and scores in batch)",
    "delayCacheUntilActive": "is not supported",
}
_PROFILE_NOT_YET = {
    "plugins": "custom plugin sets are not supported yet (each profile runs the default plugins)",
    "pluginConfig": "plugin args are not supported yet (each profile runs the default plugins)",
    "percentageOfNodesToScore": "is not configurable yet (the adaptive default is used)",
}

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration(text: str) -> float:
    """Go's time.Duration syntax as metav1.Duration accepts it ("15s", "1m30s", "500ms")."""
    text = text.strip()
    if not text:
        raise ValueError("empty duration")
    pos, total = 0, 0.0
    for match in _DURATION.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    if pos != len(text):
        raise ValueError(f"{text!r} is not a duration like 15s, 1m30s or 500ms")
    return total


def load_config(path: str | Path) -> SchedulerConfig:
    source = str(path)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ConfigError(source, "", f"cannot read the file: {exc.strerror or exc}") from exc
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(source, "", f"not valid YAML: {exc}") from exc
    return parse_config(doc, source)


def parse_config(doc: Any, source: str = "config") -> SchedulerConfig:
    reader = _Reader(source)
    obj = reader.mapping(doc, "")
    if obj.get("apiVersion") != API_VERSION:
        raise ConfigError(
            source, "apiVersion", f"must be {API_VERSION} (got {obj.get('apiVersion')!r})"
        )
    if obj.get("kind") != KIND:
        raise ConfigError(source, "kind", f"must be {KIND} (got {obj.get('kind')!r})")
    known = {
        "apiVersion",
        "kind",
        "clientConnection",
        "leaderElection",
        "profiles",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
    }
    reader.refuse(obj, "", known, _NOT_YET)
    initial = reader.number(obj, "podInitialBackoffSeconds", 1, minimum=1)
    maximum = reader.number(obj, "podMaxBackoffSeconds", 10, minimum=1)
    if maximum < initial:
        raise ConfigError(
            source, "podMaxBackoffSeconds", "must be at least podInitialBackoffSeconds"
        )
    return SchedulerConfig(
        profiles=reader.profiles(obj.get("profiles")),
        client_connection=reader.client_connection(obj.get("clientConnection")),
        leader_election=reader.leader_election(obj.get("leaderElection")),
        pod_initial_backoff_seconds=float(initial),
        pod_max_backoff_seconds=float(maximum),
    )


class _Reader:
    """Typed access to one document, raising ConfigError with the field's path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, problem: str) -> ConfigError:
        return ConfigError(self.source, path, problem)

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.fail(path, f"must be a mapping (got {type(value).__name__})")
        return value

    def refuse(
        self,
        obj: Mapping[str, Any],
        path: str,
        known: set[str],
        not_yet: Mapping[str, str] | None = None,
    ) -> None:
        for key in obj:
            where = f"{path}.{key}" if path else str(key)
            if not_yet and key in not_yet:
                raise self.fail(where, f"{not_yet[key]}; remove the field")
            if key not in known:
                raise self.fail(
                    where, f"unknown field; known fields here: {', '.join(sorted(known))}"
                )

    def number(
        self, obj: Mapping[str, Any], key: str, default: float, path: str = "", minimum: float = 0
    ) -> float:
        where = f"{path}.{key}" if path else key
        value = obj.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
            raise self.fail(where, f"must be a number >= {minimum:g} (got {value!r})")
        return value

    def string(self, obj: Mapping[str, Any], key: str, default: str, path: str) -> str:
        value = obj.get(key, default)
        if not isinstance(value, str):
            raise self.fail(f"{path}.{key}", f"must be a string (got {value!r})")
        return value

    def seconds(self, obj: Mapping[str, Any], key: str, default: int, path: str) -> int:
        where = f"{path}.{key}"
        value = obj.get(key)
        if value is None:
            return default
        try:
            seconds = parse_duration(value) if isinstance(value, str) else float("nan")
        except ValueError as exc:
            raise self.fail(where, str(exc)) from exc
        if seconds != seconds or seconds < 1 or seconds != int(seconds):
            raise self.fail(
                where, f"must be whole seconds of at least 1s, like 15s (got {value!r})"
            )
        return int(seconds)

    def client_connection(self, value: Any) -> ClientConnectionConfig:
        path = "clientConnection"
        obj = self.mapping(value, path)
        self.refuse(obj, path, {"kubeconfig", "qps", "burst", "contentType", "acceptContentTypes"})
        qps = obj.get("qps", 50)
        if isinstance(qps, bool) or not isinstance(qps, int | float):
            raise self.fail(
                f"{path}.qps", f"must be a number; -1 or 0 lifts the limit (got {qps!r})"
            )
        burst = obj.get("burst", 100)
        if isinstance(burst, bool) or not isinstance(burst, int) or burst < 0:
            raise self.fail(f"{path}.burst", f"must be a whole number >= 0 (got {burst!r})")
        return ClientConnectionConfig(
            kubeconfig=self.string(obj, "kubeconfig", "", path), qps=float(qps), burst=burst
        )

    def leader_election(self, value: Any) -> LeaderElectionConfig:
        path = "leaderElection"
        obj = self.mapping(value, path)
        self.refuse(
            obj,
            path,
            {
                "leaderElect",
                "leaseDuration",
                "renewDeadline",
                "retryPeriod",
                "resourceLock",
                "resourceName",
                "resourceNamespace",
            },
        )
        elect = obj.get("leaderElect", True)
        if not isinstance(elect, bool):
            raise self.fail(f"{path}.leaderElect", f"must be true or false (got {elect!r})")
        lock = self.string(obj, "resourceLock", "leases", path)
        if lock != "leases":
            raise self.fail(f"{path}.resourceLock", f"only 'leases' is supported (got {lock!r})")
        return LeaderElectionConfig(
            leader_elect=elect,
            lease_duration=self.seconds(obj, "leaseDuration", 15, path),
            renew_deadline=self.seconds(obj, "renewDeadline", 10, path),
            retry_period=self.seconds(obj, "retryPeriod", 2, path),
            resource_lock=lock,
            resource_name=self.string(obj, "resourceName", "eventsched", path),
            resource_namespace=self.string(obj, "resourceNamespace", "kube-system", path),
        )

    def profiles(self, value: Any) -> tuple[Profile, ...]:
        if value is None:
            return (default_profile(),)
        if not isinstance(value, list) or not value:
            raise self.fail("profiles", "must be a non-empty list of profiles")
        names: list[str] = []
        for i, raw in enumerate(value):
            path = f"profiles[{i}]"
            obj = self.mapping(raw, path)
            self.refuse(obj, path, {"schedulerName"}, _PROFILE_NOT_YET)
            name = self.string(obj, "schedulerName", DEFAULT_SCHEDULER_NAME, path)
            if not name:
                raise self.fail(f"{path}.schedulerName", "must not be empty")
            if name in names:
                raise self.fail(f"{path}.schedulerName", f"duplicate profile name {name!r}")
            names.append(name)
        return tuple(default_profile(name) for name in names)
