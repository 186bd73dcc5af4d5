"""TokenReview and SubjectAccessReview against the API server, as kube-scheduler delegates.

k8s.io/apiserver's DelegatingAuthenticationOptions and DelegatingAuthorizationOptions
ask the API server who a bearer token belongs to (TokenReview) and whether that user
may make a request (SubjectAccessReview), and keep each answer 10 s (`CacheTTL`,
`AllowCacheTTL`, `DenyCacheTTL`), so that a Prometheus scraping every few seconds
costs the API server one review of each kind per 10 s.
"""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any

from eventsched._httpguard import ReviewError, UserInfo, Verdict
from eventsched.cluster.kube.connection import Api
from eventsched.cluster.kube.rest import Rest, TransportError

#: kube-scheduler's defaults for both caches (authentication and authorization).
CACHE_SECONDS = 10.0
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"


class _Cache:
    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._entries: dict[object, tuple[float, object]] = {}
        self._lock = threading.Lock()

    def get(self, key: object) -> object | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] < time.monotonic():
                return None
            return entry[1]

    def put(self, key: object, value: object) -> None:
        now = time.monotonic()
        with self._lock:
            if len(self._entries) > 1024:  # drop what expired before it grows without bound
                self._entries = {k: e for k, e in self._entries.items() if e[0] >= now}
            self._entries[key] = (now + self._seconds, value)


class Reviews:
    """The two reviews through one small pool of connections, their answers cached."""

    def __init__(self, api: Api, cache_seconds: float = CACHE_SECONDS) -> None:
        self._rest = Rest(api.configuration, pool_size=4)
        self._tokens = _Cache(cache_seconds)
        self._access = _Cache(cache_seconds)

    def user_of(self, token: str) -> UserInfo | None:
        """The token's user, None when the API server says it is not authenticated."""
        key = hashlib.sha256(token.encode()).digest()  # tokens are not kept in memory
        cached = self._tokens.get(key)
        if cached is not None:
            return cached if isinstance(cached, UserInfo) else None
        status = self._review(TOKEN_REVIEWS, {"token": token}, "TokenReview")
        user = _user(status) if status.get("authenticated") else None
        self._tokens.put(key, user if user is not None else False)
        return user

    def may(self, user: UserInfo, verb: str, path: str) -> Verdict:
        """Whether `user` may `verb` the non-resource URL `path`."""
        return self._access_review(user, "nonResourceAttributes", {"path": path, "verb": verb})

    def may_get_pods(self, user: UserInfo, namespace: str) -> Verdict:
        """Whether `user` may `get` pods in `namespace` ('': in every namespace)."""
        attributes = {"namespace": namespace, "verb": "get", "resource": "pods"}
        return self._access_review(user, "resourceAttributes", attributes)

    def _access_review(self, user: UserInfo, kind: str, attributes: dict[str, str]) -> Verdict:
        key = (
            user.name,
            user.uid,
            user.groups,
            tuple(sorted(user.extra.items())),
            kind,
            tuple(sorted(attributes.items())),
        )
        cached = self._access.get(key)
        if isinstance(cached, Verdict):
            return cached
        spec: dict[str, Any] = {"user": user.name, "groups": list(user.groups), kind: attributes}
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra.items()}
        status = self._review(ACCESS_REVIEWS, spec, "SubjectAccessReview")
        verdict = Verdict(bool(status.get("allowed")), str(status.get("reason") or ""))
        self._access.put(key, verdict)
        return verdict

    def _review(self, path: str, spec: dict[str, Any], kind: str) -> dict[str, Any]:
        group = path.split("/")[2]
        body = {"apiVersion": f"{group}/v1", "kind": kind, "spec": spec}
        try:
            answer = self._rest.request("POST", path, body)
        except TransportError as exc:
            raise ReviewError(f"{kind}: {exc}") from exc
        if not answer.ok or not isinstance(answer.body, dict):
            raise ReviewError(f"{kind}: {answer.message}")
        status = answer.body.get("status") or {}
        if status.get("error"):
            raise ReviewError(f"{kind}: {status['error']}")
        return dict(status)


def _user(status: dict[str, Any]) -> UserInfo | None:
    user = status.get("user") or {}
    if not user.get("username"):
        return None
    extra = {str(k): tuple(str(x) for x in v) for k, v in (user.get("extra") or {}).items()}
    return UserInfo(
        str(user["username"]),
        str(user.get("uid") or ""),
        tuple(str(g) for g in user.get("groups") or ()),
        extra,
    )
