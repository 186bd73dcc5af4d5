"""The differential suite's agreement table: written under the session's tmp dir, and
printed at the end of the session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.differential import report

_WRITTEN: list[Path] = []


@pytest.fixture(scope="session", autouse=True)
def agreement_table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    if report.RESULTS.status:
        path = tmp_path_factory.getbasetemp() / "differential-agreement.txt"
        path.write_text(report.table() + "\n")
        _WRITTEN.append(path)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not report.RESULTS.status:
        return
    terminalreporter.section("differential: eventsched vs kube-scheduler, per version")
    terminalreporter.write_line(report.table())
    for path in _WRITTEN:
        terminalreporter.write_line(f"(written to {path})")
