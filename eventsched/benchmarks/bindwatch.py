"""The benchmark's view of the binds: a watch of the pods that have a node, timed as seen.

Shared by `bench --kube` (kube.py) and the restart benchmark (kube_restart.py).
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import kubernetes.client

if TYPE_CHECKING:
    from eventsched.benchmarks.controlplane import ControlPlane

_NAME = re.compile(
    rb'^\{"type":"(\w+)","object":\{"kind":"Pod","apiVersion":"v1","metadata":\{"name":"([^"]+)"'
)


class BindWatch:
    """Watches the namespace's pods that have a node name (``fieldSelector=spec.nodeName!=``:
    a pod appears, ADDED, when it is bound) and records when each one was first seen.

    The API server may close a watch whose reader falls behind; the watch then lists again
    (pods bound in the gap get the time of that list) and resumes (counted in `restarts`).
    `patient`: the API server may go away for a while (the failover benchmark restarts
    it), so a stream that breaks ends quietly and the list and watch are tried again
    until they succeed or the watch is closed.
    """

    def __init__(self, cp: ControlPlane, namespace: str, *, patient: bool = False) -> None:
        self.bound: dict[str, float] = {}
        self.done = threading.Event()
        self.expected = 0
        self.restarts = 0
        self._patient = patient
        self._namespace = namespace
        self._closed = False
        self._error: BaseException | None = None
        self._client = cp.api_client()
        self._core: Any = kubernetes.client.CoreV1Api(self._client)
        # The response (headers) is back once the watch is established: no bind is missed.
        self._response = self._watch()
        self._thread = threading.Thread(target=self._read, name="bind-watch", daemon=True)

    def _watch(self) -> Any:
        listed = json.loads(
            self._core.list_namespaced_pod(
                self._namespace, field_selector="spec.nodeName!=", _preload_content=False
            ).data
        )
        now = time.monotonic()
        for pod in listed["items"]:
            self.bound.setdefault(pod["metadata"]["name"], now)
        return self._core.list_namespaced_pod(
            self._namespace,
            field_selector="spec.nodeName!=",
            watch=True,
            resource_version=listed["metadata"]["resourceVersion"],
            allow_watch_bookmarks=False,
            timeout_seconds=3600,
            _preload_content=False,
        )

    def start(self, expected: int) -> None:
        self.expected = expected
        if len(self.bound) >= expected:
            self.done.set()
        self._thread.start()

    def _read(self) -> None:
        try:
            while len(self.bound) < self.expected and not self._closed:
                self._follow_stream()
                if len(self.bound) >= self.expected or self._closed:
                    break
                self.restarts += 1
                with contextlib.suppress(Exception):
                    self._response.release_conn()
                self._response = self._watch_again()
        except BaseException as e:  # the connection closed under us at close(), or a bug
            if not self._closed:
                self._error = e
        finally:
            self.done.set()

    def _follow_stream(self) -> None:
        """Follow the current watch until it ends or every pod expected is bound."""
        if not self._patient:
            self._follow(self._response)
            return
        with contextlib.suppress(Exception):  # the stream broke under a stopping server
            self._follow(self._response)

    def _watch_again(self) -> Any:
        """List and watch again after the watch ended early."""
        while True:
            try:
                return self._watch()
            except Exception:
                if self._closed or not self._patient:
                    raise
                time.sleep(0.2)

    def _follow(self, response: Any) -> None:
        buffer = b""
        for chunk in response.stream(1 << 16, decode_content=True):
            now = time.monotonic()
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                match = _NAME.match(line)
                if match is not None:  # the fast path: no need to decode the whole pod
                    kind, name = match.group(1).decode(), match.group(2).decode()
                elif line.strip():
                    event = json.loads(line)
                    kind = event.get("type", "")
                    if kind == "ERROR":
                        status = event.get("object") or {}
                        if status.get("code") == 410:  # Gone: list and watch again
                            return
                        raise RuntimeError(f"watch error: {status}")
                    name = ((event.get("object") or {}).get("metadata") or {}).get("name", "")
                else:
                    continue
                if kind == "ADDED":
                    self.bound.setdefault(name, now)
            if len(self.bound) >= self.expected:
                return

    def close(self) -> None:
        self._closed = True
        # A reader blocked in the socket holds the response's buffer lock, so close() alone
        # would wait for the next event (up to the watch's hour when the scheduler stopped
        # binding): shutting the socket's read side first returns that read.
        with contextlib.suppress(Exception):
            self._response.shutdown()
        with contextlib.suppress(Exception):
            self._response.release_conn()
            self._response.close()
        with contextlib.suppress(Exception):
            self._client.close()

    @property
    def error(self) -> BaseException | None:
        return self._error


def wait_for_bound(
    watch: BindWatch,
    proc: subprocess.Popen[bytes],
    deadline: float,
    seen: Callable[[list[str]], bool] = bool,
    what: str = "no pod bound",
) -> str | None:
    """Poll every 5 ms until `seen` holds for the names the watch has seen bound; what went
    wrong instead (the scheduler exited, the watch ended, the deadline passed), if it did."""
    while not seen(list(watch.bound)):
        if proc.poll() is not None:
            return f"the scheduler exited with status {proc.returncode}"
        # The watch may end (all bound, or failed) between the check above and this one.
        if watch.done.is_set() and not seen(list(watch.bound)):
            return f"the watch ended with {what}: {watch.error!r}"
        if time.monotonic() > deadline:
            return f"timed out with {what}"
        time.sleep(0.005)
    return None
