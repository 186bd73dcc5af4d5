"""metav1.LabelSelector: `matchLabels` and `matchExpressions` (In, NotIn, Exists, DoesNotExist).

Pod topology spread and inter-pod affinity select pods with it. It matches one
label map (`matches`) or every pod row of a `PodTable` at once (`PodTable.matching`),
the second as comparisons of integer label codes.

Semantics as `metav1.LabelSelectorAsSelector`: an empty selector (`{}`) selects
everything, a missing one (None) selects nothing; NotIn and DoesNotExist
match objects without the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eventsched.model.errors import ManifestError
from eventsched.model.valueclass import value_class

IN = "In"
NOT_IN = "NotIn"
EXISTS = "Exists"
DOES_NOT_EXIST = "DoesNotExist"
OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)


@value_class
class LabelRequirement:
    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == EXISTS:
            return self.key in labels
        if self.operator == DOES_NOT_EXIST:
            return self.key not in labels
        value = labels.get(self.key)
        if self.operator == IN:
            return value is not None and value in self.values
        return value is None or value not in self.values


@value_class
class LabelSelector:
    """A parsed selector; `nothing` is the selector that matches no object (a nil selector)."""

    requirements: tuple[LabelRequirement, ...] = ()
    nothing: bool = False

    @property
    def is_everything(self) -> bool:
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(r.matches(labels) for r in self.requirements)

    def with_requirements(self, extra: tuple[LabelRequirement, ...]) -> LabelSelector:
        """This selector ANDed with more requirements (matchLabelKeys, the first-pod rule)."""
        if self.nothing or not extra:
            return self
        return LabelSelector(self.requirements + extra)

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None, where: str, field: str) -> LabelSelector:
        """Read a metav1.LabelSelector; None is the nil selector, which matches nothing."""
        if raw is None:
            return cls(nothing=True)
        if not isinstance(raw, Mapping):
            raise ManifestError(
                where, field, "must be a label selector (matchLabels, matchExpressions)"
            )
        requirements: list[LabelRequirement] = []
        match_labels = raw.get("matchLabels") or {}
        if not isinstance(match_labels, Mapping):
            raise ManifestError(where, f"{field}.matchLabels", "must be a map of label to value")
        for key, value in match_labels.items():
            requirements.append(LabelRequirement(str(key), IN, frozenset([str(value)])))
        for i, expr in enumerate(raw.get("matchExpressions") or []):
            requirements.append(_requirement(expr, where, f"{field}.matchExpressions[{i}]"))
        # Sorted by key as labels.Selector sorts them, so equal selectors compare equal.
        requirements.sort(key=lambda r: (r.key, r.operator, sorted(r.values)))
        return cls(tuple(requirements))

    def to_dict(self) -> dict[str, Any] | None:
        if self.nothing:
            return None
        return {
            "matchExpressions": [
                {"key": r.key, "operator": r.operator, "values": sorted(r.values)}
                for r in self.requirements
            ]
        }


def _requirement(expr: Any, where: str, field: str) -> LabelRequirement:
    if not isinstance(expr, Mapping):
        raise ManifestError(where, field, "must be a map with key, operator and values")
    key = expr.get("key")
    if not key or not isinstance(key, str):
        raise ManifestError(where, f"{field}.key", "is required")
    operator = expr.get("operator")
    if operator not in OPERATORS:
        raise ManifestError(where, f"{field}.operator", f"must be one of {', '.join(OPERATORS)}")
    values = expr.get("values") or []
    if not isinstance(values, list):
        raise ManifestError(where, f"{field}.values", "must be a list of strings")
    if operator in (IN, NOT_IN) and not values:
        raise ManifestError(where, f"{field}.values", f"must be non-empty for operator {operator}")
    if operator in (EXISTS, DOES_NOT_EXIST) and values:
        raise ManifestError(where, f"{field}.values", f"must be empty for operator {operator}")
    return LabelRequirement(key, operator, frozenset(str(v) for v in values))
