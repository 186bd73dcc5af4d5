"""Preemption, scheduling gates and gangs on `eventsched ui`, in real headless chromium, on
SQLite and PostgreSQL (served through the read-only role). One log holds examples/preemption
simulated (checkout preempts batch-1 and batch-2), a pod whose two gates were lifted one
after the other, and a gang of 3 with minMember 3 whose third member fits nowhere, its
scheduler still running while the pages are read (tests/chainlogs.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from eventsched.ui.app import INSECURE_LOCAL, Settings
from tests.chainlogs import GATES, blocked_gang, gated_pod
from tests.conftest import BACKENDS
from tests.ui.browser import MIN_COLOURS, needs_browser, screenshot, wait_for
from tests.ui.conftest import Served, postgres_log, simulate

pytestmark = needs_browser

ROOT = Path(__file__).resolve().parents[2]


def fill(url: str) -> None:
    simulate(url, ROOT / "examples" / "preemption")
    gated_pod(url)


@pytest.fixture(scope="module", params=BACKENDS)
def site(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('chains') / 'events.db'}"
        fill(url)
        with (
            blocked_gang(url),
            Served(Settings(url, chain_interval=0.5, access=INSECURE_LOCAL)) as served,
        ):
            yield served
        return
    server: str = request.getfixturevalue("postgres_server")
    with (
        postgres_log(server, fill) as log,
        blocked_gang(log.owner_url),
        Served(Settings(log.reader_url, chain_interval=0.5, access=INSECURE_LOCAL)) as served,
    ):
        yield served


def open_page(driver: object, site: Served, path: str, ready: str) -> None:
    driver.get(site.base + path)  # type: ignore[attr-defined]
    wait_for(driver, ready)


def texts(driver: object, css: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, css)]  # type: ignore[attr-defined]


def test_the_preemptor_lists_its_victims_and_each_names_it(site: Served, browser: object) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, site, "/pods/shop/checkout", "#preemption-1 table.victims")
    section = texts(browser, "#preemption-1 p")[0]
    assert "nominated node-a (chosen by lowest highest-victim priority among 3 candidate(s))" in (
        section
    )
    assert "chose 2 pod(s) to evict for this pod of priority 1000" in section
    rows = [r.split(" ", 4)[:4] for r in texts(browser, "#preemption-1 tbody tr")]
    assert rows == [
        ["jobs/batch-1", "10", "respected", "deleted"],
        ["jobs/batch-2", "10", "respected", "deleted"],
    ]
    assert screenshot(browser, "pod-preemptor") >= MIN_COLOURS

    browser.find_element(By.LINK_TEXT, "jobs/batch-2").click()  # type: ignore[attr-defined]
    victim = str(wait_for(browser, "#preempted-by-1").text)  # type: ignore[attr-defined]
    assert victim.startswith(
        "Chosen as a victim of shop/checkout's preemption (priority 1000 over this pod's 10) "
        "on node-a ("
    )
    assert "node chosen by lowest highest-victim priority):" in victim
    assert "deleted (200) at " in victim
    browser.find_element(By.CSS_SELECTOR, "#preempted-by-1 a.pod").click()  # type: ignore[attr-defined]
    wait_for(browser, "#preemption-1")
    assert browser.current_url == site.base + "/pods/shop/checkout"  # type: ignore[attr-defined]


def test_a_gated_pod_reads_admitted_ungated_queued_placed(site: Served, browser: object) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, site, "/pods/default/train", "#gate-steps")
    steps = browser.find_elements(By.CSS_SELECTOR, "#gate-steps li")  # type: ignore[attr-defined]
    assert [s.get_attribute("class") for s in steps] == [
        "step-held",
        "step-lifted",
        "step-lifted",
        "step-ungated",
        "step-queued",
        "step-placed",
    ]
    assert f"{GATES[0]} lifted: admitted by Kueue" in steps[1].text
    assert f"{GATES[1]} lifted" in steps[2].text and "Kueue" not in steps[2].text
    assert "placed on worker-1" in steps[5].text
    assert texts(browser, "#gates-now") == ["Every gate lifted."]
    gates = [r.split(" ")[0] for r in texts(browser, "#gate-table tbody tr")]
    assert gates == list(GATES)
    assert screenshot(browser, "pod-gates") >= MIN_COLOURS


def test_the_gang_page_names_the_member_that_blocks(site: Served, browser: object) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, site, "/pods/ml/ring-0", "#gang a")
    browser.find_element(By.CSS_SELECTOR, "#gang a").click()  # type: ignore[attr-defined]
    wait_for(browser, "#blockers")
    assert browser.current_url == site.base + "/gangs/ml/ring"  # type: ignore[attr-defined]
    assert texts(browser, "#gang-status") == [
        "not complete: 2 of minMember 3 hold a node (0 bound, 2 waiting at Permit); "
        "blocked by ring-2 (unschedulable)"
    ]
    (blocker,) = texts(browser, "#blockers tbody tr")
    assert blocker.startswith("ring-2 unschedulable 1 0/2 nodes are available: 2 Insufficient cpu.")
    members = texts(browser, "#members tbody tr")
    assert [m.split(" ")[0] for m in members] == ["ring-0", "ring-1", "ring-2"]
    assert all("waiting at Permit rack-" in m for m in members[:2])
    assert len(texts(browser, "#members tr.blocking")) == 1
    assert screenshot(browser, "gang") >= MIN_COLOURS


def test_an_unknown_gang_is_one_sentence(site: Served) -> None:
    reply = site.request("/gangs/ml/nope")
    assert reply.status == 404
    assert "The event log has no pod of namespace ml in pod group nope" in reply.body


def test_preemptions_gates_and_gangs_raise_no_integrity_warning(site: Served) -> None:
    """Victims evicted and removed, gates lifted, members waiting at Permit: none of it is
    a contradiction (audit/contradictions.py), and every batch shown verifies."""
    for path in (
        "/pods/shop/checkout",
        "/pods/jobs/batch-1",
        "/pods/default/train",
        "/pods/ml/ring-0",
        "/pods/ml/ring-2/attempts",
        "/gangs/ml/ring",
        "/nodes/rack-1",
    ):
        body = site.request(path).body
        assert 'id="integrity"' not in body, path
        assert "; nothing found.</p>" in body, path
