"""The package layers, enforced: imports only point down (import-linter contracts in pyproject.toml)."""

from __future__ import annotations

from pathlib import Path

from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(ROOT)
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def test_lazily_exported_names_resolve_and_none_is_a_module_name() -> None:
    """`eventsched._lazy`: a package attribute named as one of its modules would turn into
    that module once the module is imported, so no exported name may be one."""
    import importlib
    import pkgutil

    for package in ("eventsched.model", "eventsched.cluster", "eventsched.cluster.kube"):
        module = importlib.import_module(package)
        modules = {info.name for info in pkgutil.iter_modules(module.__path__)}
        assert not set(module.__all__) & modules, package
        for name in module.__all__:
            assert getattr(module, name) is not None, f"{package}.{name}"
