"""Taints and tolerations, with the matching rules of k8s.io/api/core/v1."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eventsched.model.valueclass import value_class

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)


@value_class
class Taint:
    key: str
    value: str = ""
    effect: str = NO_SCHEDULE

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Taint:
        return cls(str(raw.get("key", "")), str(raw.get("value") or ""), str(raw.get("effect", "")))

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "value": self.value, "effect": self.effect}


@value_class
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Toleration:
        return cls(
            str(raw.get("key") or ""),
            str(raw.get("operator") or "Equal"),
            str(raw.get("value") or ""),
            str(raw.get("effect") or ""),
        )

    def to_dict(self) -> dict[str, str]:
        return {
            "key": self.key,
            "operator": self.operator,
            "value": self.value,
            "effect": self.effect,
        }

    def tolerates(self, taint: Taint) -> bool:
        """`Toleration.ToleratesTaint`: an empty key with Exists matches every taint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


def find_untolerated(
    taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...], effects: tuple[str, ...]
) -> Taint | None:
    """The first taint with one of `effects` that no toleration matches."""
    for taint in taints:
        if taint.effect not in effects:
            continue
        if not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None
