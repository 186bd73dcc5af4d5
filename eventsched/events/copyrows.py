"""PostgreSQL's append of a batch's events: one binary COPY instead of an INSERT per row.

On the scheduler's hot path each placed pod appends about ten rows. An
`executemany` of INSERTs (psycopg's pipeline) costs PostgreSQL a statement
per row and the client a parameter dump per row in Python; a binary COPY of
the same rows cost a third of the server's CPU and a third of the client's
when measured here (`docs/performance.md`). The rows and the transaction are
the append's as before: COPY runs on the connection SQLAlchemy holds, inside
the append's transaction, and a driver error comes out wrapped as SQLAlchemy
wraps the errors of `exec_driver_sql` (a `DBAPIError`, with
`connection_invalidated` set and the connection invalidated when the
dialect says the error lost the connection), so the append's handling of a
stale connection, a missing partition or a lost COMMIT is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from psycopg import Error as DriverError
from psycopg.adapt import Dumper
from psycopg.pq import Format
from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

#: The PostgreSQL type of each column `appendsql.EVENT_COLUMNS` names, in its order.
EVENT_TYPES = (
    "int8",  # position
    "timestamptz",  # recorded_at
    *("text",) * 9,  # scheduler, instance, attempt, kind, uid, namespace, name, node, plugin
    "jsonb",  # data
)
#: jsonb's binary format: a version byte, then the JSON text.
_JSONB_VERSION = b"\x01"


class CanonicalJsonb(Dumper):
    """jsonb in binary from the JSON text the append already made (the hash's canonical text).

    psycopg's own jsonb dumper would serialize the str again, as a JSON string.
    """

    format = Format.BINARY
    oid = 3802  # jsonb

    def dump(self, obj: Any) -> bytes:
        return _JSONB_VERSION + obj.encode()


def copy_rows(conn: Connection, statement: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """`statement` (a COPY ... FROM STDIN (FORMAT BINARY)) with `rows`, on `conn`'s connection."""
    driver = conn.connection.driver_connection
    assert driver is not None
    try:
        with driver.cursor() as cursor:
            cursor.adapters.register_dumper(None, CanonicalJsonb)
            with cursor.copy(statement) as copy:
                copy.set_types(EVENT_TYPES)
                for row in rows:
                    copy.write_row(row)
    except DriverError as exc:
        dialect = conn.dialect
        # The dialect's own test, as SQLAlchemy applies it to the errors it wraps.
        lost = dialect.is_disconnect(cast(Any, exc), driver, None)
        if lost and not conn.invalidated:
            conn.invalidate(exc)
        raise DBAPIError.instance(
            statement,
            None,
            exc,
            DriverError,
            connection_invalidated=lost,
            dialect=dialect,
        ) from exc
