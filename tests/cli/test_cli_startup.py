"""`eventsched` imports only what the command being run needs.

Every command module brings in SQLAlchemy, the Kubernetes client or numpy;
importing all of them made `eventsched --help` take 2.5 s and added about a
second of CPU to every `eventsched run`.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from eventsched.cli.commands import COMMANDS
from eventsched.cli.main import _command_in, build_parser

HEAVY = ("sqlalchemy", "kubernetes", "numpy", "alembic")
#: What the other commands use and `run` never does: the official Kubernetes client (only
#: a kubeconfig the plain reader cannot read loads it), the web page's server and templates,
#: NetworkTraffic's Prometheus client, the migrations, the progress bar, explain and replay.
NOT_RUN = (
    "kubernetes",
    "starlette",
    "uvicorn",
    "jinja2",
    "prometheus_api_client",
    "alembic",
    "tqdm",
    "eventsched.audit",
    "eventsched.ui",
)
#: The modules `eventsched run` imports before its scheduler runs (cli/run.py's `_run`).
RUN_WIRING = (
    "eventsched.cli.run",
    "eventsched.cli.listeners",
    "eventsched.cli.database",
    "eventsched.cli.runner",
    "eventsched.config.file",
    "eventsched.plugins",
)


def imported_after(*argv: str) -> set[str]:
    """The modules a fresh interpreter holds after `eventsched ARGV` (which exits)."""
    code = (
        "import sys\n"
        "from eventsched.cli.main import main\n"
        "try:\n"
        f"    main({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split("\n")[-2].split())


def test_help_lists_every_command_without_importing_any() -> None:
    modules = imported_after("--help")
    assert not {m for m in modules if m.split(".")[0] in HEAVY}
    assert "structlog" not in modules  # logging is set up after the parse
    assert "eventsched._dataclasscache" not in modules  # installed for a command only
    assert not {m for m in modules if m.startswith("eventsched.cli.") and m.endswith("run")}


def test_a_command_imports_its_own_module_and_no_other_command() -> None:
    modules = imported_after("--db", "sqlite:///x.db", "config", "--help")
    assert "eventsched.cli.configcheck" in modules
    assert "eventsched._dataclasscache" in modules  # installed before the command's module
    others = {f"eventsched.cli.{c.module}" for c in COMMANDS.values()} - {
        "eventsched.cli.configcheck"
    }
    assert not others & modules


def test_run_imports_none_of_what_only_other_commands_use() -> None:
    code = (
        "import sys\n"
        "import eventsched.cli.main\n"
        + "".join(f"import {module}\n" for module in RUN_WIRING)
        + "eventsched.plugins.full_registry()\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(done.stdout.split())
    assert set(RUN_WIRING) <= modules
    assert not {m for m in modules for top in NOT_RUN if m == top or m.startswith(f"{top}.")}


def test_leader_election_on_run_s_path_imports_no_kubernetes_module(tmp_path: Path) -> None:
    """The elector `Runner._lead` makes, run until its first request to the Lease was
    answered (here: refused, nothing listens), on a plain kubeconfig."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: k, cluster: {{server: 'https://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )
    code = (
        "import sys, threading\n"
        "import eventsched.cli.main\n"
        + "".join(f"import {module}\n" for module in RUN_WIRING)
        + "from eventsched.cluster.kube.connection import ClientConnection, api_client\n"
        "from eventsched.cluster.kube.election import LeaseSettings, lease_elector\n"
        f"api = api_client(ClientConnection(kubeconfig={str(kubeconfig)!r}))\n"
        "asked = threading.Event()\n"
        "elector = lease_elector(api.configuration, LeaseSettings(), 'me', "
        "observer=lambda *_: asked.set())\n"
        "elector.start()\n"
        "assert asked.wait(30)\n"
        "elector.release()\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(done.stdout.split("\n")[-2].split())
    assert {"eventsched.cluster.kube.election", "eventsched.cluster.kube.leaselock"} <= modules
    assert not {m for m in modules if m == "kubernetes" or m.startswith("kubernetes.")}


@pytest.mark.parametrize("command", ["db", "query"])
def test_a_command_reading_part_of_the_log_imports_neither_explain_nor_replay(
    command: str,
) -> None:
    modules = imported_after(command, "--help")
    assert f"eventsched.cli.{command}" in modules
    leaked = {"eventsched.audit.explain", "eventsched.audit.replay", "eventsched.cli.replay"}
    assert not leaked & modules
    assert "tqdm" not in modules  # imported when a bar is drawn


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["run", "--kubeconfig", "k"], "run"),
        (["--db", "sqlite:///run.db", "explain", "default/p"], "explain"),
        (["--db=sqlite:///x.db", "--log-level", "info", "bench"], "bench"),
        (["--log-format", "json", "db", "upgrade"], "db"),
        (["--log-l", "info", "--debug", "sticky", "list"], "sticky"),
        (["--help"], None),
        (["nonsense"], None),
    ],
)
def test_the_command_is_found_past_global_options_and_their_values(
    argv: list[str], command: str | None
) -> None:
    assert _command_in(argv) == command


def test_the_full_parser_still_has_every_command() -> None:
    parser = build_parser()
    for name in COMMANDS:
        assert parser.parse_args([name, *_minimal(name)]).command == name


def _minimal(name: str) -> list[str]:
    return {
        "explain": ["default/p"],
        "query": ["SELECT 1"],
        "config": ["check", "f.yaml"],
        "db": ["upgrade"],
        "sticky": ["list"],
        "export": ["--out", "slice.db"],
    }.get(name, [])


def _blas_threads(env: dict[str, str]) -> tuple[str, int]:
    """OPENBLAS_NUM_THREADS and the process's threads once the command line and numpy are
    imported (numpy's OpenBLAS starts its threads at import)."""
    code = (
        "import os\n"
        "import eventsched.cli.main, numpy\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    value, threads = done.stdout.split()
    return value, int(threads)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc")
def test_numpy_starts_no_openblas_threads_unless_the_user_asks_for_them() -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    assert _blas_threads(env) == ("1", 1)  # the main thread only: nothing spins at start
    # The user's setting is kept and honoured (OpenBLAS uses at most one thread a core).
    assert _blas_threads({**env, "OPENBLAS_NUM_THREADS": "2"}) == ("2", min(2, os.cpu_count() or 1))
