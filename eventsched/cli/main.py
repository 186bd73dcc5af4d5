"""The `eventsched` command."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import structlog

from eventsched import __version__
from eventsched.cli import bench, configcheck, db, explain, query, replay, run, simulate, sticky
from eventsched.cli.errors import friendly_error
from eventsched.cli.logs import configure_logging


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="eventsched",
        description="A Kubernetes scheduler that logs every decision, so it can explain itself.",
    )
    parser.add_argument("--version", action="version", version=f"eventsched {__version__}")
    parser.add_argument(
        "--db",
        metavar="URL",
        help="event log database (default: $EVENTSCHED_DATABASE_URL, else sqlite:///eventsched.db)",
    )
    parser.add_argument(
        "--log-format",
        choices=["auto", "console", "json"],
        default="auto",
        help="console on a terminal, JSON otherwise (default auto)",
    )
    parser.add_argument(
        "--log-level", default="warning", help="debug, info, warning (default), error"
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (run, simulate, explain, replay, query, configcheck, db, bench, sticky):
        module.add_parser(sub)
    for command in sub.choices.values():
        _accept_db_after_command(command)
    return parser


def _accept_db_after_command(command: argparse.ArgumentParser) -> None:
    """`eventsched bench --db URL` works as well as `eventsched --db URL bench`."""
    nested = [a for a in command._actions if isinstance(a, argparse._SubParsersAction)]
    for action in nested:
        for child in action.choices.values():
            _accept_db_after_command(child)
    if not nested:
        command.add_argument(
            "--db", metavar="URL", default=argparse.SUPPRESS, help="event log database"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        configure_logging(args.log_format, "debug" if args.debug else args.log_level)
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("eventsched: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `eventsched ... | head`: the reader left; stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as exc:
        message = friendly_error(exc)
        if message is None or args.debug:
            if message is None:
                structlog.get_logger("eventsched").exception("unexpected error")
                return 1
            raise
        print(f"eventsched: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
