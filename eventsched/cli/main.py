"""The `eventsched` command."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from eventsched import __version__
from eventsched.cli.arguments import Parser, count
from eventsched.cli.commands import COMMANDS
from eventsched.cli.gctuning import (
    DEFAULT_THRESHOLD,
    collection_paused,
    collector_threshold,
    resume_collection,
    set_collector_threshold,
)

#: Options before the command that take a value (`--db URL`, not `--db=URL`).
_VALUED = {"--db", "--log-format", "--log-level", "--gc-threshold"}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser, with `command`'s own arguments: every command's when None, none when ""."""
    parser = Parser(
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
    parser.add_argument(
        "--gc-threshold",
        metavar="N",
        type=count(0),
        help="allocations between Python's garbage collections (default: "
        f"$EVENTSCHED_GC_THRESHOLD, else {DEFAULT_THRESHOLD}; CPython's own is 700, 0 turns "
        "automatic collection off)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if command != "":
        # Before a command's module is imported: the methods its dataclasses generate are
        # compiled once and kept (eventsched/_dataclasscache.py). `--help` imports none.
        from eventsched._dataclasscache import install

        install()
    for name, (module, summary) in COMMANDS.items():
        if command is None or name == command:
            importlib.import_module(f"eventsched.cli.{module}").add_parser(sub)
        else:
            sub.add_parser(name, help=summary)  # a name in the list; its module is not loaded
    for command_parser in sub.choices.values():
        _accept_db_after_command(command_parser)
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    """The command named on the line, found without parsing it (the parser depends on it)."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif "=" not in arg and any(v.startswith(arg) for v in _VALUED if arg.startswith("--")):
            skip = True  # `--db URL`, or an abbreviation argparse accepts (`--log-l info`)
        elif not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


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
    # No collection while the command's modules load (about a thousand for `run`): they
    # allocate much and free little, so collections then find nothing (about 0.2 s of a
    # start here). On again before the command runs; `run` turns it on itself, once the
    # scheduler has started (that builds every listed pod, which survives too).
    with collection_paused():
        return _main(list(sys.argv[1:] if argv is None else argv))


def _main(argv: list[str]) -> int:
    parser = build_parser(_command_in(argv) or "")
    args = parser.parse_args(argv)  # `--help`, `--version` and usage errors exit here
    from eventsched.logs import configure_logging  # structlog: not for help or usage errors

    try:
        configure_logging(args.log_format, "debug" if args.debug else args.log_level)
        set_collector_threshold(collector_threshold(args.gc_threshold))
        if not getattr(args, "collect_after_start", False):
            # What the paused load left (the modules, the parser) lives as long as the
            # process: frozen out of the collector's walks, and the allocations counted
            # while paused (70,000 for `config check`, over the threshold) do not set off
            # a young collection over all of it at the command's first allocation.
            resume_collection(freeze=True)
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
        import structlog

        from eventsched.cli.errors import friendly_error  # what it knows imports the world

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
