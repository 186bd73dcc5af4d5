"""Client-side rate limiting, as client-go's QPS/burst token bucket.

The Python client has none, and a scheduler that binds hundreds of pods a
second can flood an API server with Bindings, Events and status patches.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class TokenBucket:
    """`qps` tokens a second, at most `burst` saved; `acquire` blocks until one is free.

    qps <= 0 means unlimited, as `--kube-api-qps=-1` does for kube-scheduler.
    """

    def __init__(
        self,
        qps: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.qps = qps
        self.burst = max(1, burst)
        self._tokens = float(self.burst)
        self._clock = clock
        self._sleep = sleep
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Take one token; returns how long the caller waited."""
        if self.qps <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            wait = 0.0 if self._tokens >= 0 else -self._tokens / self.qps
        if wait:
            self._sleep(wait)
        return wait
