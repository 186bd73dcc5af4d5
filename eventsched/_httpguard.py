"""Who may ask the HTTPS endpoints what: kube-scheduler's delegated authentication and
authorization, in front of /metrics, the probes, the extender's verbs.

As k8s.io/apiserver's filters (WithAuthentication, then WithAuthorization) have it:

- a client certificate verified against `--client-ca-file` is the user of its CN,
  in the groups of its Os; else a bearer token is reviewed by the API server
  (TokenReview). A token the API server does not know gets 401, also on the
  always-allowed paths;
- a request without credentials is let through only to the always-allowed paths
  (`--authorization-always-allow-paths`: /healthz, /readyz, /livez by default;
  `PATH*` a prefix); elsewhere it gets 401 (upstream authenticates it as
  system:anonymous and the API server's RBAC then refuses it 403);
- a member of system:masters is allowed everything, as upstream's AlwaysAllowGroups;
- anyone else is asked of the API server (SubjectAccessReview on the non-resource
  URL, the verb the HTTP method in lower case: `get` for GET): 403 with upstream's
  Status body when it says no, 500 when it cannot say.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

log = structlog.get_logger(__name__)

#: kube-scheduler's `--authorization-always-allow-paths` default.
ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
#: k8s.io/apiserver's AlwaysAllowGroups.
ALWAYS_ALLOW_GROUPS = ("system:masters",)


class ReviewError(Exception):
    """The API server did not answer a review (unreachable, or refused to review)."""


@dataclass(frozen=True, slots=True)
class UserInfo:
    """Who made a request: a reviewed token's user, or a client certificate's CN and O."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    reason: str = ""


#: A request without credentials, as upstream's anonymous authenticator names it.
ANONYMOUS = UserInfo("system:anonymous", groups=("system:unauthenticated",))


class Reviewer(Protocol):
    def user_of(self, token: str) -> UserInfo | None: ...

    def may(self, user: UserInfo, verb: str, path: str) -> Verdict: ...


@dataclass(frozen=True, slots=True)
class Refusal:
    """The answer to a request not let through."""

    code: int
    body: bytes
    content_type: str = "application/json"


class Guard:
    def __init__(
        self,
        reviewer: Reviewer,
        always_allow_paths: Sequence[str] = ALWAYS_ALLOW_PATHS,
        always_allow_groups: Sequence[str] = ALWAYS_ALLOW_GROUPS,
    ) -> None:
        self.reviewer = reviewer
        self._exact = frozenset(p for p in always_allow_paths if not p.endswith("*"))
        self._prefixes = tuple(p[:-1] for p in always_allow_paths if p.endswith("*"))
        self._groups = frozenset(always_allow_groups)

    def check(
        self,
        method: str,
        path: str,
        authorization: str,
        peer_certificate: dict[str, Any] | None,
    ) -> Refusal | None:
        """None when the request may go on, else the answer to give it; `authorization`
        is the request's Authorization header ('' without one)."""
        user = self.authenticate(authorization, peer_certificate)
        if isinstance(user, Refusal):
            return user
        if self.always_allowed(path):
            return None
        if user is ANONYMOUS:
            return UNAUTHORIZED
        if self.in_always_allowed_group(user):
            return None
        verb = method.lower()
        try:
            verdict = self.reviewer.may(user, verb, path)
        except ReviewError as exc:
            log.warning("cannot authorize a request", user=user.name, path=path, problem=str(exc))
            text = f"Internal Server Error: {json.dumps(path)}: {exc}\n"
            return Refusal(500, text.encode(), "text/plain; charset=utf-8")
        if verdict.allowed:
            return None
        return forbidden(user.name, verb, path, verdict.reason)

    def authenticate(
        self, authorization: str, peer_certificate: dict[str, Any] | None
    ) -> UserInfo | Refusal:
        """Who made the request (ANONYMOUS without credentials), or the 401 for
        credentials the API server does not accept or could not review."""
        try:
            user = self._authenticate(authorization, peer_certificate)
        except ReviewError as exc:
            log.warning(
                "cannot authenticate a request: the API server did not review its token",
                problem=str(exc),
            )
            return UNAUTHORIZED
        return UNAUTHORIZED if user is None else user

    def always_allowed(self, path: str) -> bool:
        """Whether `path` is one of `--authorization-always-allow-paths`."""
        return path in self._exact or path.startswith(self._prefixes or ("\0",))

    def in_always_allowed_group(self, user: UserInfo) -> bool:
        return bool(self._groups.intersection(user.groups))

    def _authenticate(
        self, authorization: str, peer_certificate: dict[str, Any] | None
    ) -> UserInfo | None:
        """The user (ANONYMOUS without credentials); None: credentials not accepted."""
        if peer_certificate:
            user = certificate_user(peer_certificate)
            if user is not None:
                return user
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return self.reviewer.user_of(token.strip())
        return ANONYMOUS


def certificate_user(certificate: dict[str, Any]) -> UserInfo | None:
    """The CN and Os of a verified client certificate (`SSLSocket.getpeercert()`)."""
    names = [pair for rdn in certificate.get("subject", ()) for pair in rdn]
    common = [value for key, value in names if key == "commonName"]
    if not common:
        return None
    groups = tuple(value for key, value in names if key == "organizationName")
    return UserInfo(common[0], groups=groups)


def failure_status(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A Failure metav1.Status, its fields in Go's order (`details` only when given)."""
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details is not None:
        status["details"] = details
    status["code"] = code
    return status


def _status(code: int, reason: str, message: str, details: bool) -> bytes:
    """A metav1.Status as the Kubernetes components write it (Go's field order and escapes)."""
    status = failure_status(code, reason, message, {} if details else None)
    text = json.dumps(status, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (text + "\n").encode()


UNAUTHORIZED = Refusal(401, _status(401, "Unauthorized", "Unauthorized", details=False))


def forbidden(user: str, verb: str, path: str, reason: str) -> Refusal:
    """responsewriters.Forbidden's answer for a non-resource request."""
    message = f"forbidden: User {json.dumps(user)} cannot {verb} path {json.dumps(path)}"
    if reason:
        message = f"{message}: {reason}"
    return Refusal(403, _status(403, "Forbidden", message, details=True))
