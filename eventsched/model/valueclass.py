"""`value_class`: an immutable dataclass for the objects made for every pod scheduled
(Pod and its parts, Node and its taints, Status, ClusterChange, label selectors, an
encoded log record).

A frozen dataclass sets each field in `__init__` through `object.__setattr__`, a call
per field; a plain one stores it directly. For `Pod` (31 fields), made three or four
times for each pod a real cluster's scheduler places (read from the list or watch,
from its logged record as the view folds the observation, again from the watch once
bound, and assumed on its node), that was 12 us against 2 us a construction on the
2-core benchmark machine, and 28 us against 12 for `Pod.from_manifest`.

So a value class is frozen where it matters, to the type checker: mypy refuses any
assignment to a field (`dataclass_transform(frozen_default=True)`), and nothing in
eventsched assigns one. At run time it is a plain slotted dataclass, hashed from its
fields as a frozen one is; like `EventRecord`, treat it as read-only.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar, dataclass_transform

_T = TypeVar("_T")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def value_class(cls: type[_T]) -> type[_T]:
    """`@dataclass(frozen=True, slots=True)` as mypy sees it, built without the frozen
    `__init__` (see the module's docstring)."""
    return dataclass(slots=True, unsafe_hash=True)(cls)


def field_values(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """A function giving an instance's field values in `__init__`'s order (one C call,
    where `dataclasses.replace` looks at every field in Python)."""
    return operator.attrgetter(*(f.name for f in fields(cls)))
