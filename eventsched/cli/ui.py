"""`eventsched ui`: the read-only web page over the event log (eventsched.ui)."""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.exc import DBAPIError

from eventsched.cli.commands import summary
from eventsched.cli.database import resolve_url
from eventsched.cli.serve import AddressError
from eventsched.events import display_url

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

#: Where the page listens unless told otherwise: this machine only.
DEFAULT_LISTEN = "127.0.0.1:8090"
#: The role deploy/base/readonly-role.sql creates (docs/querying.md).
READER_ROLE = "eventsched_reader"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ui",
        help=summary("ui"),
        description="Serve a read-only web page over the event log: pending pods, recent "
        "decisions, each pod's attempts and why-not, nodes, search, and what-if replays. "
        "It reads as `eventsched query` does (read-only transactions; SQLite opened "
        f"read-only); on PostgreSQL it refuses a role that could write the log: use "
        f"{READER_ROLE} (deploy/base/readonly-role.sql).",
    )
    p.add_argument(
        "--listen",
        metavar="HOST:PORT",
        default=DEFAULT_LISTEN,
        help=f"address to serve on (default {DEFAULT_LISTEN}; port 0 picks a free one)",
    )
    p.add_argument(
        "--configs",
        metavar="DIR",
        type=Path,
        help="directory of KubeSchedulerConfiguration files the what-if page offers",
    )
    p.set_defaults(func=run)


def parse_listen(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise AddressError(
            f"--listen {address!r}: expected HOST:PORT, e.g. 127.0.0.1:8090 or 0.0.0.0:8090"
        )
    return host.strip("[]") or "0.0.0.0", int(port)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from eventsched.audit.query import QueryError
    from eventsched.audit.readonly import read_only_engine, writer_privileges
    from eventsched.ui.app import Settings, create_app

    url = resolve_url(args.db)
    host, port = parse_listen(args.listen)
    if args.configs is not None and not args.configs.is_dir():
        print(f"eventsched: error: --configs {args.configs}: not a directory", file=sys.stderr)
        return 2
    try:
        engine = read_only_engine(url)
    except QueryError as exc:
        print(f"eventsched: error: {exc}", file=sys.stderr)
        return 2
    try:
        user, privileges = writer_privileges(engine)
        if privileges:
            print(
                f"eventsched: error: the web page only reads, but role {user} may write the "
                f"event log ({', '.join(privileges)}): connect as the read-only role "
                f"{READER_ROLE} (deploy/base/readonly-role.sql, see docs/querying.md)",
                file=sys.stderr,
            )
            return 2
        problem = _unreadable(engine)
    finally:
        engine.dispose()
    if problem:
        print(f"eventsched: error: {problem}", file=sys.stderr)
        return 2
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        print(f"eventsched: error: --listen {args.listen}: {exc.strerror}", file=sys.stderr)
        return 2
    sock.listen(2048)  # connections wait in the backlog until uvicorn accepts them
    bound_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    app = create_app(Settings(url, args.configs))
    print(f"eventsched ui: serving http://{shown}:{bound_port}/ (read-only)", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
    return 0


def _unreadable(engine: Engine) -> str:
    """Why the log cannot be read through `engine` ('' when it can)."""
    shown = display_url(engine)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1 FROM events WHERE 1 = 0").all()
    except DBAPIError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        if "no such table" in reason or "does not exist" in reason:
            return (
                f"{shown} has no event log: run `eventsched db upgrade --db {shown}` as its owner"
            )
        return f"cannot read the event log at {shown}: {reason}"
    return ""
