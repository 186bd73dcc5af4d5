"""structlog set-up: readable on a terminal, JSON lines in the cluster (or when asked).

Outside the layers (as `_lazy` is), so that every entry point can set it up: the
`eventsched` command and a benchmark run on its own (`python -m eventsched.benchmarks.failover`).
"""

from __future__ import annotations

import logging
import sys
from typing import Literal

import structlog

LogFormat = Literal["auto", "console", "json"]


class _StderrLogger:
    """structlog's PrintLogger, but on `sys.stderr` as it is when a line is written.

    PrintLoggerFactory(file=sys.stderr) keeps the stream of the moment it was
    configured; when the CLI runs in-process (tests, an embedding program)
    that stream may be swapped and closed later, and every log call after
    that would raise instead of logging.
    """

    def msg(self, message: str) -> None:
        # One write per line: print() writes the message and the newline separately, and
        # lines from two threads then interleave ('{...}{...}' and an empty line).
        stream = sys.stderr
        stream.write(message + "\n")
        stream.flush()

    log = debug = info = warn = warning = error = critical = exception = fatal = msg


def _stderr_logger(*args: object) -> _StderrLogger:
    return _StderrLogger()


def configure_logging(fmt: LogFormat = "auto", level: str = "info") -> None:
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"--log-level: unknown level {level!r} (use debug, info, warning, error)")
    if fmt == "auto":
        fmt = "console" if sys.stderr.isatty() else "json"
    renderer: structlog.types.Processor = (
        structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
        if fmt == "console"
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info if fmt == "json" else structlog.dev.set_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )
    # Libraries that use the standard logging module (alembic, sqlalchemy, urllib3's
    # "Retrying ...") stay quiet below warning and go through the same structured lines.
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _ToStructlog)]:
        root.removeHandler(handler)
    root.addHandler(_ToStructlog())
    root.setLevel(max(numeric, logging.WARNING))
    # Python's warnings (a library's DeprecationWarning, urllib3's) as structured lines
    # too, through the `py.warnings` logger, never as raw text between JSON records.
    # Hooked anew at each call: whoever swapped `warnings.showwarning` since (a test
    # runner) would otherwise keep it.
    logging.captureWarnings(False)
    logging.captureWarnings(True)


class _ToStructlog(logging.Handler):
    """A standard-library log record as a structlog line, with the library's logger name."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a library's bad format string must not break logging
            message = str(record.msg)
        structlog.get_logger().log(record.levelno, message, logger=record.name)
