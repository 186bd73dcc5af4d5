"""API objects to the scheduler's model, tolerating what the API can hold.

The informer hands over the client's generated models; the model reads the
API's JSON shape, so they are serialized back first. A pod the model cannot
read (a quantity it does not parse, say) is reported and skipped: one bad
object must not stop the informer or the scheduling loop.
"""

from __future__ import annotations

from typing import Any

import structlog
from kubernetes import client

from eventsched.model import Node, Pod
from eventsched.model.errors import ManifestError

log = structlog.get_logger(__name__)

_serializer = client.ApiClient()


def as_dict(obj: Any) -> dict[str, Any]:
    """The API's JSON form of a generated model (or the dict itself)."""
    if isinstance(obj, dict):
        return obj
    data = _serializer.sanitize_for_serialization(obj)
    return data if isinstance(data, dict) else {}


def to_pod(obj: Any) -> Pod | None:
    data = as_dict(obj)
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


def to_node(obj: Any) -> Node | None:
    data = as_dict(obj)
    try:
        return Node.from_manifest(data)
    except (ManifestError, ValueError, TypeError, AttributeError) as exc:
        log.warning(
            "node ignored: the scheduler cannot read it",
            node=(data.get("metadata") or {}).get("name"),
            error=str(exc),
        )
        return None
