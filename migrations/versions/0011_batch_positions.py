"""An index on `event_batches.last_position`: the batch that holds a position, found at once.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27

`explain`, the web page and `query` check, on the spot, the batches that hold
the events they show (eventsched/audit/integrity.py): each batch's hash
recomputed from its stored events, and its links to the batches beside it.
The batch holding position P is the first whose `last_position` is at or
after P; without an index that is a scan of `event_batches` for every
batch looked up. With it, a lookup is one index probe, and a check costs
what the batches shown hold, on a log of any size.

Frozen on purpose, like 0001: no eventsched import; eventsched/events/schema.py
declares the same index, and a test checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_event_batches_last_position", "event_batches", ["last_position"])


def downgrade() -> None:
    op.drop_index("ix_event_batches_last_position", table_name="event_batches")
