"""List and watch one resource as plain JSON, as client-go's reflector does.

A list, then a watch from the list's resourceVersion (bookmarks allowed, a
server-side timeout of 5 to 10 minutes so streams are renewed), then watches
from the last version seen. A watch that ends is reopened from there; a 410
Gone (the version was compacted) or a failing watch relists, and the relist
reports as DELETED every object that vanished meanwhile. Objects reach the
handler as the decoded dicts, never as generated models.

The list asks for the resourceVersion client-go's reflector asks for
(`relistResourceVersion`): "0" the first time, which the API server answers
from its watch cache instead of reading every object from etcd; the last
version seen when a watch failed; none (a consistent read) after a 410.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
import structlog

from eventsched.cluster.kube.rest import Answer, Decode, Rest, TransportError

log = structlog.get_logger(__name__)

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"

#: handler(event_type, object) for ADDED, MODIFIED and DELETED.
Handler = Callable[[str, dict[str, Any]], None]

#: What the first list asks for: the API server's watch cache (see above).
FIRST_VERSION = "0"

#: (path, query) -> the answer to that list, already asked for (prefetch.py), or None.
FirstAnswer = Callable[[str, Mapping[str, str]], Answer | None]

#: Seconds between attempts after a list fails, doubling up to the maximum.
BACKOFF_INITIAL, BACKOFF_MAX = 0.8, 30.0


@dataclass(frozen=True, slots=True)
class Decoders:
    """How an informer reads a list answer and a watch line."""

    list: Decode = orjson.loads
    event: Decode = orjson.loads


class ListWatchError(Exception):
    """The API answered a list or watch with an error status."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class Informer:
    """One resource's list+watch loop on a thread; `synced` is set after the first list."""

    def __init__(
        self,
        rest: Rest,
        path: str,
        handler: Handler,
        on_error: Callable[[Exception], None],
        query: Mapping[str, str] | None = None,
        name: str = "informer",
        optional: bool = False,
        decoders: Decoders | None = None,
        first_answer: FirstAnswer | None = None,
    ) -> None:
        """`optional`: a custom resource the API server may not serve (its CRD not
        installed): a 404 on the list counts as synced with nothing, and the list is
        retried (the CRD may be installed later). `decoders`: how list answers and watch
        lines are read (all of each object, unless told). `first_answer`: where the first
        list's answer may be waiting already (`Prefetch.take`)."""
        self._rest = rest
        self._path = path
        self._handler = handler
        self._on_error = on_error
        self._query = dict(query or {})
        self._name = name
        self._optional = optional
        self._decoders = decoders or Decoders()
        self._first_answer = first_answer
        #: Set while an optional resource is not served (404 on its list).
        self.absent = threading.Event()
        self.synced = threading.Event()
        self._stopped = threading.Event()
        #: Set by `relist`: the open watch is ended and the loop lists again.
        self._relist = threading.Event()
        self._response: Any = None
        self._response_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        #: key -> the last object delivered, so a relist can report what vanished.
        self._known: dict[str, dict[str, Any]] = {}

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """End the loop; an open watch is shut down so its thread does not wait for an event."""
        self._stopped.set()
        with self._response_lock:
            response = self._response
        if response is not None:
            _end(response)
        if self._thread is not None:
            self._thread.join(timeout)

    def relist(self) -> None:
        """List again now (no older than what was seen): `synced` is clear until delivered."""
        self.synced.clear()
        self._relist.set()
        with self._response_lock:
            response = self._response
        if response is not None:
            _end(response)

    def get(self, key: str) -> dict[str, Any] | None:
        """The last state delivered for `namespace/name` (or `name`)."""
        return self._known.get(key)

    # -- the loop ---------------------------------------------------------------

    def _run(self) -> None:
        delay = BACKOFF_INITIAL
        version = ""  # where the next watch starts; none: list first
        list_from = FIRST_VERSION
        while not self._stopped.is_set():
            if self._relist.is_set():
                self._relist.clear()
                list_from, version = version or list_from, ""
            try:
                if not version:
                    version = self._list(list_from)
                    delay = BACKOFF_INITIAL
                version = self._watch(version)
            except Exception as exc:
                if self._stopped.is_set():
                    return
                expired = isinstance(exc, ListWatchError) and exc.code == 410
                self._on_error(exc)
                # Relist, as the reflector does after a failed watch: no older than what
                # was seen, or a consistent read when that version is gone.
                list_from = "" if expired else (version or list_from)
                version = ""
                if not expired:
                    self._stopped.wait(delay * random.uniform(1.0, 1.25))
                    delay = min(delay * 2, BACKOFF_MAX)

    def _list(self, resource_version: str) -> str:
        query = dict(self._query)
        if resource_version:
            query["resourceVersion"] = resource_version
        first, self._first_answer = self._first_answer, None
        asked = time.monotonic()
        answer = first(self._path, query) if first is not None else None
        prefetched = answer is not None
        if answer is None:
            answer = self._rest.request("GET", self._path, query=query, decode=self._decoders.list)
        answered = time.monotonic()
        if self._optional and answer.status == 404:
            self.absent.set()
            self.synced.set()
        if not answer.ok:
            raise ListWatchError(answer.status, answer.message)
        self.absent.clear()
        body = answer.body or {}
        seen: set[str] = set()
        for item in body.get("items") or []:
            key = _key(item)
            seen.add(key)
            self._deliver(MODIFIED if key in self._known else ADDED, item)
        for key in [k for k in self._known if k not in seen]:
            self._deliver(DELETED, self._known[key])
        # Said before `synced`, so a start that waited for the lists has seen it said.
        log.debug(
            "listed",
            resource=self._name,
            items=len(seen),
            prefetched=prefetched,
            answer_seconds=round(answered - asked, 3),
            deliver_seconds=round(time.monotonic() - answered, 3),
        )
        if not self._relist.is_set():  # else this list may be older than the one asked for
            self.synced.set()
        return str((body.get("metadata") or {}).get("resourceVersion") or "")

    def _watch(self, version: str) -> str:
        query = {
            **self._query,
            "watch": "true",
            "resourceVersion": version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(random.randint(300, 600)),
        }
        try:
            events = self._rest.stream(
                self._path, query, on_open=self._opened, decode=self._decoders.event
            )
            for event in events:
                if self._stopped.is_set():
                    break
                kind = event.get("type")
                obj = event.get("object") or {}
                if kind == "ERROR":
                    raise ListWatchError(int(obj.get("code") or 0), str(obj.get("message") or ""))
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if kind in (ADDED, MODIFIED, DELETED):
                    self._deliver(kind, obj)
        except TransportError:
            if self._stopped.is_set() or self._relist.is_set():
                return version
            raise
        finally:
            self._opened(None)
        return version

    def _opened(self, response: Any) -> None:
        with self._response_lock:
            self._response = response
        if response is not None and (self._stopped.is_set() or self._relist.is_set()):
            _end(response)  # stop() came between opening the watch and this: it found none

    def _deliver(self, kind: str, obj: dict[str, Any]) -> None:
        # Kept per object for relists and conditions; its field-manager bookkeeping is not needed.
        (obj.get("metadata") or {}).pop("managedFields", None)
        key = _key(obj)
        if kind == DELETED:
            self._known.pop(key, None)
        else:
            self._known[key] = obj
        try:
            self._handler(kind, obj)
        except Exception:  # one bad object must not stop the watch
            log.exception("informer handler failed", resource=self._name, object=key)


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))


def _end(response: Any) -> None:
    """End an open watch from another thread (its reader's read returns at once)."""
    with contextlib.suppress(Exception):  # already closed
        response.shutdown()
