"""`eventsched ui` in a real headless browser: Debian's chromium through its chromedriver.

Loads every page, follows the links overview -> pod -> node, runs a what-if
through its form, and checks each screenshot is a drawn page (many distinct
colours), not a blank one. Skipped only when chromium or chromedriver is absent
(`apt-get install chromium chromium-driver`). With EVENTSCHED_UI_SCREENSHOTS=DIR
the screenshots are also saved there (docs/ui-*.png come from this test).
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from eventsched.ui.app import Settings
from tests.ui.conftest import PROFILES, Served, simulate

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

pytestmark = pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
    reason="chromium and chromium-driver are not installed",
)

#: A drawn page has text, tables and colours: far more than a blank or error-less void.
MIN_COLOURS = 40
WAIT_S = 60


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    url = f"sqlite:///{tmp_path_factory.mktemp('browser') / 'events.db'}"
    simulate(url)
    with Served(Settings(url, PROFILES, chain_interval=0.5)) as served:
        yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,1000",
        "--hide-scrollbars",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(driver: object, css: str) -> object:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S).until(  # type: ignore[arg-type]
        ec.presence_of_element_located((By.CSS_SELECTOR, css))
    )


def screenshot(driver: object, name: str) -> int:
    """Distinct colours in a full-page screenshot; saved under $EVENTSCHED_UI_SCREENSHOTS."""
    from PIL import Image

    png = driver.get_screenshot_as_png()  # type: ignore[attr-defined]
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 24) or []
    keep = os.environ.get("EVENTSCHED_UI_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        image.save(Path(keep) / f"ui-{name}.png", optimize=True)
    return len(colours)


def test_every_page_draws(site: Served, browser: object) -> None:
    pages = {
        "overview": ("/", "#chain"),
        "pod-pending": ("/pods/default/too-big", "#dominant"),
        "pod": ("/pods/shop/checkout", "#winner"),
        "attempts": ("/pods/shop/checkout/attempts", "tr.chosen"),
        "why-not": ("/pods/shop/checkout/why-not?node=worker-1", "#answer"),
        "node": ("/nodes/worker-2", "#rejections, p.muted"),
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
