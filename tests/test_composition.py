"""Big parts are joined by composition: no class of eventsched extends another of eventsched,
except the few specializations listed here with the reason each is one.

A class that extends another only to reach its private state (a base that declares
attributes only the subclass sets, a subclass that overrides the base's private methods)
is what this keeps out: a part is given its collaborators in its constructor instead. A
new entry here needs a reason a reviewer can check.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator

import eventsched

#: (class, base) -> why the class is a specialization of its base, not a way into it.
ALLOWED: dict[tuple[str, str], str] = {
    (
        "eventsched.config.file._Reader",
        "eventsched.config.fields.FieldReader",
    ): "adds KubeSchedulerConfiguration's sections over FieldReader's public typed accessors",
    (
        "eventsched._httpserver.SecureHTTPServer",
        "eventsched._httpserver.QuietHTTPServer",
    ): "the same quiet server, each connection's TLS handshake done on its handler thread "
    "through socketserver's finish_request hook",
    **{
        (
            f"eventsched.plugins.nodevolumelimits.intree.{name}",
            "eventsched.plugins.nodevolumelimits.intree.InTreeVolumeLimits",
        ): "one plugin per in-tree volume type, as upstream's; it sets only class attributes"
        for name in ("EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits")
    },
    **{
        (
            f"eventsched.plugins.{module}._{name}WithPreFilter",
            f"eventsched.plugins.{module}.{name}",
        ): "the plugin as kube-scheduler 1.37 has it, with a PreFilter: a plugin's extension "
        "points are its class's (framework/interface.py answers once per class), so the "
        "version's extra point is a class that adds that one method and nothing else"
        for module, name in (
            ("nodename", "NodeName"),
            ("nodeunschedulable", "NodeUnschedulable"),
            ("tainttoleration", "TaintToleration"),
        )
    },
}


def _modules() -> Iterator[str]:
    for info in pkgutil.walk_packages(eventsched.__path__, "eventsched."):
        if not info.name.endswith("__main__"):
            yield info.name


def _ours(cls: type) -> bool:
    return cls.__module__.startswith("eventsched.")


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _inherited() -> set[tuple[str, str]]:
    """Every (class, base) pair of eventsched's own classes, protocols and exceptions aside."""
    pairs = set()
    for module in _modules():
        for _, cls in inspect.getmembers(importlib.import_module(module), inspect.isclass):
            if not _ours(cls) or cls.__module__ != module or issubclass(cls, BaseException):
                continue
            if getattr(cls, "_is_protocol", False):
                continue  # a protocol extending a protocol declares an interface, no state
            for base in cls.__mro__[1:]:
                if _ours(base) and not getattr(base, "_is_protocol", False):
                    pairs.add((_name(cls), _name(base)))
    return pairs


def test_no_class_extends_another_of_ours_but_the_listed_specializations() -> None:
    found = _inherited()
    unexpected = sorted(found - ALLOWED.keys())
    assert not unexpected, (
        "classes that extend another of eventsched's (give the part its collaborators in "
        f"its constructor instead, or list it with a reason): {unexpected}"
    )


def test_every_listed_specialization_still_exists() -> None:
    stale = sorted(ALLOWED.keys() - _inherited())
    assert not stale, f"listed but gone (remove them from ALLOWED): {stale}"
