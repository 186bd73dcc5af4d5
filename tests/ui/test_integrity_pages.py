"""Every page of `eventsched ui` that shows events says so, on the spot, when they cannot be
trusted: in the real headless chromium, on SQLite and on PostgreSQL (read by the read-only
role), over a log whose `bound` row of shop/checkout was moved to another node behind the
append-only triggers.

The log holds two simulations: examples/cluster (whose shop/checkout is tampered with) and
then examples/spread, whose default/ledger lies wholly after the broken batch: its page
holds no broken batch itself, and says that the chain is broken before what it shows once
the page's check of the whole chain has got there.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from eventsched.cli.main import main
from eventsched.events import upgrade
from eventsched.ui.app import INSECURE_LOCAL, Settings
from tests.audit.test_replay import editing_events
from tests.conftest import BACKENDS
from tests.ui.browser import MIN_COLOURS, needs_browser, screenshot, wait_for
from tests.ui.conftest import PROFILES, Served, postgres_log, simulate

pytestmark = needs_browser
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Tampered:
    """What was done to the log: the `bound` row of shop/checkout, its batch, its nodes."""

    position: int = 0
    batch: int = 0
    selected: str = ""
    other: str = ""


def fill(url: str, tampered: Tampered) -> None:
    """examples/cluster, then examples/spread; then shop/checkout's binding moved."""
    simulate(url)
    assert main(["simulate", str(ROOT / "examples" / "spread"), "--db", url]) == 0
    with editing_events(url) as conn:
        bound = conn.execute(
            sa.text(
                "SELECT position, node FROM events WHERE kind = 'bound' AND namespace = 'shop' "
                "AND name = 'checkout'"
            )
        ).one()
        batch = conn.execute(
            sa.text(
                "SELECT batch FROM event_batches WHERE :p BETWEEN first_position AND last_position"
            ),
            {"p": bound.position},
        ).scalar_one()
        other = next(n for n in ("worker-1", "worker-2", "worker-3") if n != bound.node)
        conn.execute(
            sa.text("UPDATE events SET node = :n WHERE position = :p"),
            {"n": other, "p": bound.position},
        )
    tampered.position, tampered.batch = int(bound.position), int(batch)
    tampered.selected, tampered.other = str(bound.node), other


@dataclass
class Site:
    served: Served
    tampered: Tampered


@pytest.fixture(scope="module", params=BACKENDS)
def site(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Site]:
    tampered = Tampered()
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('integrity') / 'events.db'}"
        upgrade(url)
        fill(url, tampered)
        with Served(Settings(url, PROFILES, chain_interval=0.5, access=INSECURE_LOCAL)) as served:
            yield Site(served, tampered)
        return
    server = request.getfixturevalue("postgres_server")
    with (
        postgres_log(server, lambda owner: _fill_postgres(owner, tampered)) as log,
        Served(
            Settings(log.reader_url, PROFILES, chain_interval=0.5, access=INSECURE_LOCAL)
        ) as served,
    ):
        yield Site(served, tampered)


def _fill_postgres(owner: str, tampered: Tampered) -> None:
    upgrade(owner)
    fill(owner, tampered)


def banner(browser: object, site: Site, path: str) -> str:
    browser.get(site.served.base + path)  # type: ignore[attr-defined]
    return str(wait_for(browser, "#integrity").text)  # type: ignore[attr-defined]


def contradiction(t: Tampered) -> str:
    return f"bound to {t.other} (position {t.position}), but the attempt selected {t.selected}"


def test_the_pod_page_warns(site: Site, browser: object) -> None:
    t = site.tampered
    said = banner(browser, site, "/pods/shop/checkout")
    assert f"hash chain broken at batch {t.batch} (positions" in said
    assert "which holds events shown" in said and "an event in it was changed" in said
    assert contradiction(t) in said
    assert screenshot(browser, "pod-integrity") >= MIN_COLOURS


def test_the_attempts_and_why_not_pages_warn(site: Site, browser: object) -> None:
    from selenium.webdriver.common.by import By

    t = site.tampered
    said = banner(browser, site, "/pods/shop/checkout/attempts")
    assert contradiction(t) in said
    marks = browser.find_elements(By.CSS_SELECTOR, "li.attempt .suspect-mark")  # type: ignore[attr-defined]
    assert marks and "cannot be trusted" in marks[0].text
    said = banner(browser, site, f"/pods/shop/checkout/why-not?node={t.other}")
    assert f"hash chain broken at batch {t.batch}" in said and contradiction(t) in said


def test_the_node_and_search_pages_mark_the_rows(site: Site, browser: object) -> None:
    from selenium.webdriver.common.by import By

    t = site.tampered
    for path in (f"/nodes/{t.other}", "/search?pod=shop/checkout"):
        said = banner(browser, site, path)
        assert f"hash chain broken at batch {t.batch}" in said and contradiction(t) in said
        wait_for(browser, "tr.suspect")
        # Marked: the rows in the broken batch, and every row of the contradicting pod.
        marked = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "tr.suspect")]  # type: ignore[attr-defined]
        assert any("shop/checkout" in row and t.other in row for row in marked), marked


def test_a_page_after_the_break_says_the_chain_is_broken_before_it(
    site: Site, browser: object
) -> None:
    t = site.tampered
    browser.get(site.served.base + "/")  # type: ignore[attr-defined]
    # The page's check of the whole chain reaches the broken batch (a positive signal; the
    # overview is drawn anew on each load, so load it until it shows the break).
    for _ in range(120):
        found = browser.find_elements("css selector", "#chain.chain-broken")  # type: ignore[attr-defined]
        if found:
            break
        browser.refresh()  # type: ignore[attr-defined]
        wait_for(browser, "#chain")
    assert found, "the overview's chain check never reached the broken batch"
    said = banner(browser, site, "/pods/default/ledger")
    assert f"hash chain broken at batch {t.batch} (from position" in said
    assert "at or before what is shown" in said
    assert "which holds events shown" not in said and "contradict" not in said
