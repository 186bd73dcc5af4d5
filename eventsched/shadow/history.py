"""What the log says of a pod from before this process started, for a restarted shadow.

Started again, the shadow lists the cluster afresh. A pod the list shows placed that the
log last recorded pending, or never saw, was placed while the shadow was down: it is
decided pending (as the log had it, or as listed less its node), then its placement is
folded. A pod left pending with the
message the log's last verdict on it compared is not judged again.
"""

from __future__ import annotations

from collections.abc import Collection

from eventsched.events import EventReader
from eventsched.model import Pod
from eventsched.scheduler.eventhandlers import logged_unassigned
from eventsched.scheduler.journal import Journal


class LogHistory:
    """Answers from the journal's projections and, for a pod the log knew before this
    process started, from its events."""

    def __init__(
        self, journal: Journal, reader: EventReader, annotation_keys: Collection[str]
    ) -> None:
        self.journal = journal
        self.reader = reader
        self.annotation_keys = frozenset(annotation_keys)

    def placed_unseen(self, pod: Pod) -> bool:
        """Whether the log never saw `pod` (placed now) placed: its last observation of it
        is the pod pending, or there is none."""
        last = self.journal.projections.observed.get(f"pod/{pod.uid}")
        if last is None:
            return True
        record = pod.keeping_annotations(self.annotation_keys).to_record()
        return logged_unassigned(last, record)

    def last_message(self, uid: str) -> str:
        """The FailedScheduling message the log's last verdict on the pod compared ("" when
        none). Read from the log for a pod it knew (once per pod and process: the shadow
        remembers the messages it judges)."""
        if f"pod/{uid}" not in self.journal.projections.observed:
            return ""
        verdicts = [e for e in self.reader.read_uid(uid) if e.kind == "shadow_verdict"]
        return str(verdicts[-1].data.get("message") or "") if verdicts else ""
