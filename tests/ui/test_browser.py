"""`eventsched ui` in a real headless browser: Debian's chromium through its chromedriver.

Loads every page, follows the links overview -> pod -> node, runs a what-if
through its form, and checks each screenshot is a drawn page (many distinct
colours), not a blank one. Skipped only when chromium or chromedriver is absent
(`apt-get install chromium chromium-driver`); tests/ui/browser.py drives it. With
EVENTSCHED_UI_SCREENSHOTS=DIR the screenshots are also saved there (docs/ui-*.png come
from this test and test_shadow_pages.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from eventsched.ui.app import INSECURE_LOCAL, Settings
from tests.ui.browser import MIN_COLOURS, WAIT_S, needs_browser, screenshot, wait_for
from tests.ui.conftest import PROFILES, Served, simulate

pytestmark = needs_browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    url = f"sqlite:///{tmp_path_factory.mktemp('browser') / 'events.db'}"
    simulate(url)
    with Served(Settings(url, PROFILES, chain_interval=0.5, access=INSECURE_LOCAL)) as served:
        yield served


def test_every_page_draws(site: Served, browser: object) -> None:
    pages = {
        "overview": ("/", "#chain"),
        "pod-pending": ("/pods/default/too-big", "#dominant"),
        "pod": ("/pods/shop/checkout", "#winner"),
        "attempts": ("/pods/shop/checkout/attempts", "tr.chosen"),
        "why-not": ("/pods/shop/checkout/why-not?node=worker-1", "#answer"),
        "node": ("/nodes/worker-2", "#rejections, p.muted"),
        "pod-numbers": ("/pods/default/too-big", "#numbers-summary"),
        "cluster-at": ("/cluster-at/40?pod=shop/checkout", "#nodes-then"),
        "nodes": ("/nodes", "#nodes"),
        "search": ("/search?since=1d", "table.rows"),
        "what-if-form": ("/what-if", "#run"),
        "not-found": ("/pods/default/nobody", "#error"),
    }
    for name, (path, ready) in pages.items():
        browser.get(site.base + path)  # type: ignore[attr-defined]
        wait_for(browser, ready)
        assert screenshot(browser, name) >= MIN_COLOURS, name


def test_links_from_overview_to_pod_to_node(site: Served, browser: object) -> None:
    from selenium.webdriver.common.by import By

    browser.get(site.base + "/")  # type: ignore[attr-defined]
    wait_for(browser, "#pending a.pod").click()  # type: ignore[attr-defined]
    wait_for(browser, "#dominant")
    assert browser.current_url == site.base + "/pods/default/too-big"  # type: ignore[attr-defined]
    closest = wait_for(browser, "#closest a.node")
    node = closest.text  # type: ignore[attr-defined]
    closest.click()  # type: ignore[attr-defined]
    wait_for(browser, "#rejections")
    assert browser.current_url == f"{site.base}/nodes/{node}"  # type: ignore[attr-defined]
    heading = browser.find_element(By.TAG_NAME, "h1").text  # type: ignore[attr-defined]
    assert heading == f"Node {node}"
    # From the overview's recent decisions to a bound pod, its attempts, its node.
    browser.get(site.base + "/")  # type: ignore[attr-defined]
    browser.find_element(By.LINK_TEXT, "shop/checkout").click()  # type: ignore[attr-defined]
    wait_for(browser, "#winner")
    browser.find_element(By.ID, "attempts-link").click()  # type: ignore[attr-defined]
    wait_for(browser, "tr.chosen a.node").click()  # type: ignore[attr-defined]
    wait_for(browser, "h1")
    assert "/nodes/" in browser.current_url  # type: ignore[attr-defined]


def test_node_list_from_the_navigation_to_a_node(site: Served, browser: object) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(site.base + "/")  # type: ignore[attr-defined]
    wait_for(browser, "#chain")
    browser.find_element(By.LINK_TEXT, "Nodes").click()  # type: ignore[attr-defined]
    wait_for(browser, "#nodes")
    assert browser.current_url == site.base + "/nodes"  # type: ignore[attr-defined]
    # The page's fold of the log reaches the head (a positive signal: its sentence).
    WebDriverWait(browser, WAIT_S).until(  # type: ignore[arg-type]
        lambda d: "as of the log's head" in d.find_element(By.ID, "fold").text or d.refresh()
    )
    cells = browser.find_elements(By.CSS_SELECTOR, "#nodes tbody tr")  # type: ignore[attr-defined]
    names = [c.find_element(By.CSS_SELECTOR, "a.node").text for c in cells]
    assert names == sorted(names) and "worker-2" in names and len(names) == 6
    worker2 = cells[names.index("worker-2")].find_elements(By.TAG_NAME, "td")
    assert worker2[1].text.endswith(" / 110") and not worker2[1].text.startswith("—")
    assert screenshot(browser, "nodes") >= MIN_COLOURS
    browser.find_element(By.LINK_TEXT, "worker-2").click()  # type: ignore[attr-defined]
    wait_for(browser, "#rejections, p.muted")
    assert browser.current_url == site.base + "/nodes/worker-2"  # type: ignore[attr-defined]


def test_what_if_through_the_form(site: Served, browser: object) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(site.base + "/what-if")  # type: ignore[attr-defined]
    Select(wait_for(browser, "select[name=config]")).select_by_visible_text("most-allocated.yaml")
    browser.find_element(By.ID, "run").click()  # type: ignore[attr-defined]
    # The progress page refreshes itself (meta refresh) until the result is there.
    done = wait_for(browser, "#done")
    assert "10 attempts replayed" in done.text  # type: ignore[attr-defined]
    wait_for(browser, "svg#chart rect")
    assert screenshot(browser, "what-if") >= MIN_COLOURS
