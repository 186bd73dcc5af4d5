"""A reviewer standing in for the API server's TokenReview and SubjectAccessReview."""

from __future__ import annotations

from dataclasses import dataclass, field

from eventsched._httpguard import ReviewError, UserInfo, Verdict


@dataclass
class FakeReviewer:
    users: dict[str, UserInfo]
    allowed: set[tuple[str, str, str]]
    asked: list[tuple[str, str, str]] = field(default_factory=list)
    down: bool = False

    def user_of(self, token: str) -> UserInfo | None:
        if self.down:
            raise ReviewError("TokenReview: connection refused")
        return self.users.get(token)

    def may(self, user: UserInfo, verb: str, path: str) -> Verdict:
        self.asked.append((user.name, verb, path))
        if self.down:
            raise ReviewError("SubjectAccessReview: connection refused")
        return Verdict((user.name, verb, path) in self.allowed)

    def may_get_pods(self, user: UserInfo, namespace: str) -> Verdict:
        """`get pods` in `namespace`, allowed as (user, "get", "pods/NAMESPACE")."""
        return self.may(user, "get", f"pods/{namespace}")
