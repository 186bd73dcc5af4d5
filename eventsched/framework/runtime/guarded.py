"""One guarded call: a plugin that raises becomes an Error status naming it, never a crash."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

import structlog

from eventsched.framework.status import Status

log = structlog.get_logger(__name__)

_T = TypeVar("_T")
_P = ParamSpec("_P")


class PluginFailed(Exception):
    """A plugin raised: `status` is the Error status that names it."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def guarded(
    point: str, plugin: str, call: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs
) -> _T:
    """`call(*args)`, or PluginFailed with an Error status naming `plugin` if it raises.

    A plugin's bug must not stop the scheduling loop: the attempt ends with
    an Error status (logged with its traceback), as kube-scheduler's runtime
    turns a plugin's error into a framework Status.
    """
    try:
        return call(*args, **kwargs)
    except Exception as exc:
        raise failed(point, plugin, exc) from exc


def failed(point: str, plugin: str, exc: Exception) -> PluginFailed:
    """Log `plugin`'s exception (with its traceback) and make the PluginFailed that names it:
    for `raise failed(...) from exc` in an `except` block."""
    log.exception("plugin failed", plugin=plugin, point=point)
    return PluginFailed(Status.as_error(exc, plugin))
