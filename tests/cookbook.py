"""The query cookbook's SQL (docs/samples/queries), one file per query and, where
PostgreSQL and SQLite spell it differently, per database: read by docs/querying.md,
by docs/samples/generate.py and by tests/cli/test_query.py."""

from __future__ import annotations

from pathlib import Path

QUERIES = Path(__file__).resolve().parents[1] / "docs" / "samples" / "queries"


def cookbook(name: str, dialect: str) -> str:
    """A cookbook query as docs/querying.md shows it: `NAME.DIALECT.sql` where the two
    databases spell it differently, else `NAME.sql`."""
    spelled = QUERIES / f"{name}.{dialect}.sql"
    return (spelled if spelled.exists() else QUERIES / f"{name}.sql").read_text()
