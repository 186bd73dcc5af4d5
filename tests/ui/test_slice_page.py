"""A slice (`eventsched export`) in the web page, in the real headless browser: every page
says whose slice it is, and the pod's page draws from the slice alone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from eventsched.cli.main import main
from eventsched.ui.app import INSECURE_LOCAL, Settings
from tests.ui.browser import MIN_COLOURS, needs_browser, screenshot, wait_for
from tests.ui.conftest import Served, simulate

pytestmark = needs_browser


@pytest.fixture(scope="module")
def sliced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str]]:
    here = tmp_path_factory.mktemp("source")
    source = f"sqlite:///{here / 'events.db'}"
    simulate(source)
    out = tmp_path_factory.mktemp("elsewhere") / "slice.db"
    assert main(["export", "--pod", "default/too-big", "--out", str(out), "--db", source]) == 0
    (here / "events.db").unlink()
    with Served(Settings(f"sqlite:///{out}", chain_interval=0.5, access=INSECURE_LOCAL)) as served:
        yield served, source


def test_the_pod_page_of_a_slice_draws_and_says_whose_slice_it_is(
    sliced: tuple[Served, str], browser: object
) -> None:
    served, source = sliced
    browser.get(served.base + "/pods/default/too-big")  # type: ignore[attr-defined]
    wait_for(browser, "#dominant")
    banner = wait_for(browser, "#slice").text  # type: ignore[attr-defined]
    assert banner.startswith(f"Slice of {source} (on ")
    assert "pod default/too-big; batches " in banner
    assert screenshot(browser, "slice-pod") >= MIN_COLOURS
    browser.get(served.base + "/")  # type: ignore[attr-defined]
    assert wait_for(browser, "#slice").text == banner  # type: ignore[attr-defined]
    wait_for(browser, "#chain")
