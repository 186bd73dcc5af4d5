"""ImportanceSort (QueueSort + PreEnqueue): the `eventsched.io/importance` annotation first.

Order in activeQ: higher importance first (an integer annotation; absent or
malformed counts as 0), then higher pod priority, then earlier arrival, so
with no annotations it orders exactly as PrioritySort does.

`less` runs O(log n) times per queue operation, so it must not parse text:
parsed values are cached by annotation text (the parse depends on nothing
else), which parses each pod's value at most once and shares the work
between pods carrying the same value. A malformed value never blocks the
queue; PreEnqueue reports it once per pod uid and value, as an
`input_recorded` event on the pod and a Warning Event, and lets the pod in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import structlog

from eventsched.framework import (
    LEGACY_FEATURES,
    Features,
    Handle,
    PluginArgsError,
    QueuedPodInfo,
    Status,
    check_args,
)
from eventsched.model import Pod

log = structlog.get_logger(__name__)

NAME = "ImportanceSort"
ANNOTATION = "eventsched.io/importance"
DEFAULT_IMPORTANCE = 0
#: The Event reason on a pod whose importance annotation cannot be read.
REASON = "InvalidImportance"
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: What Go's strconv.ParseInt(s, 10, 64) accepts: ASCII digits, an optional sign, no spaces.
_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
#: Kubernetes' qualified name: an optional DNS-subdomain prefix and "/", then a name.
_QUALIFIED_NAME = re.compile(
    r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z"
)
#: Bounds on the caches, so pods churning through a long-lived scheduler cannot grow them forever.
_MAX_CACHED_VALUES = 4096
_MAX_REPORTED = 65536
#: How much of a malformed value goes into the log and the Event note (annotations may be 256 KiB).
_SHOWN_CHARS = 64


def parse_importance(text: str) -> tuple[int, str | None]:
    """The importance a value stands for and, when it is malformed, why (then the value is 0)."""
    if not _INTEGER.match(text):
        return DEFAULT_IMPORTANCE, "not an integer"
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        return DEFAULT_IMPORTANCE, "out of the int64 range"
    return value, None


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "..."


class ImportanceSort:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args, ("annotation",))
        annotation = args.get("annotation", ANNOTATION)
        if (
            not isinstance(annotation, str)
            or not _QUALIFIED_NAME.match(annotation)
            or len(annotation.rpartition("/")[0]) > 253
        ):
            raise PluginArgsError(
                "annotation",
                "must be an annotation key such as eventsched.io/importance "
                f"(an optional DNS prefix and '/', then a name of at most 63 characters; "
                f"got {annotation!r})",
            )
        self.annotation: str = annotation
        self.handle = handle
        #: Annotation text -> importance; malformed texts map to the default.
        self._values: dict[str, int] = {}
        #: (pod uid, annotation text) already reported as malformed; insertion-ordered for eviction.
        self._reported: dict[tuple[str, str], None] = {}

    # -- QueueSort ----------------------------------------------------------------

    def annotations_read(self) -> tuple[str, ...]:
        return (self.annotation,)

    def importance(self, pod: Pod) -> int:
        text = pod.annotations.get(self.annotation)
        if text is None:
            return DEFAULT_IMPORTANCE
        value = self._values.get(text)
        if value is None:
            if len(self._values) >= _MAX_CACHED_VALUES:
                self._values.clear()
            value = self._values[text] = parse_importance(text)[0]
        return value

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        ia = self.importance(a.pod)
        ib = self.importance(b.pod)
        if ia != ib:
            return ia > ib
        if a.pod.priority != b.pod.priority:
            return a.pod.priority > b.pod.priority
        return (a.timestamp, a.sequence) < (b.timestamp, b.sequence)

    # -- PreEnqueue ---------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Always admits the pod; reports a malformed annotation once per pod uid and value.

        The scheduler gives the handle a sink stamped with this pod while
        PreEnqueue runs, so what is recorded here lands on the pod's history.
        """
        text = pod.annotations.get(self.annotation)
        if text is None:
            return None
        value, error = parse_importance(text)
        if error is None:
            return None
        key = (pod.uid, text)
        if key in self._reported:
            return None
        if len(self._reported) >= _MAX_REPORTED:
            del self._reported[next(iter(self._reported))]
        self._reported[key] = None
        shown = _shown(text)
        self.handle.record_input(
            self.name,
            "importance",
            {"annotation": self.annotation, "value": shown, "error": error, "used": value},
        )
        note = (
            f"annotation {self.annotation}={json.dumps(shown)} is {error}, so importance {value} is used; "
            f"set it to a whole number between {INT64_MIN} and {INT64_MAX} "
            f'(e.g. "10"; higher is scheduled first) or remove it'
        )
        self.handle.emit_event(pod, "Warning", REASON, "Scheduling", note)
        log.warning(
            "malformed importance annotation",
            pod=pod.key,
            annotation=self.annotation,
            value=shown,
            error=error,
            used=value,
        )
        return None
