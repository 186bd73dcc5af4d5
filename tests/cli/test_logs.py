"""Logging follows sys.stderr as it is when a line is written, not when it was configured."""

from __future__ import annotations

import io
import sys

import pytest
import structlog

from eventsched.cli.logs import configure_logging


def test_a_swapped_and_closed_stderr_does_not_break_later_logging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    configure_logging("json", "info")
    first.close()  # what pytest does to a test's captured stream
    second = io.StringIO()
    monkeypatch.setattr(sys, "stderr", second)
    structlog.get_logger("t").warning("still here", n=1)
    assert '"event": "still here"' in second.getvalue()
