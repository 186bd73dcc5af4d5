"""Extension-point latencies for `scheduler_framework_extension_point_duration_seconds`."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from eventsched.framework.status import SUCCESS, Status

#: (extension point, status code label, profile, seconds): what the scheduler's
#: `scheduler_framework_extension_point_duration_seconds` histogram records.
ExtensionPointObserver = Callable[[str, str, str, float], None]

_F = TypeVar("_F", bound=Callable[..., Any])


def status_in(result: object) -> Status:
    if isinstance(result, Status):
        return result
    if isinstance(result, tuple):
        for item in result:
            if isinstance(item, Status):
                return item
    return SUCCESS


def timed(point: str) -> Callable[[_F], _F]:
    """Time one extension point for the observer, as kube-scheduler's runtime does."""

    def wrap(method: _F) -> _F:
        @functools.wraps(method)
        def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
            observe = self.observe
            if observe is None:
                return method(self, *args, **kwargs)
            started = time.perf_counter()
            result = method(self, *args, **kwargs)
            observe(point, status_in(result).code.label, self.name, time.perf_counter() - started)
            return result

        return cast(_F, timed)

    return wrap
