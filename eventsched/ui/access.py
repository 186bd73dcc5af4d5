"""Who is reading the page, and which namespaces' pods they may see.

Served over HTTPS (`eventsched ui` without `--insecure-local`), each request is
authenticated as kube-scheduler's endpoints are (eventsched._httpguard.Guard: a
client certificate, else a bearer token reviewed by the API server; none: 401 with
kube's Status body). What the user may see is then asked of the API server, one
SubjectAccessReview per namespace: may this user `get` `pods` there? The answers
are cached 10 s per (user, namespace), as upstream's delegating authorizer caches
them (eventsched.cluster.kube.reviews).

Every page handler is handed the request's `Viewer` (app.py's `_threaded` and
`_asynchronous` call no handler without one) and reads the log through it: a pod's
pages `require` its namespace (403 otherwise), lists keep the `visible` rows, and a
page summing over every namespace (the overview's counts, the cluster at a position,
what-if) needs `sees_all`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import structlog

from eventsched._httpguard import (
    ANONYMOUS,
    UNAUTHORIZED,
    Guard,
    Refusal,
    ReviewError,
    UserInfo,
    Verdict,
)

log = structlog.get_logger(__name__)

#: Where the middleware leaves the request's Viewer in the ASGI scope.
SCOPE_KEY = "eventsched.viewer"
#: Where the HTTPS protocol (eventsched.ui.peercert) leaves the verified client certificate.
PEER_CERTIFICATE_KEY = "eventsched.peer_certificate"


class Forbidden(Exception):
    """The reader may not see what they asked for; the message is kube's."""


class Unanswered(Exception):
    """The API server did not answer whether the reader may see a namespace."""


class PodReviewer(Protocol):
    def may_get_pods(self, user: UserInfo, namespace: str) -> Verdict: ...


class _Namespaced(Protocol):
    @property
    def namespace(self) -> str: ...


T = TypeVar("T", bound=_Namespaced)


@dataclass(slots=True)
class Viewer:
    """One request's reader: `may(namespace)` says whether they may get its pods
    ('' asks for every namespace); each answer is kept for the request."""

    name: str
    may: Callable[[str], bool]
    _answers: dict[str, bool] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def sees(self, namespace: str) -> bool:
        with self._lock:
            known = self._answers.get(namespace)
        if known is None:
            known = self.may(namespace)
            with self._lock:
                self._answers[namespace] = known
        return known

    def sees_all(self) -> bool:
        return self.sees("")

    def visible(self, rows: Iterable[T]) -> list[T]:
        """The rows of namespaces the reader may see."""
        return [row for row in rows if self.sees(row.namespace)]

    def require(self, namespace: str) -> None:
        """Raise Forbidden unless the reader may see `namespace`'s pods."""
        if not self.sees(namespace):
            raise Forbidden(pods_forbidden(self.name, namespace))

    def require_all(self, what: str) -> None:
        """Raise Forbidden unless the reader may see every namespace's pods (`what`
        shows pods of them all)."""
        if not self.sees_all():
            raise Forbidden(f"{pods_forbidden(self.name, '')}; {what}")


def everyone() -> Viewer:
    """`--insecure-local`'s reader: sees everything."""
    return Viewer("", lambda _namespace: True)


def nobody(name: str) -> Viewer:
    """A reader of an always-allowed path (the probe, the stylesheet): sees no pod."""
    return Viewer(name, lambda _namespace: False)


def pods_forbidden(user: str, namespace: str) -> str:
    """The API server's message for a refused `get pods` (responsewriters.Forbidden)."""
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return (
        f"pods is forbidden: User {json.dumps(user)} cannot get resource "
        f'"pods" in API group "" {where}'
    )


def viewer_of(scope: Mapping[str, Any]) -> Viewer:
    """The request's reader, as the middleware left it; a request that did not go
    through the middleware sees nothing (a page wired around it fails closed)."""
    viewer = scope.get(SCOPE_KEY)
    return viewer if isinstance(viewer, Viewer) else nobody("")


def reviewed(user: UserInfo, guard: Guard, reviewer: PodReviewer) -> Viewer:
    """A reader whose every namespace is asked of the API server."""
    if guard.in_always_allowed_group(user):
        return Viewer(user.name, lambda _namespace: True)

    def may(namespace: str) -> bool:
        try:
            return reviewer.may_get_pods(user, namespace).allowed
        except ReviewError as exc:
            log.warning("cannot authorize a reader", user=user.name, problem=str(exc))
            raise Unanswered(str(exc)) from exc

    return Viewer(user.name, may)


class Readers:
    """ASGI middleware: each HTTP request's Viewer, from its credentials (`guard`
    and `reviewer`), or everyone's (both None: `--insecure-local`)."""

    def __init__(self, app: Any, guard: Guard | None, reviewer: PodReviewer | None) -> None:
        self.app = app
        self.guard = guard
        self.reviewer = reviewer

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.guard is None or self.reviewer is None:
            scope[SCOPE_KEY] = everyone()
            await self.app(scope, receive, send)
            return
        authorization = ""
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                authorization = value.decode("latin-1")
        certificate = scope.get(PEER_CERTIFICATE_KEY)
        user = await asyncio.to_thread(self.guard.authenticate, authorization, certificate)
        if isinstance(user, Refusal):
            await _refuse(send, user)
            return
        if user is not ANONYMOUS:
            scope[SCOPE_KEY] = reviewed(user, self.guard, self.reviewer)
        elif self.guard.always_allowed(scope["path"]):
            scope[SCOPE_KEY] = nobody(user.name)
        else:
            await _refuse(send, UNAUTHORIZED)
            return
        await self.app(scope, receive, send)


async def _refuse(send: Any, refusal: Refusal) -> None:
    headers = [
        (b"content-type", refusal.content_type.encode()),
        (b"content-length", str(len(refusal.body)).encode()),
    ]
    await send({"type": "http.response.start", "status": refusal.code, "headers": headers})
    await send({"type": "http.response.body", "body": refusal.body})
