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
from eventsched.model.accounting import LEGACY_ACCOUNTING, Accounting
from eventsched.model.errors import ManifestError
from eventsched.model.objects import ClusterObject, object_from_manifest

log = structlog.get_logger(__name__)


def to_pod(data: dict[str, Any], accounting: Accounting = LEGACY_ACCOUNTING) -> Pod | None:
    """The pod, its resources counted by `accounting`; None (reported) when unreadable."""
    try:
        return Pod.from_manifest(data, accounting=accounting)
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


def to_object(data: dict[str, Any], kind: str) -> ClusterObject | None:
    """An object of model/objects.py's KINDS; list items carry no `kind`, so the informer names it."""
    try:
        return object_from_manifest({**data, "kind": kind})
    except (ManifestError, ValueError, TypeError, AttributeError) as exc:
        meta = data.get("metadata") or {}
        log.warning(
            "object ignored: the scheduler cannot read it",
            kind=kind,
            name=f"{meta.get('namespace') or ''}/{meta.get('name')}".lstrip("/"),
            error=str(exc),
        )
        return None
