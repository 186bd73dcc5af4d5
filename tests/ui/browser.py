"""Debian's chromium, headless, through its chromedriver, for the page's browser tests.

Tests that need it are skipped only when chromium or chromedriver is absent
(`apt-get install chromium chromium-driver`). With EVENTSCHED_UI_SCREENSHOTS=DIR the
screenshots are also saved there (docs/ui-*.png come from these tests).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

needs_browser = pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
    reason="chromium and chromium-driver are not installed",
)

#: A drawn page has text, tables and colours: far more than a blank or error-less void.
MIN_COLOURS = 40
WAIT_S = 60


@contextlib.contextmanager
def chromium() -> Iterator[object]:
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
    """Distinct colours in a screenshot of the window; saved under
    $EVENTSCHED_UI_SCREENSHOTS as ui-NAME.png."""
    from PIL import Image

    png = driver.get_screenshot_as_png()  # type: ignore[attr-defined]
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 24) or []
    keep = os.environ.get("EVENTSCHED_UI_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        image.save(Path(keep) / f"ui-{name}.png", optimize=True)
    return len(colours)
