"""Database fixtures: tests that take `db_url` or `store` run on SQLite and on PostgreSQL.

PostgreSQL comes from, in order: `EVENTSCHED_TEST_DATABASE_URL`; a
throwaway testcontainers server when a Docker engine answers; the local
server at 127.0.0.1:5432 (database `test`, trust auth). The session works in
a private schema it creates there (`eventsched_test_<pid>_<random>`, found
through `search_path`), emptied before every test and dropped at the end,
so nothing it did not create is touched. If PostgreSQL cannot be reached,
the PostgreSQL half of the suite fails, loudly: a silently skipped backend
is an untested backend.
"""

from __future__ import annotations

import os
import secrets
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.kubebinaries import reference_binaries
from eventsched.cli.main import main
from eventsched.events import EventStore, upgrade
from tests.kube.realserver import (
    KUBE_SERVERS,
    EmulatedApiServer,
    KubeServer,
    RealApiServer,
    real_binaries,
)

#: tmp_path in memory (tests/memorytemp.py); the longest files first (tests/ordering.py).
pytest_plugins = ["tests.memorytemp", "tests.ordering"]

LOCAL_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
BACKENDS = ("sqlite", "postgresql")


def _docker_answers() -> bool:
    try:
        import docker

        client = docker.from_env(timeout=2)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


def _with_driver(url: str) -> str:
    parsed = make_url(url)
    if parsed.drivername in ("postgres", "postgresql"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """URL of a PostgreSQL database in which this session may create a schema."""
    with ExitStack() as stack:
        url = os.environ.get("EVENTSCHED_TEST_DATABASE_URL")
        source = "EVENTSCHED_TEST_DATABASE_URL"
        if not url and _docker_answers():
            try:
                from testcontainers.community.postgres import PostgresContainer

                container = PostgresContainer("postgres:16-alpine", driver="psycopg")
                container.start()
                stack.callback(container.stop)
                url, source = container.get_connection_url(), "testcontainers"
            except Exception as exc:  # no image, no network: use the local server
                warnings.warn(f"testcontainers PostgreSQL did not start: {exc}", stacklevel=1)
        if not url:
            url, source = LOCAL_POSTGRES, "the local server"
        url = _with_driver(url)
        problem = _unreachable(url)
        if problem:
            pytest.fail(
                f"PostgreSQL ({source}: {make_url(url).render_as_string(hide_password=True)}) "
                f"is unreachable, so the PostgreSQL half of the tests cannot run: {problem}. "
                "Start PostgreSQL, or set EVENTSCHED_TEST_DATABASE_URL to a database this "
                "user may create schemas in.",
                pytrace=False,
            )
        yield url


def _unreachable(url: str) -> str | None:
    engine = sa.create_engine(url, connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except Exception as exc:
        return str(getattr(exc, "orig", None) or exc).splitlines()[0]
    finally:
        engine.dispose()
    return None


@pytest.fixture(scope="session")
def postgres_schema(postgres_server: str) -> Iterator[tuple[str, str]]:
    """(URL, schema): a schema private to this session, which the URL's search_path selects."""
    schema = f"eventsched_test_{os.getpid()}_{secrets.token_hex(3)}"
    admin = sa.create_engine(postgres_server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(postgres_server).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False), schema
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def _reset_postgres_schema(server: str, schema: str) -> None:
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    finally:
        admin.dispose()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def empty_db_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A database with nothing in it, on `backend`."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'events.db'}"
    server = request.getfixturevalue("postgres_server")
    url, schema = request.getfixturevalue("postgres_schema")
    _reset_postgres_schema(server, schema)
    return str(url)


@pytest.fixture
def db_url(empty_db_url: str) -> str:
    """A fresh database with the event log schema at head."""
    upgrade(empty_db_url)
    return empty_db_url


@pytest.fixture
def store(db_url: str) -> Iterator[EventStore]:
    with EventStore.connect(db_url) as opened:
        yield opened


@pytest.fixture
def apiserver() -> Iterator[EmulatedApiServer]:
    """A started emulator, stopped at teardown: for tests of what only the emulator can do
    (`fail_next`, `hold_next`, `expire_watches`, `requests`, `access_used`).

    Teardown also fails the test if the emulator itself raised: a bug in the
    emulator answers 500, which a test of retry logic could otherwise take for
    an injected failure and pass.
    """
    yield from _emulator()


def _emulator() -> Iterator[EmulatedApiServer]:
    server = EmulatedApiServer().start()
    try:
        yield server
    finally:
        server.stop()
    assert not server.internal_errors, "the emulator raised:\n" + "\n".join(server.internal_errors)


@pytest.fixture(scope="session")
def real_apiserver() -> Iterator[RealApiServer]:
    """One real control plane (etcd + kube-apiserver, TLS, tokens, RBAC) for the whole session.

    Only set up by `kube_server`'s "real" parameter and tests/kube/test_rbac_real.py, which
    exist only when the binaries were found, so a machine without them never gets here.
    """
    binaries = real_binaries()
    assert binaries is not None, "no kube-apiserver/etcd: the real server is not a parameter"
    with ControlPlane(binaries) as control_plane:
        yield RealApiServer(control_plane)


#: The Kubernetes versions with a reference build (tests/reference): v1.28 from
#: $EVENTSCHED_KUBE_BIN, the others built by tests/reference/build.sh.
REFERENCE_VERSIONS = ("1.28", "1.34", "1.37")


@pytest.fixture(scope="session")
def reference_planes() -> Iterator[Callable[[str], RealApiServer]]:
    """A real control plane of each Kubernetes version a test asks for, started on first
    use and kept for the session; the test skips, saying why, where that version is not
    built."""
    planes: dict[str, RealApiServer] = {}
    with ExitStack() as stack:

        def plane(minor: str) -> RealApiServer:
            if minor not in planes:
                binaries = reference_binaries(minor)
                if binaries is None:
                    how = (
                        "set EVENTSCHED_KUBE_BIN"
                        if minor == "1.28"
                        else f"run tests/reference/build.sh {minor}"
                    )
                    pytest.skip(f"no Kubernetes {minor} binaries here ({how})")
                control_plane = stack.enter_context(ControlPlane(binaries))
                planes[minor] = RealApiServer(control_plane)
            return planes[minor]

        yield plane


@pytest.fixture(params=REFERENCE_VERSIONS)
def versioned_server(
    request: pytest.FixtureRequest, reference_planes: Callable[[str], RealApiServer]
) -> RealApiServer:
    """A real API server of each reference version in turn (skipped where not built),
    emptied (`reset()`) before the test."""
    server = reference_planes(str(request.param))
    server.reset()
    return server


@pytest.fixture(params=KUBE_SERVERS)
def kube_server(request: pytest.FixtureRequest) -> Iterator[KubeServer]:
    """An API server for tests that hold on either: the emulator, and a real kube-apiserver
    when its binaries are present (EVENTSCHED_KUBE_BIN). Both have the emulator's
    create/get/list/update/patch/delete/wait_for/url and bind/kubeconfig/client/reset;
    `flavor` tells them apart. The real one is shared by the session and emptied
    (`reset()`) before each test.
    """
    if request.param == "real":
        server: RealApiServer = request.getfixturevalue("real_apiserver")
        server.reset()
        yield server
    else:
        yield from _emulator()


@dataclass
class Done:
    """What one `eventsched` command line gave: exit code, stdout, stderr."""

    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], db_url: str) -> Callable[..., Done]:
    """Run `eventsched ARGS --db <the test's database>` in-process."""

    def run(*args: str) -> Done:
        capsys.readouterr()  # drop what fixtures printed before
        code = main([*args, "--db", db_url])
        out = capsys.readouterr()
        return Done(code, out.out, out.err)

    return run
