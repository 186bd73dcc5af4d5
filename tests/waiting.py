"""Polling with a deadline, for tests that wait on another process or thread."""

from __future__ import annotations

import ssl
import time
import urllib.request
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    what: str,
    predicate: Callable[[], T],
    timeout: float = 10.0,
    state: Callable[[], str] = lambda: "",
) -> T:
    """Poll `predicate`; on timeout fail with `what` and the state `state` describes."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}; {state()}")
        time.sleep(0.01)


def answers_ok(url: str, context: ssl.SSLContext | None = None) -> bool:
    """Whether GET `url` answers 200 within 2 s (a child process's /readyz); `context`
    for an https:// one."""
    try:
        with urllib.request.urlopen(url, timeout=2, context=context) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False
