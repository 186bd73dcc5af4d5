"""KubeSchedulerConfiguration files (kubescheduler.config.k8s.io/v1), the part `run` needs.

Field names, defaults and duration syntax are kube-scheduler's, so an
operator's existing file reads the same. Every error names the field's path
and the fix; a field kube-scheduler has but eventsched does not implement
yet is refused by name instead of being silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from eventsched.config import pluginsets, upstreamplugins
from eventsched.config.defaults import DEFAULT_SCHEDULER_NAME, default_profile
from eventsched.config.extendercheck import extender_errors
from eventsched.config.extenders import (
    DEFAULT_HTTP_TIMEOUT,
    EXTENDER_FIELDS,
    TLS_FIELDS,
    ExtenderConfig,
    ManagedResource,
    with_extenders,
)
from eventsched.config.fields import FieldReader, parse_duration, percent
from eventsched.config.types import (
    ClientConnectionConfig,
    ConfigError,
    LeaderElectionConfig,
    SchedulerConfig,
)
from eventsched.framework import (
    Features,
    Handle,
    PluginArgsError,
    Profile,
    Registry,
    implements,
)
from eventsched.framework.features import LEGACY

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"


_NOT_YET = {
    "delayCacheUntilActive": "is not supported",
}
_TOP_LEVEL = frozenset(
    {
        "apiVersion",
        "kind",
        "clientConnection",
        "leaderElection",
        "profiles",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
        "percentageOfNodesToScore",
        "parallelism",
        "extenders",
        "enableProfiling",
        "enableContentionProfiling",
    }
)
_PROFILE_FIELDS = frozenset(
    {"schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore"}
)
#: The `apiVersion`/`kind` an args object may carry, as upstream's typed args do.
_ARGS_META = ("apiVersion", "kind")


def read_config(path: str | Path | None, registry: Registry, features: Features) -> SchedulerConfig:
    """The configuration a command runs with: the file's when `path` names one, else
    kube-scheduler's defaults, deciding as `features` say."""
    if path:
        return load_config(path, registry, features)
    return SchedulerConfig(
        profiles=(default_profile(features=features),),
        features=features,
        notes=upstreamplugins.left_out_notes(features, "the default profile"),
    )


def load_config(
    path: str | Path, registry: Registry, features: Features = LEGACY
) -> SchedulerConfig:
    """Read and validate a file; `registry` names the plugins its profiles may use,
    `features` the Kubernetes version and gates they decide as."""
    source = str(path)
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError(source, "", f"cannot read the file: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            source,
            "",
            f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}): "
            "save it as UTF-8, as kube-scheduler reads it",
        ) from exc
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(source, "", f"not valid YAML: {exc}") from exc
    return parse_config(doc, source, registry, features)


def parse_config(
    doc: Any, source: str, registry: Registry, features: Features = LEGACY
) -> SchedulerConfig:
    reader = _Reader(source, registry, features)
    obj = reader.mapping(doc, "")
    if obj.get("apiVersion") != API_VERSION:
        raise ConfigError(
            source, "apiVersion", f"must be {API_VERSION} (got {obj.get('apiVersion')!r})"
        )
    if obj.get("kind") != KIND:
        raise ConfigError(source, "kind", f"must be {KIND} (got {obj.get('kind')!r})")
    reader.refuse(obj, "", set(_TOP_LEVEL), _NOT_YET)
    for flag in ("enableProfiling", "enableContentionProfiling"):
        reader.flag(obj, flag, False, "")
    initial = reader.number(obj, "podInitialBackoffSeconds", 1, minimum=1)
    maximum = reader.number(obj, "podMaxBackoffSeconds", 10, minimum=1)
    if maximum < initial:
        raise ConfigError(
            source, "podMaxBackoffSeconds", "must be at least podInitialBackoffSeconds"
        )
    percentage = reader.percentage(obj, "percentageOfNodesToScore", "")
    parallelism = reader.whole(obj, "parallelism", 16, "", lambda n: n > 0, "> 0")
    extenders = reader.extenders(obj.get("extenders"))
    profiles = with_extenders(reader.profiles(obj.get("profiles"), percentage or 0), extenders)
    return SchedulerConfig(
        profiles=profiles,
        client_connection=reader.client_connection(obj.get("clientConnection")),
        leader_election=reader.leader_election(obj.get("leaderElection")),
        pod_initial_backoff_seconds=float(initial),
        pod_max_backoff_seconds=float(maximum),
        percentage_of_nodes_to_score=percentage or 0,
        parallelism=parallelism,
        extenders=extenders,
        warnings=tuple(reader.warnings),
        notes=tuple(reader.notes),
        features=features,
    )


class _Reader(FieldReader):
    """The document's KubeSchedulerConfiguration parts, raising ConfigError with the field's path."""

    def __init__(self, source: str, registry: Registry, features: Features) -> None:
        super().__init__(source)
        self.registry = registry
        self.features = features
        self.warnings: list[str] = []
        self.notes: list[str] = []

    def client_connection(self, value: Any) -> ClientConnectionConfig:
        path = "clientConnection"
        obj = self.mapping(value, path)
        self.refuse(obj, path, {"kubeconfig", "qps", "burst", "contentType", "acceptContentTypes"})
        qps = obj.get("qps", 50)
        if isinstance(qps, bool) or not isinstance(qps, int | float):
            raise self.fail(
                f"{path}.qps", f"must be a number; -1 or 0 lifts the limit (got {qps!r})"
            )
        burst = self.whole(obj, "burst", 100, path, lambda n: n >= 0, ">= 0")
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
        elect = self.flag(obj, "leaderElect", True, path)
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

    def percentage(self, obj: Mapping[str, Any], key: str, path: str) -> int | None:
        return self.whole(obj, key, None, path, percent, "0..100; 0 means adaptive")

    def profiles(self, value: Any, percentage: int) -> tuple[Profile, ...]:
        if value is None:
            value = [{}]
        if not isinstance(value, list) or not value:
            raise self.fail("profiles", "must be a non-empty list of profiles")
        profiles: list[Profile] = []
        for i, raw in enumerate(value):
            path = f"profiles[{i}]"
            obj = self.mapping(raw, path)
            self.refuse(obj, path, set(_PROFILE_FIELDS))
            name = self.string(obj, "schedulerName", DEFAULT_SCHEDULER_NAME, path)
            if not name:
                raise self.fail(f"{path}.schedulerName", "must not be empty")
            if name in (p.scheduler_name for p in profiles):
                raise self.fail(f"{path}.schedulerName", f"duplicate profile name {name!r}")
            own = self.percentage(obj, "percentageOfNodesToScore", path)
            profiles.append(self.profile(obj, path, name, percentage if own is None else own))
        sorts = {p.at("queueSort") for p in profiles}
        if len(sorts) > 1:
            raise self.fail(
                "profiles",
                "queueSort must be the same for all profiles (as kube-scheduler requires)",
            )
        return tuple(profiles)

    def profile(self, obj: Mapping[str, Any], path: str, name: str, percentage: int) -> Profile:
        args = self.plugin_config(obj.get("pluginConfig"), f"{path}.pluginConfig")
        instances = self.instantiate(args, f"{path}.pluginConfig")
        custom = self.plugin_sets(obj.get("plugins"), f"{path}.plugins")
        merged = pluginsets.merge(pluginsets.defaults(self.features), custom)
        disabled = frozenset(custom.at(pluginsets.MULTI_POINT).disabled)
        self.notes += upstreamplugins.left_out_notes(
            self.features, f"{self.source}: {path}", disabled
        )

        def implements_at(plugin: str, point: str) -> bool:
            return implements(self.instance(plugin, instances), point)

        try:
            plugins = pluginsets.expand(merged, implements_at)
        except pluginsets.PluginSetError as exc:
            raise self.fail(exc.path, exc.problem) from exc
        if len(plugins.get("queueSort", ())) != 1:
            raise self.fail(
                f"{path}.plugins.queueSort",
                f"exactly one queueSort plugin must be enabled (got "
                f"{len(plugins.get('queueSort', ()))}); disable the default PrioritySort "
                f"when you enable another",
            )
        if not plugins.get("bind"):
            raise self.fail(f"{path}.plugins.bind", "at least one bind plugin must be enabled")
        return Profile(
            scheduler_name=name,
            plugins=plugins,
            plugin_args={n: a for n, (a, _) in args.items() if n in self.registry},
            percentage_of_nodes_to_score=percentage,
            features=self.features,
        )

    def plugin_sets(self, value: Any, path: str) -> pluginsets.PluginSets:
        obj = self.mapping(value, path)
        points = (pluginsets.MULTI_POINT, *pluginsets.POINTS)
        self.refuse(obj, path, set(points))
        sets: dict[str, pluginsets.PluginSet] = {}
        for point in points:
            if point in obj:
                sets[point] = self.plugin_set(obj[point], f"{path}.{point}", point)
        return pluginsets.PluginSets(sets)

    def plugin_set(self, value: Any, path: str, point: str) -> pluginsets.PluginSet:
        obj = self.mapping(value, path)
        self.refuse(obj, path, {"enabled", "disabled"})
        enabled: list[pluginsets.Entry] = []
        for j, item in enumerate(self.items(obj.get("enabled"), f"{path}.enabled")):
            where = f"{path}.enabled[{j}]"
            plugin = self.mapping(item, where)
            self.refuse(plugin, where, {"name", "weight"})
            name = self.plugin_name(plugin, where, enabling=True)
            weight = self.whole(plugin, "weight", None, where, percent, "0..100")
            enabled.append(pluginsets.Entry(name, weight, f"{where}.name"))
        disabled: list[str] = []
        for j, item in enumerate(self.items(obj.get("disabled"), f"{path}.disabled")):
            where = f"{path}.disabled[{j}]"
            plugin = self.mapping(item, where)
            self.refuse(plugin, where, {"name", "weight"})
            disabled.append(self.plugin_name(plugin, where, enabling=False))
        return pluginsets.PluginSet(tuple(enabled), tuple(disabled))

    def plugin_name(self, plugin: Mapping[str, Any], where: str, enabling: bool) -> str:
        name = plugin.get("name")
        if not isinstance(name, str) or not name:
            raise self.fail(f"{where}.name", f"must be a plugin name (got {name!r})")
        if name == "*" and not enabling:
            return name
        if not upstreamplugins.has_plugin(name, self.features):
            if not enabling:
                return name  # disabling what the version does not have changes nothing
            raise self.fail(
                f"{where}.name", upstreamplugins.absent_plugin_problem(name, self.features)
            )
        if name in self.registry:
            return name
        if name in pluginsets.UPSTREAM_NOT_IMPLEMENTED:
            if not enabling:
                return name
            raise self.fail(
                f"{where}.name",
                f"{name} is a kube-scheduler plugin eventsched does not implement yet; "
                f"remove it (README: Not supported yet)",
            )
        raise self.fail(f"{where}.name", self.unknown(name))

    def unknown(self, name: str) -> str:
        if name in pluginsets.SCHEDULER_PLUGINS:
            ours = [p for p in pluginsets.SCHEDULER_PLUGINS if p in self.registry]
            return (
                f"{name} is a scheduler-plugins plugin eventsched does not implement; of "
                f"scheduler-plugins' it implements {', '.join(ours)}"
            )
        known = (n for n in self.registry if upstreamplugins.has_plugin(n, self.features))
        return f"unknown plugin {name!r}; known plugins: {', '.join(sorted(known))}"

    def plugin_config(self, value: Any, path: str) -> dict[str, tuple[dict[str, Any], str]]:
        """Plugin name to (args without apiVersion/kind, path of the args)."""
        found: dict[str, tuple[dict[str, Any], str]] = {}
        for j, item in enumerate(self.items(value, path)):
            where = f"{path}[{j}]"
            entry = self.mapping(item, where)
            self.refuse(entry, where, {"name", "args"})
            name = entry.get("name")
            if not isinstance(name, str) or not name:
                raise self.fail(f"{where}.name", f"must be a plugin name (got {name!r})")
            if name in found:
                raise self.fail(f"{where}.name", f"repeated config for plugin {name}")
            args = dict(self.mapping(entry.get("args"), f"{where}.args"))
            kind = args.pop("kind", None)
            if kind is not None and kind != f"{name}Args":
                raise self.fail(f"{where}.args.kind", f"must be {name}Args (got {kind!r})")
            args.pop("apiVersion", None)
            if not upstreamplugins.has_plugin(name, self.features):
                raise self.fail(
                    f"{where}.name", upstreamplugins.absent_plugin_problem(name, self.features)
                )
            if name not in self.registry:
                if name not in pluginsets.UPSTREAM_NOT_IMPLEMENTED:
                    raise self.fail(f"{where}.name", self.unknown(name))
                self.warnings.append(
                    f"{self.source}: {where}: {name} is not implemented by eventsched yet; "
                    f"its args are ignored"
                )
            found[name] = (args, f"{where}.args")
        return found

    def instantiate(
        self, args: Mapping[str, tuple[dict[str, Any], str]], path: str
    ) -> dict[str, object]:
        """Build every registered plugin that has args, so bad args fail here with their path."""
        instances: dict[str, object] = {}
        for name, (plugin_args, where) in args.items():
            if name in self.registry:
                instances[name] = self.build(name, plugin_args, where)
        return instances

    def build(self, name: str, args: Mapping[str, Any], where: str) -> object:
        try:
            return self.registry.factory(name)(args, Handle(), self.features)
        except PluginArgsError as exc:
            raise self.fail(f"{where}.{exc.field}" if exc.field else where, exc.problem) from exc
        except (TypeError, ValueError) as exc:
            raise self.fail(where, str(exc)) from exc

    def instance(self, name: str, instances: dict[str, object]) -> object:
        if name not in instances:
            instances[name] = self.build(name, {}, name)
        return instances[name]

    def extenders(self, value: Any) -> tuple[ExtenderConfig, ...]:
        found: list[ExtenderConfig] = []
        for i, item in enumerate(self.items(value, "extenders")):
            found.append(self.extender(item, f"extenders[{i}]"))
        errors = extender_errors(found)
        if errors:
            raise self.fail(errors[0].field, errors[0].problem)
        return tuple(found)

    def extender(self, value: Any, path: str) -> ExtenderConfig:
        obj = self.mapping(value, path)
        self.refuse(obj, path, set(EXTENDER_FIELDS))
        url = self.string(obj, "urlPrefix", "", path)
        if not url:
            raise self.fail(f"{path}.urlPrefix", "is required, e.g. http://127.0.0.1:8888/")
        verbs = {
            k: self.string(obj, k, "", path)
            for k in ("filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb")
        }
        weight = self.whole(obj, "weight", 0, path)
        flags = {
            k: self.flag(obj, k, False, path)
            for k in ("enableHTTPS", "nodeCacheCapable", "ignorable")
        }
        tls = self.mapping(obj.get("tlsConfig"), f"{path}.tlsConfig")
        self.refuse(tls, f"{path}.tlsConfig", set(TLS_FIELDS))
        timeout = self.http_timeout(obj.get("httpTimeout"), f"{path}.httpTimeout")
        resources: list[ManagedResource] = []
        for j, item in enumerate(
            self.items(obj.get("managedResources"), f"{path}.managedResources")
        ):
            where = f"{path}.managedResources[{j}]"
            res = self.mapping(item, where)
            self.refuse(res, where, {"name", "ignoredByScheduler"})
            rname = self.string(res, "name", "", where)
            ignored = self.flag(res, "ignoredByScheduler", False, where)
            resources.append(ManagedResource(rname, ignored))
        return ExtenderConfig(
            url_prefix=url,
            filter_verb=verbs["filterVerb"],
            preempt_verb=verbs["preemptVerb"],
            prioritize_verb=verbs["prioritizeVerb"],
            weight=weight,
            bind_verb=verbs["bindVerb"],
            enable_https=flags["enableHTTPS"],
            tls_config=dict(tls),
            http_timeout=timeout,
            node_cache_capable=flags["nodeCacheCapable"],
            managed_resources=tuple(resources),
            ignorable=flags["ignorable"],
        )

    def http_timeout(self, raw: Any, path: str) -> float:
        """A metav1.Duration in seconds, negative ones too (extender_errors refuses them);
        absent or 0 is kube-scheduler's DefaultExtenderTimeout."""
        if raw is None:
            return DEFAULT_HTTP_TIMEOUT
        if not isinstance(raw, str):
            raise self.fail(path, f"must be a duration like 30s (got {raw!r})")
        text = raw.strip()
        sign = -1.0 if text.startswith("-") else 1.0
        try:
            seconds = parse_duration(text.lstrip("+-"))
        except ValueError as exc:
            raise self.fail(path, str(exc)) from exc
        return sign * seconds if seconds else DEFAULT_HTTP_TIMEOUT
