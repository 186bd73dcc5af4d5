"""`eventsched query --list-views`, and a query naming a table or view the log has not,
on SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from eventsched.audit.views import EVENTS, VIEWS
from eventsched.cli.main import main
from tests.cli.test_query import eventsched


def test_list_views_names_each_view_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    # No database is needed: the views are the documented ones.
    assert main(["query", "--list-views"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["view", "one", "row", "per"]
    listed = [line.split()[0] for line in lines[2:-1]]
    assert listed == [v.name for v in VIEWS] + ["events"]
    assert "…" not in out  # every description fits the default width
    assert lines[-1] == f"({len(VIEWS) + 1} rows)"


def test_list_views_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "--list-views", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0] == {"view": "decisions", "one row per": VIEWS[0].row}
    assert rows[-1]["view"] == EVENTS.name


def test_list_views_takes_no_sql(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["query", "--list-views", "SELECT 1"])
    assert exited.value.code == 2
    assert "--list-views takes no SQL" in capsys.readouterr().err


def test_no_sql_and_no_list_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["query"])
    assert exited.value.code == 2
    assert "--list-views" in capsys.readouterr().err


def _views_in(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        return set(sa.inspect(engine).get_view_names())
    finally:
        engine.dispose()


def test_the_listed_views_are_the_logs_views(db_url: str) -> None:
    """The list is the schema's: no view missing from it, none listed that is not there."""
    assert _views_in(db_url) == {v.name for v in VIEWS}


def test_an_unknown_view_is_one_line_naming_the_views(db_url: str, backend: str) -> None:
    done = eventsched("query", "SELECT * FROM decision", db=db_url)
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("eventsched: error: query failed on ")
    assert ("no such table: decision" if backend == "sqlite" else '"decision" does not exist') in (
        line
    )
    names = ", ".join(v.name for v in VIEWS)
    assert line.endswith(
        f"; the views are {names} and the table events "
        "(eventsched query --list-views says what each holds)"
    )
    assert "Traceback" not in done.stderr


def test_a_log_without_a_schema_is_told_to_upgrade(empty_db_url: str, backend: str) -> None:
    """No views to list there: the hint is `db upgrade`, as before."""
    if backend == "sqlite":
        sa.create_engine(empty_db_url).connect().close()  # the file exists, empty
    done = eventsched("query", "SELECT * FROM decisions", db=empty_db_url)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert "has no eventsched schema: run `eventsched db upgrade" in line
    assert "the views are" not in line
