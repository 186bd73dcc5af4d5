"""An ElasticQuota whose min is above its max, on the pod's pages: the log of
`eventsched simulate` of examples/capacityscheduling-min-above-max with scheduler-plugins'
chart profile, on SQLite and PostgreSQL over HTTP, and in the headless browser."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from eventsched.cli.main import main
from eventsched.events import upgrade
from eventsched.plugins.capacityscheduling.minmax import HANDLING
from eventsched.ui.app import INSECURE_LOCAL, Settings
from tests.conftest import BACKENDS
from tests.ui.browser import MIN_COLOURS, needs_browser, screenshot, wait_for
from tests.ui.conftest import ROOT, Log, Served, filled_log
from tests.ui.test_routes import text

EXAMPLE = ROOT / "examples" / "capacityscheduling-min-above-max"
PROFILE = ROOT / "examples" / "profiles" / "capacityscheduling.yaml"
NOTE = (
    "ElasticQuota team-a/team-a: its min is above its max for cpu (min/max 4/2); " + HANDLING + "."
)


def fill(url: str) -> None:
    upgrade(url)
    assert main(["simulate", "--config", str(PROFILE), str(EXAMPLE), "--db", url]) == 0


@pytest.fixture(scope="module", params=BACKENDS)
def quota_log(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Log]:
    with filled_log(request, tmp_path_factory, fill) as log:
        yield log


@pytest.fixture(scope="module")
def site(quota_log: Log) -> Iterator[Served]:
    with Served(
        Settings(quota_log.reader_url, chain_interval=0.5, access=INSECURE_LOCAL)
    ) as served:
        yield served


def test_the_pod_held_to_the_max_says_why(site: Served) -> None:
    page = text(site.request("/pods/team-a/b").body)
    assert "is rejected in PreFilter because ElasticQuota team-a is more than Max" in page
    assert NOTE in page
    attempts = text(site.request("/pods/team-a/b/attempts").body)
    assert attempts.count(NOTE) == 1  # one attempt


def test_the_borrower_against_that_min_says_nothing_of_its_own_quota(site: Served) -> None:
    # team-b's quota is fine; c4 was refused by the sum of mins team-a's 4 is part of.
    page = text(site.request("/pods/team-b/c4").body)
    assert "total ElasticQuota used is more than min" in page
    assert "its min is above its max" not in page


@needs_browser
def test_the_note_is_drawn(site: Served, browser: object) -> None:
    browser.get(site.base + "/pods/team-a/b")  # type: ignore[attr-defined]
    note = wait_for(browser, "p.quota-note")
    assert note.text == NOTE  # type: ignore[attr-defined]
    assert screenshot(browser, "pod-quota-note") >= MIN_COLOURS
