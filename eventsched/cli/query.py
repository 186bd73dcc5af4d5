"""`eventsched query "SQL"`: one read-only statement over the log, as a table, CSV or JSON.

The views (eventsched/audit/views.py; `--list-views` prints them, docs/querying.md
shows them at work) are what people query; `events` is there too. The guard against
writes is in `eventsched.audit.query`; this module only turns values into text.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import unicodedata
from collections.abc import Sequence
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, TextIO
from uuid import UUID

from eventsched.audit import views
from eventsched.audit.query import DEFAULT_TIMEOUT_S, QueryError, QueryResult, run_read_only
from eventsched.audit.queryintegrity import MODES, NEWEST_EVENTS, check_result
from eventsched.cli.commands import summary
from eventsched.cli.database import open_reader, resolve_url
from eventsched.cli.integritylines import exit_code, warning_lines
from eventsched.events import EventStoreError

#: Default widest cell in the table format; longer values end in an ellipsis.
DEFAULT_MAX_WIDTH = 60


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "query",
        help=summary("query"),
        description="Run one SQL statement over the event log, read-only: on PostgreSQL in a "
        "READ ONLY transaction that is rolled back, on SQLite with the file opened read-only. "
        f"Views: {views.named()} (--list-views says what each holds).",
    )
    p.add_argument("sql", metavar="SQL", nargs="?", help="one SQL statement; - reads it from stdin")
    p.add_argument(
        "--list-views",
        action="store_true",
        help="list the views (and the table) to query, with what one row of each is; no SQL",
    )
    p.add_argument(
        "--format",
        choices=["table", "csv", "json"],
        default="table",
        help="aligned table (default), CSV with a header row, or a JSON list of objects",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"cancel the query after this long (default {DEFAULT_TIMEOUT_S:g})",
    )
    p.add_argument(
        "--max-width",
        type=int,
        default=DEFAULT_MAX_WIDTH,
        metavar="CHARS",
        help=f"table format: cut longer cells with … (default {DEFAULT_MAX_WIDTH}; 0: never)",
    )
    p.add_argument(
        "--verify",
        choices=MODES,
        default="shown",
        help="check that the result's rows come from a log that verifies: shown (default): "
        "the hash-chain batches holding the rows' positions (a column named position), and "
        "the contradictions among the events of the pods its uid columns name; a result "
        f"without positions verifies the newest {NEWEST_EVENTS:,} events of the chain. all: "
        "the whole chain (about 40 s a million events). Warnings go to stderr; exit 1 when "
        "the check finds something",
    )
    p.set_defaults(func=run, usage_error=p.error)


def run(args: argparse.Namespace) -> int:
    if args.list_views:
        if args.sql is not None:
            args.usage_error("--list-views takes no SQL")
        _write(_views_result(), args)
        return 0  # a list of names, not rows of the log: nothing to verify
    if args.sql is None:
        args.usage_error(
            'give one SQL statement, e.g. "SELECT * FROM decisions LIMIT 10", or --list-views'
        )
    sql = sys.stdin.read() if args.sql == "-" else args.sql
    try:
        result = run_read_only(resolve_url(args.db), sql, timeout=args.timeout)
    except QueryError as exc:
        print(f"eventsched: error: {exc}", file=sys.stderr)
        return 2
    _write(result, args)
    return verify(args.db, result, args.verify)


def _write(result: QueryResult, args: argparse.Namespace) -> None:
    if args.format == "csv":
        write_csv(result, sys.stdout)
    elif args.format == "json":
        write_json(result, sys.stdout)
    else:
        sys.stdout.write(render_table(result, args.max_width))
    sys.stdout.flush()


def verify(db: str | None, result: QueryResult, mode: str) -> int:
    """Check the result (integrity.py) and say on stderr what was found: the exit code."""
    if mode == "none" or not result.columns:
        return 0
    try:
        reader = open_reader(db)
    except EventStoreError as exc:  # an older schema, say: the result stands, unchecked
        print(f"eventsched: note: the result was not checked: {exc}", file=sys.stderr)
        return 0
    try:
        check = check_result(reader, result, mode)
    finally:
        reader.close()
    if check is None:
        return 0
    if check.note:
        print(f"eventsched: note: {check.note}", file=sys.stderr)
    for line in warning_lines(check.integrity):
        print(f"eventsched: {line}", file=sys.stderr)
    return exit_code(check.integrity)


def _views_result() -> QueryResult:
    """The views and the table, as a result in the format asked for."""
    listed = [*views.VIEWS, views.EVENTS]
    return QueryResult(("view", "one row per"), [(v.name, v.row) for v in listed], "")


# -- values --------------------------------------------------------------------


def json_value(value: Any) -> Any:
    """A value as JSON: JSON columns stay structured, times are ISO 8601, numbers stay numbers."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else str(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            return str(value)
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, UUID):
        return str(value)
    return str(value)


def cell_text(value: Any) -> str:
    """A value as one CSV or table cell: JSON compact, times ISO 8601, NULL empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list | tuple):
        return json.dumps(json_value(value), ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, Decimal):  # NUMERIC keeps its scale: ROUND(x, 1) shows 300.0, as SQLite
        return str(value)
    converted = json_value(value)
    return converted if isinstance(converted, str) else str(converted)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


# -- formats ---------------------------------------------------------------------


def write_csv(result: QueryResult, out: TextIO) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(result.columns)
    for row in result.rows:
        writer.writerow([cell_text(v) for v in row])


def write_json(result: QueryResult, out: TextIO) -> None:
    """A list of objects; a repeated column name gets a suffix (_2, _3) so no value is lost."""
    keys = _unique(result.columns)
    objects = [dict(zip(keys, (json_value(v) for v in row), strict=True)) for row in result.rows]
    json.dump(objects, out, indent=2, ensure_ascii=False)
    out.write("\n")


def _unique(columns: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    keys = []
    for column in columns:
        count = seen.get(column, 0) + 1
        seen[column] = count
        keys.append(column if count == 1 else f"{column}_{count}")
    return keys


def render_table(result: QueryResult, max_width: int = DEFAULT_MAX_WIDTH) -> str:
    """Aligned columns (numbers to the right), a rule under the header, then `(N rows)`."""
    if not result.columns:
        return "(no result set)\n"
    header = [_fit(c, max_width) for c in result.columns]
    body = [[_fit(cell_text(v), max_width) for v in row] for row in result.rows]
    numeric = [
        any(_is_number(row[i]) for row in result.rows)
        and all(_is_number(row[i]) or row[i] is None for row in result.rows)
        for i in range(len(header))
    ]
    widths = [
        max([_width(header[i]), *(_width(line[i]) for line in body)]) for i in range(len(header))
    ]

    def line(cells: Sequence[str]) -> str:
        padded = [
            _pad(c, widths[i], right=numeric[i]) if i < len(cells) - 1 or numeric[i] else c
            for i, c in enumerate(cells)
        ]
        return "  ".join(padded).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)]
    out.extend(line(cells) for cells in body)
    count = len(result.rows)
    out.append(f"({count} row{'' if count == 1 else 's'})")
    return "\n".join(out) + "\n"


def _fit(text: str, max_width: int) -> str:
    """One line, at most `max_width` columns wide (0: no limit)."""
    text = text.replace("\r\n", "\n").replace("\n", "\\n").replace("\t", " ")
    if max_width <= 0 or _width(text) <= max_width:
        return text
    kept = []
    used = 0
    for ch in text:
        w = _char_width(ch)
        if used + w > max_width - 1:
            break
        kept.append(ch)
        used += w
    return "".join(kept) + "…"


def _char_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _width(text: str) -> int:
    return sum(_char_width(ch) for ch in text)


def _pad(text: str, width: int, *, right: bool) -> str:
    gap = " " * (width - _width(text))
    return gap + text if right else text + gap
