"""Plugin name to factory, the way kube-scheduler's `frameworkruntime.Registry` maps them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eventsched.framework.features import Features
    from eventsched.framework.handle import Handle

PluginFactory = Callable[[Mapping[str, Any], "Handle", "Features"], Any]
"""Builds a plugin from its args (already defaulted), the framework handle and the features
(Kubernetes version and gates) it decides with, as upstream's `PluginFactoryWithFts`."""


class PluginArgsError(ValueError):
    """A plugin's args are wrong; `field` is the path inside args, for config errors."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}" if field else problem)


def check_args(plugin: str, args: Mapping[str, Any], known: tuple[str, ...] = ()) -> None:
    """Refuse arg keys a plugin does not take, naming the first and what it does take."""
    unknown = sorted(str(k) for k in set(args) - set(known))
    if unknown:
        takes = f"takes {', '.join(known)}" if known else "takes no args"
        raise PluginArgsError(field_name(unknown[0]), f"unknown field; {plugin} {takes}")


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """One item of a `resources` arg (`[{name, weight}]`, upstream's ResourceSpec): its
    path for messages, its name, and its weight (0 when left out)."""

    where: str
    name: str
    weight: int


def resource_specs(raw: Any, field: str = "resources") -> list[ResourceSpec] | None:
    """A `resources` arg's items (at `field`, e.g. `scoringStrategy.resources`), their
    shape checked (a map of name and an integer weight, nothing else); None when it is
    unset or empty (the plugin's default)."""
    if raw is None or raw == []:
        return None
    if not isinstance(raw, list):
        raise PluginArgsError(field, "must be a list of {name, weight}")
    specs: list[ResourceSpec] = []
    for i, item in enumerate(raw):
        where = f"{field}[{i}]"
        if not isinstance(item, Mapping):
            raise PluginArgsError(where, "must be a map with name and weight")
        unknown = sorted(str(k) for k in item if k not in ("name", "weight"))
        if unknown:
            raise PluginArgsError(f"{where}.{unknown[0]}", "unknown field; takes name, weight")
        name = item.get("name")
        name = "" if name is None else name
        if not isinstance(name, str):
            raise PluginArgsError(f"{where}.name", f"must be a resource name (got {name!r})")
        weight = item.get("weight")
        weight = 0 if weight is None else weight
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise PluginArgsError(f"{where}.weight", f"must be an integer (got {weight!r})")
        specs.append(ResourceSpec(where, name, weight))
    return specs


def field_name(key: object) -> str:
    """A key from a file as an error shows it: quoted when empty, padded or not printable."""
    text = str(key)
    if text and text.isprintable() and text.strip() == text:
        return text
    return json.dumps(text)


class UnknownPluginError(KeyError):
    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown plugin {name!r}; known plugins: {', '.join(sorted(known))}")

    def __str__(self) -> str:
        return str(self.args[0])


class Registry:
    def __init__(self, factories: Mapping[str, PluginFactory] | None = None) -> None:
        self._factories: dict[str, PluginFactory] = dict(factories or {})

    def register(self, name: str, factory: PluginFactory) -> None:
        if name in self._factories:
            raise ValueError(f"a plugin named {name!r} is already registered")
        self._factories[name] = factory

    def merge(self, other: Registry) -> Registry:
        merged = Registry(self._factories)
        for name in other:
            merged.register(name, other.factory(name))
        return merged

    def factory(self, name: str) -> PluginFactory:
        try:
            return self._factories[name]
        except KeyError:
            raise UnknownPluginError(name, list(self._factories)) from None

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def custom_kinds(self, names: Iterable[str]) -> frozenset[str]:
        """The custom resource kinds (ElasticQuota, NodeResourceTopology) the named plugins
        read: each plugin class names them in `custom_kinds`; the cluster adapter watches
        only these, and only when a profile enables such a plugin."""
        return frozenset(
            kind
            for name in names
            if name in self._factories
            for kind in getattr(self._factories[name], "custom_kinds", ())
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)
