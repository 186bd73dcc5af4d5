"""PostgreSQL: snapshots.state as json (text kept as written), not jsonb.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23

A snapshot is written once and read back whole at every start; it is never
queried inside. jsonb made PostgreSQL rebuild the text of a ~100 MB
document on every read (0.8 s of a 1.9 s restart at 10M events, 820,000
first placements); json hands back the stored text. SQLite stores JSON
as text already: nothing changes there.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import context, op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _postgresql() -> bool:
    return context.get_context().dialect.name == "postgresql"


def upgrade() -> None:
    if _postgresql():
        op.execute("ALTER TABLE snapshots ALTER COLUMN state TYPE json USING state::json")


def downgrade() -> None:
    if _postgresql():
        op.execute("ALTER TABLE snapshots ALTER COLUMN state TYPE jsonb USING state::jsonb")
