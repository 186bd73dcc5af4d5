"""The registries: every plugin under its upstream name; ours imported only when a profile
first builds one."""

from __future__ import annotations

import subprocess
import sys

from eventsched.framework import Handle
from eventsched.plugins import full_registry
from eventsched.plugins.registry import OWN, Deferred


def test_each_deferred_plugin_is_the_class_of_that_name() -> None:
    registry = full_registry()
    for name in OWN:
        factory = registry.factory(name)
        assert isinstance(factory, Deferred)
        assert factory.plugin_class().name == name


def test_a_deferred_plugin_builds_as_its_class_and_names_its_custom_kinds() -> None:
    registry = full_registry()
    plugin = registry.factory("NodeLabel")({}, Handle(None))
    assert type(plugin).__name__ == "NodeLabel"
    assert registry.custom_kinds(["CapacityScheduling", "NodeResourceTopologyMatch"]) == {
        "ElasticQuota",
        "NodeResourceTopology",
    }
    assert registry.custom_kinds(["NodeLabel", "NodeResourcesFit"]) == frozenset()


def test_the_registry_does_not_import_our_plugins_until_one_is_built() -> None:
    modules = tuple(f"eventsched.plugins.{module}" for module in OWN.values())
    code = (
        "import sys\n"
        "from eventsched.plugins import full_registry\n"
        "registry = full_registry()\n"
        f"ours = [m for m in sys.modules if m.startswith({modules!r})]\n"
        "assert not ours, ours\n"
        "registry.custom_kinds(['StickyNode'])\n"
        "assert 'eventsched.plugins.stickynode' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
