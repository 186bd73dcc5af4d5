"""Pods held at Permit until every waiting plugin allows them, one rejects, or time runs out."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

from eventsched.framework.status import Code, Status
from eventsched.model import Pod


class WaitingPod:
    """kube-scheduler's `waitingPod`: a per-plugin deadline, allow/reject from any thread."""

    def __init__(
        self,
        pod: Pod,
        node_name: str,
        timeouts: dict[str, float],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pod = pod
        self.node_name = node_name
        self._clock = clock
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._deadlines = {name: clock() + timeout for name, timeout in timeouts.items()}
        self._waits = dict(timeouts)
        self._status: Status | None = None

    @property
    def pending_plugins(self) -> list[str]:
        with self._lock:
            return sorted(self._deadlines)

    def allow(self, plugin: str) -> None:
        with self._lock:
            self._deadlines.pop(plugin, None)
            if not self._deadlines and self._status is None:
                self._status = Status(plugin=plugin)
                self._done.set()

    def reject(self, plugin: str, message: str) -> None:
        with self._lock:
            if self._status is None:
                self._status = Status(Code.UNSCHEDULABLE, (message,), plugin)
                self._done.set()

    def preempt(self, plugin: str, message: str) -> bool:
        """v1.37's `waitingPod.Preempt`: stop the wait with an Error (the pod goes back to
        be retried, not marked unschedulable); False when a verdict was given already."""
        with self._lock:
            if self._status is not None:
                return False
            self._status = Status(Code.ERROR, (message,), plugin, RuntimeError(message))
            self._done.set()
            return True

    def wait(self) -> Status:
        """Block the binding cycle until the verdict; a deadline passing is a rejection."""
        while True:
            with self._lock:
                if self._status is not None:
                    return self._status
                plugin, deadline = min(self._deadlines.items(), key=lambda kv: kv[1])
            remaining = deadline - self._clock()
            if remaining <= 0:
                self.reject(
                    plugin,
                    f"rejected due to timeout after waiting {self._waits[plugin]:g}s at plugin {plugin}",
                )
                continue
            self._done.wait(remaining)


class WaitingPods:
    """The framework's map of waiting pods, which Permit plugins reach through the handle."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pods: dict[str, WaitingPod] = {}

    def add(self, waiting: WaitingPod) -> None:
        with self._lock:
            self._pods[waiting.pod.uid] = waiting

    def remove(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        with self._lock:
            return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        with self._lock:
            return iter(list(self._pods.values()))

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)
