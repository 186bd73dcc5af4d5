"""A gang's page: its members, where each stands, and which keep it from being bound."""

from __future__ import annotations

from eventsched.audit.gang import Gang, load_gang
from eventsched.events.reader import EventReader
from eventsched.ui.web import NotFound


def load(reader: EventReader, namespace: str, name: str) -> Gang:
    """The gang; NotFound when no pod of the namespace ever carried its label."""
    gang = load_gang(reader, namespace, name)
    if gang is None:
        raise NotFound(
            f"the event log has no pod of namespace {namespace} in pod group {name} "
            "(label scheduling.x-k8s.io/pod-group)."
        )
    return gang
