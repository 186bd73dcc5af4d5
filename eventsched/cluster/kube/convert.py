"""API objects to the scheduler's model, tolerating what the API can hold.

The informer hands over the API's JSON as decoded dicts, which is the shape
the model reads (no generated models in between). A pod the model cannot
read (a quantity it does not parse, say) is reported and skipped: one bad
object must not stop the informer or the scheduling loop.
"""

from __future__ import annotations

from typing import Any

import structlog

from eventsched.model import Node, Pod
from eventsched.model.errors import ManifestError

log = structlog.get_logger(__name__)


def to_pod(data: dict[str, Any]) -> Pod | None:
    try:
        return Pod.from_manifest(data)
    except (ManifestError, ValueError, TypeError, AttributeError) as exc:
        meta = data.get("metadata") or {}
        log.warning(
            "pod ignored: the scheduler cannot read it",
            pod=f"{meta.get('namespace')}/{meta.get('name')}",
            error=str(exc),
        )
        return None


def to_node(data: dict[str, Any]) -> Node | None:
    try:
        return Node.from_manifest(data)
    except (ManifestError, ValueError, TypeError, AttributeError) as exc:
        log.warning(
            "node ignored: the scheduler cannot read it",
            node=(data.get("metadata") or {}).get("name"),
            error=str(exc),
        )
        return None
