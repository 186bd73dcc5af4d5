"""`eventsched ui`: the read-only web page over the event log (eventsched.ui)."""

from __future__ import annotations

import argparse
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.exc import DBAPIError

from eventsched.cli import uiserving
from eventsched.cli.commands import summary
from eventsched.cli.database import resolve_url
from eventsched.events import display_url

if TYPE_CHECKING:
    import uvicorn
    from sqlalchemy.engine import Engine

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
    uiserving.add_arguments(p)
    p.add_argument(
        "--configs",
        metavar="DIR",
        type=Path,
        help="directory of KubeSchedulerConfiguration files the what-if page offers",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from eventsched.audit.query import QueryError
    from eventsched.audit.readonly import read_only_engine, writer_privileges

    url = resolve_url(args.db)
    listener = uiserving.check(args)  # refused (one line, exit 2) before anything starts
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
    served = _served(listener, url, args.configs)
    print(f"eventsched ui: serving {served.shown} (read-only{served.note})", flush=True)
    uvicorn.Server(served.config).run(sockets=[served.sock])
    return 0


@dataclass(frozen=True, slots=True)
class _Served:
    config: uvicorn.Config
    sock: socket.socket
    shown: str
    note: str


def _served(
    listener: uiserving.Plain | uiserving.Secure, url: str, configs: Path | None
) -> _Served:
    """The app, its socket bound and its uvicorn configuration, as `listener` asks."""
    import uvicorn

    from eventsched.ui.app import INSECURE_LOCAL, Access, Settings, create_app

    if isinstance(listener, uiserving.Plain):
        sock = uiserving.bind(listener.host, listener.port, listener.flag)
        app = create_app(Settings(url, configs, access=INSECURE_LOCAL))
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
        shown = _url("http", listener.host, sock.getsockname()[1])
        return _Served(config, sock, shown, "; anyone on this machine, every namespace")
    from eventsched._httpguard import Guard
    from eventsched.cluster.kube.connection import ClientConnection, api_client
    from eventsched.cluster.kube.reviews import Reviews
    from eventsched.ui.peercert import PeerCertificateProtocol

    secure = listener.serving
    reviews = Reviews(api_client(ClientConnection(kubeconfig=listener.kubeconfig)))
    access = Access(Guard(reviews, secure.always_allow_paths), reviews)
    sock = uiserving.bind(
        secure.bind_address,
        secure.port,
        f"--secure-port {secure.port} (--bind-address {secure.bind_address})",
    )
    app = create_app(Settings(url, configs, access=access))
    context = secure.context
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="on",
        http=PeerCertificateProtocol,
        ssl_context_factory=lambda _config, _default: context,
    )
    return _Served(config, sock, _url("https", secure.bind_address, sock.getsockname()[1]), "")


def _url(scheme: str, host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}/"


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
