"""PriorityClass resolution, as the API server's Priority admission plugin does it.

A pod normally names a class (`priorityClassName`) and the API server fills
in `spec.priority`; the scheduler only ever sees the integer. Manifests
written for a real cluster therefore often carry the name alone, and
loading them without this step would silently give every pod priority 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.model import ManifestError

#: Classes every cluster has without a manifest (`scheduling.k8s.io` built-ins).
BUILTIN_CLASSES = {
    "system-cluster-critical": 2_000_000_000,
    "system-node-critical": 2_000_001_000,
}


@dataclass(slots=True)
class PriorityClasses:
    """The PriorityClass objects found in the manifests, plus the built-in ones."""

    values: dict[str, int] = field(default_factory=lambda: dict(BUILTIN_CLASSES))
    global_default: str = ""

    @classmethod
    def from_objects(cls, objects: Iterable[tuple[str, Mapping[str, Any]]]) -> PriorityClasses:
        """Read `(location, PriorityClass object)` pairs; errors carry the location."""
        classes = cls()
        defined_at: dict[str, str] = {}
        for location, obj in objects:
            meta = obj.get("metadata") or {}
            name = meta.get("name") if isinstance(meta, Mapping) else None
            if not isinstance(name, str) or not name:
                raise ManifestError(
                    f"{location}: PriorityClass", "metadata.name", "is required (a DNS-1123 name)"
                )
            where = f"{location}: PriorityClass {name}"
            value = obj.get("value")
            if not isinstance(value, int) or isinstance(value, bool):
                raise ManifestError(where, "value", f"must be an integer (got {value!r})")
            if name in defined_at:
                raise ManifestError(
                    where, "metadata.name", f"duplicate: also defined at {defined_at[name]}"
                )
            defined_at[name] = location
            classes.values[name] = value
            if obj.get("globalDefault") is True:
                if classes.global_default:
                    raise ManifestError(
                        where,
                        "globalDefault",
                        f"only one PriorityClass may be the global default; "
                        f"{classes.global_default!r} already is",
                    )
                classes.global_default = name
        return classes

    def resolve(self, spec: Mapping[str, Any], where: str, prefix: str = "") -> Mapping[str, Any]:
        """`spec` with `priority` filled in from its class; `prefix` locates spec in the object."""
        class_name = spec.get("priorityClassName") or self.global_default
        if not class_name:
            return spec
        if class_name not in self.values:
            raise ManifestError(
                where,
                f"{prefix}spec.priorityClassName",
                f"no PriorityClass named {class_name!r} (add a PriorityClass manifest, or use "
                f"{' or '.join(BUILTIN_CLASSES)})",
            )
        value = self.values[class_name]
        given = spec.get("priority")
        if given is None:
            return {**spec, "priority": value}
        if given != value:
            raise ManifestError(
                where,
                f"{prefix}spec.priority",
                f"is {given!r} but PriorityClass {class_name!r} has value {value}; "
                "leave spec.priority out and the class sets it",
            )
        return spec
