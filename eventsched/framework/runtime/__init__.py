"""The runtime of one profile (kube-scheduler's `framework/runtime`): `Framework` runs
each extension point over a typed `PluginSet`, every plugin call guarded by `guarded` and
counted by its `PluginCaller`; the binding cycle's points are its `BindingPoints`; what it
reports to (`FrameworkObservers`) is given when it is built."""

from eventsched.framework.runtime.bindingpoints import MAX_PERMIT_TIMEOUT
from eventsched.framework.runtime.framework import ExtensionPointObserver, Framework
from eventsched.framework.runtime.guarded import PluginFailed, guarded
from eventsched.framework.runtime.ignored import HONOURED_BY, IgnoredField
from eventsched.framework.runtime.observers import FrameworkObservers
from eventsched.framework.runtime.plugins import FilterEntry, PluginSet, ProfileError, ScoreEntry
from eventsched.framework.runtime.results import Rejection, ScoreTable

__all__ = [
    "HONOURED_BY",
    "MAX_PERMIT_TIMEOUT",
    "ExtensionPointObserver",
    "FilterEntry",
    "Framework",
    "FrameworkObservers",
    "IgnoredField",
    "PluginFailed",
    "PluginSet",
    "ProfileError",
    "Rejection",
    "ScoreEntry",
    "ScoreTable",
    "guarded",
]
