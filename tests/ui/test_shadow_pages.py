"""The shadow's record on `eventsched ui`, in real headless chromium, on SQLite and
PostgreSQL: a log made once by the real kube-scheduler and `eventsched shadow` beside it
(tests/ui/shadowlog.py: 12 nodes, 60 pods; the shadow weighs BalancedAllocation 10, so
some verdicts differ).

A pod's page says the verdict in one sentence and its shadow attempt's outcome is the
verdict; the overview's agreement is the log's counts, and its differences link to the
pods' pages.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from eventsched.ui.app import INSECURE_LOCAL, Settings
from tests.conftest import BACKENDS
from tests.ui.browser import MIN_COLOURS, needs_browser, screenshot, wait_for
from tests.ui.conftest import Served, postgres_log
from tests.ui.shadowlog import ShadowLog, available, copy_log, record

pytestmark = [
    needs_browser,
    pytest.mark.skipif(
        not available(),
        reason="needs kube-apiserver and kube-scheduler ($EVENTSCHED_KUBE_BIN) and etcd",
    ),
]


@pytest.fixture(scope="module")
def shadow_log(tmp_path_factory: pytest.TempPathFactory) -> ShadowLog:
    return record(tmp_path_factory.mktemp("shadow"))


@pytest.fixture(scope="module", params=BACKENDS)
def site(request: pytest.FixtureRequest, shadow_log: ShadowLog) -> Iterator[Served]:
    if request.param == "sqlite":
        with Served(Settings(shadow_log.url, chain_interval=0.5, access=INSECURE_LOCAL)) as served:
            yield served
        return
    server: str = request.getfixturevalue("postgres_server")
    with (
        postgres_log(server, lambda owner: copy_log(shadow_log.url, owner)) as log,
        Served(Settings(log.reader_url, chain_interval=0.5, access=INSECURE_LOCAL)) as served,
    ):
        yield served


def text_of(driver: object, css: str) -> str:
    return str(wait_for(driver, css).text)  # type: ignore[attr-defined]


def open_page(driver: object, site: Served, path: str, ready: str) -> None:
    driver.get(site.base + path)  # type: ignore[attr-defined]
    wait_for(driver, ready)


def test_a_pods_page_says_the_verdict(site: Served, browser: object, shadow_log: ShadowLog) -> None:
    ns, name, agreed = shadow_log.first("placed", "agree")
    open_page(browser, site, f"/pods/{ns}/{name}", "#shadow")
    assert text_of(browser, "#shadow") == (
        f"default-scheduler placed it on {agreed['node']}; eventsched agrees"
    )
    assert text_of(browser, "#status") == f"placed on {agreed['node']} by default-scheduler"

    ns, name, differed = shadow_log.first("placed", "differ")
    open_page(browser, site, f"/pods/{ns}/{name}", "#shadow.v-differ")
    assert text_of(browser, "#shadow") == (
        f"default-scheduler placed it on {differed['node']}; eventsched would pick "
        f"{differed['picked']} because {differed['cause']}"
    )
    # "Why": eventsched's pick against the node kube-scheduler chose.
    assert text_of(browser, "#winner").startswith(
        f"{differed['picked']} scored {differed['totals']['ours']}, default-scheduler's node "
        f"{differed['node']} {differed['totals']['theirs']}"
    )
    assert screenshot(browser, "shadow-pod") >= MIN_COLOURS


def test_ties_and_failures_read_as_sentences(
    site: Served, browser: object, shadow_log: ShadowLog
) -> None:
    sentences = {
        ("placed", "tie"): lambda d: (
            f"default-scheduler placed it on {d['node']}; eventsched ties "
            f"(both total {d['totals']['ours']})"
        ),
        ("unschedulable", "agree"): lambda d: (
            f"default-scheduler left it pending: {d['message']}; eventsched gives the same message"
        ),
        ("unschedulable", "differ"): lambda d: (
            f"default-scheduler left it pending: {d['message']}; "
            f"eventsched gives a different one: {d['ourMessage']}"
        ),
    }
    seen = 0
    for (observed, verdict), expected in sentences.items():
        # The latest verdict is the page's: a pod whose only verdict is this one.
        found = _only_verdict(shadow_log, observed, verdict)
        if found is None:  # the mix's timing decides whether a failure's message differs
            continue
        ns, name, data = found
        open_page(browser, site, f"/pods/{ns}/{name}", "#shadow")
        assert text_of(browser, "#shadow") == expected(data)
        seen += 1
    assert seen >= 2, shadow_log.placements() + shadow_log.failures()


def _only_verdict(log: ShadowLog, observed: str, verdict: str) -> Any:
    count: dict[tuple[str, str], int] = {}
    for ns, name, _ in log.verdicts:
        count[(ns, name)] = count.get((ns, name), 0) + 1
    return next(
        (
            v
            for v in log.verdicts
            if v[2]["observed"] == observed
            and v[2]["verdict"] == verdict
            and count[(v[0], v[1])] == 1
        ),
        None,
    )


def test_a_shadow_attempt_reads_as_its_verdict(
    site: Served, browser: object, shadow_log: ShadowLog
) -> None:
    from selenium.webdriver.common.by import By

    for verdict in ("agree", "differ"):
        ns, name, data = shadow_log.first("placed", verdict)
        open_page(browser, site, f"/pods/{ns}/{name}/attempts", f"li.o-shadow-{verdict}")
        heading = text_of(browser, f"li.o-shadow-{verdict} h2")
        assert heading == f"Attempt 1: shadow: {verdict} → {data['picked']}"
        assert "a shadow attempt" in text_of(browser, f"li.o-shadow-{verdict} p.muted")
        steps = browser.find_elements(By.CSS_SELECTOR, "ul.steps li")  # type: ignore[attr-defined]
        assert not [s.text for s in steps if s.text.startswith(("bound", "reserved"))]
    # The node kube-scheduler chose is marked in eventsched's scores (when in the top kept).
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.theirs")  # type: ignore[attr-defined]
    assert all(data["node"] in r.text and "← default-scheduler" in r.text for r in rows)


def test_the_overview_shows_the_logs_agreement(
    site: Served, browser: object, shadow_log: ShadowLog
) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, site, "/", "#shadow")
    placements, failures = shadow_log.placements(), shadow_log.failures()
    agreeing, total = placements["agree"] + placements["tie"], sum(placements.values())
    assert text_of(browser, "#shadow-agreeing") == str(agreeing)
    assert text_of(browser, "#shadow-placements") == str(total)
    assert text_of(browser, "#shadow-placement-rate") == f"{100 * agreeing / total:.1f}%"
    if failures:
        assert text_of(browser, "#shadow-same") == str(failures["agree"])
        assert text_of(browser, "#shadow-failures") == str(sum(failures.values()))
    # Over time: the buckets add up to the same counts, and the chart draws them.
    cells = [
        [c.get_attribute("textContent") for c in row.find_elements(By.TAG_NAME, "td")]
        for row in browser.find_elements(By.CSS_SELECTOR, "#shadow-buckets tbody tr")  # type: ignore[attr-defined]
    ]
    assert len(cells) >= 2  # the pods came in waves, seconds apart
    assert sum(int(c[1]) for c in cells) == total
    assert sum(int(c[2]) + int(c[3]) for c in cells) == agreeing
    rects = browser.find_elements(By.CSS_SELECTOR, "#shadow-chart rect")  # type: ignore[attr-defined]
    assert len(rects) == 3 * len(cells)
    assert screenshot(browser, "shadow-overview") >= MIN_COLOURS


def test_the_differences_link_to_the_pods_pages(
    site: Served, browser: object, shadow_log: ShadowLog
) -> None:
    from selenium.webdriver.common.by import By

    open_page(browser, site, "/", "#shadow-differences")
    differ = [(ns, name, d) for ns, name, d in shadow_log.verdicts if d["verdict"] == "differ"]
    rows = browser.find_elements(By.CSS_SELECTOR, "#shadow-differences tbody tr")  # type: ignore[attr-defined]
    assert len(rows) == min(len(differ), 50)
    listed = [r.find_element(By.CSS_SELECTOR, "a.pod").text for r in rows]
    assert listed == [f"{ns}/{name}" for ns, name, _ in reversed(differ)][:50]  # newest first
    first = rows[0].find_elements(By.TAG_NAME, "td")
    ns, name, data = differ[-1]
    if data["observed"] == "placed":
        assert [c.text for c in first[2:5]] == [data["node"], data["picked"], data["cause"]]
    first[1].find_element(By.CSS_SELECTOR, "a.pod").click()
    wait_for(browser, "#shadow.v-differ")
    assert browser.current_url == f"{site.base}/pods/{ns}/{name}"  # type: ignore[attr-defined]


def test_the_shadow_record_raises_no_integrity_warning(site: Served, shadow_log: ShadowLog) -> None:
    """A shadow attempt selects a node and binds nothing while the cluster shows the pod on
    the shadowed scheduler's node: no contradiction (audit/contradictions.py), on any pod."""
    for ns, name, _ in shadow_log.verdicts:
        body = site.request(f"/pods/{ns}/{name}").body
        assert 'id="integrity-scope"' in body, (ns, name)
        assert 'id="integrity"' not in body, (ns, name)
