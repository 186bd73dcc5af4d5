"""A package's public names, imported when first used (PEP 562).

`eventsched run` asks the API server for its first lists before it imports
the scheduler (numpy, SQLAlchemy, the plugins), so the API server prepares
them while Python imports. That needs `eventsched.cluster.kube.prefetch` to
be importable without its packages' `__init__` importing everything they
export: those packages name their exports here, and each is imported on its
first use. Type checkers and import-linter read the same names from the
`if TYPE_CHECKING:` imports beside each table.

A name must not be that of one of the package's modules: importing the module
would set the package's attribute to it, hiding the name (`eventsched.audit`
exports a function `replay` beside its module `replay`, so it stays eager).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: name -> the module (relative to `package`)
    that defines it, imported on first use and then kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__
