"""A package's public names, imported when first used (PEP 562).

`eventsched run` asks the API server for its first lists before it imports
the scheduler (numpy, SQLAlchemy, the plugins), so the API server prepares
them while Python imports. That needs `eventsched.cluster.kube.prefetch` to
be importable without its packages' `__init__` importing everything they
export: those packages name their exports here, and each is imported on its
first use. Type checkers and import-linter read the same names from the
`if TYPE_CHECKING:` imports beside each table.

A name may be that of the module defining it (`eventsched.audit` exports the
function `replay` of its module `replay`). Importing that module sets the
package's attribute to the module, hiding the name, so such a package's
attribute keeps the name's value instead (`_NamesOverModules`), whichever of
the two is imported first.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


def exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: name -> the module (relative to `package`)
    that defines it, imported on first use and then kept in the package's namespace.
    Called from the package's `__init__` (it marks the names its modules share)."""
    shadowed = frozenset(name for name, module in names.items() if name == module)
    if shadowed:
        owner = sys.modules[package]
        owner.__class__ = _NamesOverModules
        owner.__dict__["_names_over_modules"] = shadowed

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__


class _NamesOverModules(ModuleType):
    """A package exporting names defined in modules of the same name: when the import
    system sets the package's attribute `name` to its just-loaded module `name`, the
    attribute becomes that module's `name` (as an eager `from .name import name` in
    the package's `__init__` leaves it). The module itself stays in `sys.modules`."""

    def __setattr__(self, attr: str, value: Any) -> None:
        if (
            isinstance(value, ModuleType)
            and attr in self.__dict__.get("_names_over_modules", ())
            and value.__name__ == f"{self.__name__}.{attr}"
        ):
            value = getattr(value, attr)
        super().__setattr__(attr, value)
