"""`eventsched ui` over real HTTP: a log made by `eventsched simulate examples/cluster`,
served by uvicorn on a free loopback port in a thread, on SQLite and on PostgreSQL.

On PostgreSQL the page is served as a throwaway copy of the documented read-only
role (deploy/base/readonly-role.sql under another name, in a private schema),
as it must be: `eventsched ui` refuses a role that could write the log.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import secrets
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa
import uvicorn
from sqlalchemy.engine import make_url

from eventsched.audit.readonly import read_only_engine
from eventsched.cli.main import main
from eventsched.events import EventStore, upgrade
from eventsched.ui.app import INSECURE_LOCAL, Settings, create_app
from tests.conftest import BACKENDS
from tests.ui.browser import chromium

ROOT = Path(__file__).resolve().parents[2]
READER_SQL = ROOT / "deploy" / "base" / "readonly-role.sql"
PROFILES = ROOT / "examples" / "profiles"


@dataclass(frozen=True)
class Log:
    """A simulated log: the URL the page reads it by, and the owner's URL (for counting)."""

    backend: str
    reader_url: str
    owner_url: str


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: str


class Served:
    """A uvicorn server of `create_app` on a free port, in a thread; `request` over HTTP."""

    def __init__(self, settings: Settings) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.app = create_app(settings, start_chain_check=True)
        config = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def __enter__(self) -> Served:
        self.thread.start()
        started = threading.Event()
        # Positive signal: uvicorn's `started` flag, polled with a bounded wait.
        for _ in range(500):
            if self.server.started:
                started.set()
                break
            if not self.thread.is_alive():
                break
            started.wait(0.01)
        assert started.is_set(), "uvicorn did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(
        self,
        path: str,
        method: str = "GET",
        body: str | None = None,
        ctype: str = "",
        token: str = "",
    ) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            headers = {"Content-Type": ctype} if ctype else {}
            if token:
                headers["Authorization"] = f"Bearer {token}"
            conn.request(
                method, path, body=body.encode() if body is not None else None, headers=headers
            )
            response = conn.getresponse()
            return Reply(
                response.status,
                {k.lower(): v for k, v in response.getheaders()},
                response.read().decode("utf-8", "replace"),
            )
        finally:
            conn.close()


def simulate(url: str, manifests: Path = ROOT / "examples" / "cluster") -> None:
    upgrade(url)
    # v1.28's decisions, which the pages' tests name (simulate defaults to the newest version).
    assert main(["simulate", str(manifests), "--db", url, "--kubernetes-version", "1.28"]) == 0


def _reader_role(owner_url: str, schema: str) -> tuple[str, str]:
    """(role, URL): readonly-role.sql applied under a throwaway role name."""
    role = f"eventsched_reader_ui_{secrets.token_hex(4)}"
    script = READER_SQL.read_text().replace("eventsched_reader", role)
    owner = sa.create_engine(owner_url, isolation_level="AUTOCOMMIT")
    try:
        with owner.connect() as conn:
            driver = conn.connection.driver_connection
            assert driver is not None
            driver.execute(script)
    finally:
        owner.dispose()
    reader = make_url(owner_url).set(username=role, password=None)
    return role, reader.render_as_string(hide_password=False)


@contextlib.contextmanager
def filled_log(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    fill: Callable[[str], None],
) -> Iterator[Log]:
    """A log filled by `fill(owner URL)` on the fixture's backend (`request.param`)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('ui') / 'events.db'}"
        fill(url)
        yield Log("sqlite", url, url)
        return
    with postgres_log(request.getfixturevalue("postgres_server"), fill) as log:
        yield log


@pytest.fixture(scope="module", params=BACKENDS)
def ui_log(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Log]:
    with filled_log(request, tmp_path_factory, simulate) as log:
        yield log


@contextlib.contextmanager
def postgres_log(server: str, fill: Callable[[str], None]) -> Iterator[Log]:
    """A log in a private schema of `server`, filled by `fill(owner URL)`, read through a
    throwaway copy of the read-only role; the schema and the role dropped afterwards."""
    schema = f"eventsched_ui_{os.getpid()}_{secrets.token_hex(3)}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    owner = (
        make_url(server)
        .update_query_dict({"options": f"-csearch_path={schema}"})
        .render_as_string(hide_password=False)
    )
    role = ""
    try:
        fill(owner)
        role, reader = _reader_role(owner, schema)
        yield Log("postgresql", reader, owner)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
            if role:
                conn.execute(sa.text(f'DROP OWNED BY "{role}"'))
                conn.execute(sa.text(f'DROP ROLE "{role}"'))
        admin.dispose()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless chromium (tests/ui/browser.py), one per module."""
    with chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def served(ui_log: Log) -> Iterator[Served]:
    with Served(
        Settings(ui_log.reader_url, PROFILES, chain_interval=0.5, access=INSECURE_LOCAL)
    ) as running:
        yield running


def count_events(owner_url: str) -> tuple[int, int]:
    """(events, batches) in the log, read as its owner."""
    engine = sa.create_engine(owner_url)
    try:
        with engine.connect() as conn:
            events = conn.exec_driver_sql("SELECT COUNT(*) FROM events").scalar()
            batches = conn.exec_driver_sql("SELECT COUNT(*) FROM event_batches").scalar()
        return int(events or 0), int(batches or 0)
    finally:
        engine.dispose()


def open_read_only(url: str) -> EventStore:
    """A store over the page's read-only engine, to show its appends are refused too (the
    page itself reads through a LogReader, which has no way to append)."""
    return EventStore(read_only_engine(url))
