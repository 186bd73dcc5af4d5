"""`eventsched replay --since/--until`: a window of log positions or of time, on real simulated runs.

The window narrows which attempts are checked, never what is folded: every
checked attempt must still reproduce, which it only does on a complete view.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from eventsched.audit import Selection
from eventsched.cli.main import main
from eventsched.events import EventStore, StoredEvent
from tests.conftest import Done

ROOT = Path(__file__).resolve().parents[2]


def checked(cli: Callable[..., Done], *window: str) -> dict:
    """The JSON report of `replay` over `window`; every attempt it checks must reproduce."""
    done = cli("replay", "--json", *window)
    data = json.loads(done.out)
    assert done.code == 0, (data["mismatches"][:3], data["skipped"][:3])
    assert data["reproduced"] == data["attempts"] and data["skipped"] == []
    return data


def started(store: EventStore) -> list[StoredEvent]:
    return list(store.read(kinds=["attempt_started"]))


def test_a_time_between_two_runs_splits_them_as_their_positions_do(
    cli: Callable[..., Done], store: EventStore
) -> None:
    assert cli("simulate", "--nodes", "20", "--pods", "40", "--seed", "1").code == 0
    end_of_first = store.last_position()
    between = datetime.now(UTC)
    assert cli("simulate", "--nodes", "20", "--pods", "40", "--seed", "2").code == 0
    attempts = started(store)
    first = [e for e in attempts if e.position <= end_of_first]
    second = [e for e in attempts if e.position > end_of_first]
    assert len(first) >= 40 and len(second) >= 40

    since = checked(cli, "--since", between.isoformat())
    assert since["attempts"] == len(second)
    # RFC 3339 with Z, and the same instant in another zone.
    until = checked(cli, "--until", between.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
    assert until["attempts"] == len(first)
    elsewhere = between.astimezone(timezone(timedelta(hours=-5))).isoformat()
    assert checked(cli, "--until", elsewhere)["attempts"] == len(first)
    # The position of the same boundary checks the same attempts.
    assert checked(cli, "--since", str(end_of_first))["attempts"] == len(second)
    assert checked(cli, "--until", str(end_of_first))["attempts"] == len(first)
    # Whatever the window, the whole log was folded.
    last = store.last_position()
    for data in (since, until):
        assert data["events"] == data["lastPosition"] == last
    assert since["selection"] == {"since": between.isoformat(), "until": None, "pod": None}


def test_a_time_bound_is_inclusive_and_mixes_with_a_position(
    cli: Callable[..., Done], store: EventStore
) -> None:
    assert cli("simulate", "--nodes", "20", "--pods", "60", "--seed", "5").code == 0
    attempts = started(store)
    middle = attempts[len(attempts) // 2]
    at = middle.recorded_at
    # A group commit gives several attempts one recorded_at: all of them are at T.
    at_or_after = [e for e in attempts if e.recorded_at >= at]
    at_or_before = [e for e in attempts if e.recorded_at <= at]
    assert middle in at_or_after and middle in at_or_before
    assert checked(cli, "--since", at.isoformat())["attempts"] == len(at_or_after)
    assert checked(cli, "--until", at.isoformat())["attempts"] == len(at_or_before)
    # Since a time, up to a position: the attempts recorded at T up to the middle one.
    both = checked(cli, "--since", at.isoformat(), "--until", str(middle.position))
    assert both["attempts"] == sum(
        1 for e in attempts if e.recorded_at >= at and e.position <= middle.position
    )
    assert both["attempts"] >= 1


def test_durations_back_from_now_and_dates(cli: Callable[..., Done], store: EventStore) -> None:
    assert cli("simulate", str(ROOT / "examples" / "cluster")).code == 0
    total = len(started(store))
    assert total > 0
    # The run was moments ago: inside the last hour, the last 7 days, since 2000.
    for since in ("1h", "30m", "7d", "1h30m", "2000-01-01"):
        assert checked(cli, "--since", since)["attempts"] == total, since
    # Nothing started more than an hour ago, nor before 2000, nor after the day after tomorrow.
    later = (datetime.now(UTC) + timedelta(days=2)).date().isoformat()
    for window in (("--until", "1h"), ("--until", "2000-01-01"), ("--since", later)):
        data = checked(cli, *window)
        assert data["attempts"] == 0 and data["events"] == store.last_position(), window
    text = cli("replay", "--since", "2000-01-01")
    assert text.code == 0
    assert "checking attempts started at or after 2000-01-01T00:00:00+00:00" in text.out
    assert f"attempts: {total} checked, {total} reproduced" in text.out


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--since", "yesterday"),
        ("--until", "2h30"),
        ("--since", "2026-13-01"),
        ("--until", "-5"),
        ("--since", "99999999d"),
    ],
)
def test_a_bad_value_is_a_usage_error_naming_the_flag_and_the_forms(
    capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["replay", f"{flag}={value}", "--db", "sqlite:///unused.db"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: " in err and repr(value) in err
    for form in ("non-negative integer", "RFC 3339", "2026-11-23T10:00:00Z", "2026-11-23", "30m"):
        assert form in err


def test_counterfactual_refuses_a_window_rather_than_ignoring_it(
    cli: Callable[..., Done], tmp_path: Path
) -> None:
    assert cli("simulate", str(ROOT / "examples" / "cluster")).code == 0
    same = tmp_path / "same.yaml"
    same.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    done = cli("replay", "--config", str(same), "--since", "1h")
    assert done.code == 2 and done.out == ""
    assert "--since/--until do not apply to replay --config" in done.err


def test_a_selection_refuses_a_time_without_a_zone() -> None:
    with pytest.raises(ValueError, match="naive datetime"):
        Selection(since=datetime(2026, 11, 23, 10, 0))
