"""Every page of `eventsched ui` over real HTTP, on SQLite and PostgreSQL, and that none writes."""

from __future__ import annotations

import html
import re
import time
from urllib.parse import urlencode

import pytest

from tests.ui.conftest import PROFILES, Log, Served, count_events

PAGES = [
    "/",
    "/pods/default/too-big",
    "/pods/shop/checkout",
    "/pods/shop/checkout/attempts",
    "/pods/shop/checkout/why-not?node=worker-1",
    "/nodes",
    "/nodes/worker-1",
    "/cluster-at/40?pod=shop/checkout",
    "/search?pod=shop/checkout",
    "/what-if",
    "/healthz",
    "/static/style.css",
]


def text(page: str) -> str:
    """The page's words, tags dropped and blanks squeezed."""
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def one_sentence(reply_body: str) -> str:
    found = re.search(r'<p class="error" id="error"[^>]*>([^<]*)</p>', reply_body)
    assert found, reply_body[:500]
    assert "Traceback" not in reply_body
    return html.unescape(found.group(1))


def test_every_page_answers(served: Served) -> None:
    for path in PAGES:
        reply = served.request(path)
        assert reply.status == 200, (path, reply.body[:300])


def test_overview(served: Served) -> None:
    page = text(served.request("/").body)
    assert "Pending now (1)" in page
    assert "default/too-big" in page and "Insufficient cpu" in page
    assert "Recent decisions" in page and "shop/checkout" in page
    assert "NodeResourcesFit" in page  # rejected the most nodes in the last hour
    assert "Decisions per minute" in page and "Hash chain" in page


def test_overview_without_shadow_verdicts(served: Served) -> None:
    # The simulated log has no shadow verdict: no section, unless a window is asked for.
    assert 'id="shadow"' not in served.request("/").body
    reply = served.request("/?shadow=7d")
    assert reply.status == 200
    assert "No shadow verdict in the last 7 days." in text(reply.body)
    bad = served.request("/?shadow=2w")
    assert bad.status == 400
    assert one_sentence(bad.body) == "shadow: the window is one of 1h, 1d, 7d, 30d."


def test_chain_status_reaches_the_head(served: Served, ui_log: Log) -> None:
    head, _ = count_events(ui_log.owner_url)  # positions are gap-free from 1
    deadline = time.monotonic() + 20
    while True:
        page = text(served.request("/").body)
        if f"verified up to position {head} (the head is {head})" in page:
            break
        assert time.monotonic() < deadline, page[:400]
        time.sleep(0.1)  # polling for the positive signal above, not sleeping to assert


def test_pod_summary_of_a_pending_pod(served: Served) -> None:
    reply = served.request("/pods/default/too-big")
    page = text(reply.body)
    assert "pending: 0/6 nodes are available" in page
    assert "Dominant blocker NodeResourcesFit : Insufficient cpu (3 node(s))" in page
    for reason in ("node(s) were unschedulable", "untolerated taint"):
        assert reason in page
    # Closest to fitting: nodes kept out by one resolvable reason (Insufficient cpu).
    closest = reply.body.split('id="closest"')[1].split("</table>")[0]
    assert {"worker-1", "worker-2", "worker-3"} <= set(re.findall(r">(worker-\d)<", closest))


def test_pending_pod_numbers_and_queue(served: Served) -> None:
    """The numbers behind "Insufficient cpu" (the request against each node's room, from the
    view the attempt saw), where the pod stands in the queue and what would move it."""
    reply = served.request("/pods/default/too-big")
    numbers = text(reply.body.split('id="numbers-summary"')[1].split("</table>")[0])
    rooms = re.findall(
        r"cpu: requests 64, node (worker-\d) has ([\d.]+) allocatable, ([\d.]+) requested, "
        r"([\d.]+) free",
        numbers,
    )
    assert {r[0] for r in rooms} == {"worker-1", "worker-2", "worker-3"}
    for _, allocatable, requested, free in rooms:
        assert round(float(allocatable) - float(requested), 3) == float(free) < 64
    assert "nvidia.com/gpu=present:NoSchedule" in numbers
    queue = text(reply.body.split('id="queue"')[1].split("</section>")[0])
    assert "In the unschedulable queue since" in queue and "place 1 of 1" in queue
    assert "a node added (NodeResourcesFit, NodeUnschedulable, TaintToleration)" in queue
    attempts = served.request("/pods/default/too-big/attempts")
    assert 'id="numbers-1"' in attempts.body and 'id="queue"' in attempts.body


def test_the_cluster_as_the_scheduler_saw_it(served: Served) -> None:
    attempts = served.request("/pods/shop/checkout/attempts").body
    link = re.search(r'href="(/cluster-at/(\d+)\?pod=shop%2Fcheckout)"', attempts)
    assert link, "the attempts page links to the cluster at the attempt"
    page = served.request(html.unescape(link.group(1)))
    assert page.status == 200
    nodes = text(page.body.split('id="nodes-then"')[1].split("</table>")[0])
    assert "worker-2" in nodes and "(cordoned)" in nodes  # worker-4
    changes = text(page.body.split('id="changes"')[1].split("</ul>")[0])
    # The attempt saw the cluster before checkout was placed: the node it went to changed.
    assert re.search(r"worker-\d : changed; requested: [^;]*; pods: [^;]*\+shop/checkout", changes)
    beyond = served.request("/cluster-at/99999999")
    assert beyond.status == 404 and "positions run from 0 to" in one_sentence(beyond.body)


def test_pod_summary_of_a_bound_pod(served: Served) -> None:
    page = text(served.request("/pods/shop/checkout").body)
    assert "bound to worker-2" in page
    assert "Why worker-2 worker-2 scored 492 , the runner-up" in page
    assert "NodeResourcesFit" in page


def test_pod_attempts(served: Served) -> None:
    reply = served.request("/pods/shop/checkout/attempts")
    assert 'class="chosen"' in reply.body  # the chosen node's row is highlighted
    page = text(reply.body)
    assert "Attempt 1: bound → worker-2" in page
    assert "NodeUnschedulable" in page and "node(s) were unschedulable" in page
    assert "raw" not in page or "→" in page


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ("worker-2", "worker-2 was chosen in this attempt."),
        ("worker-4", "worker-4 was filtered out by NodeUnschedulable"),
        ("worker-1", "worker-1 passed every filter but scored"),
        ("nowhere-9", "nowhere-9 was not evaluated in this attempt"),
    ],
)
def test_why_not(served: Served, node: str, expected: str) -> None:
    reply = served.request("/pods/shop/checkout/why-not?" + urlencode({"node": node}))
    assert reply.status == 200
    assert expected in text(reply.body)


def test_node_page(served: Served) -> None:
    page = text(served.request("/nodes/worker-4").body)
    assert "Pods placed here (0)" in page
    assert "NodeUnschedulable" in page and "node(s) were unschedulable" in page
    placed = text(served.request("/nodes/worker-2").body)
    assert "shop/checkout" in placed


def test_search(served: Served) -> None:
    page = text(served.request("/search?pod=shop/checkout").body)
    assert "shop/checkout" in page and "bound" in page
    by_plugin = text(served.request("/search?plugin=NodeUnschedulable&since=1d").body)
    assert "default/too-big" in by_plugin and "shop/db-0" in by_plugin
    by_node = served.request("/search?node=worker-2").body
    assert "shop/checkout" in text(by_node)
    assert set(re.findall(r'class="node" href="/nodes/([\w-]+)"', by_node)) == {"worker-2"}
    # Paged: 50 rows a page; the example log has fewer decisions, so one page, no "older".
    everything = served.request("/search?since=1d")
    assert 'id="next"' not in everything.body
    assert text(everything.body).count("default/too-big") >= 2
    second = served.request("/search?since=1d&page=2")
    assert 'id="nothing"' in second.body and "← newer" in text(second.body)


def test_what_if_runs_and_writes_nothing(served: Served, ui_log: Log) -> None:
    before = count_events(ui_log.owner_url)
    reply = served.request(
        "/what-if",
        "POST",
        urlencode({"config": "most-allocated.yaml", "yaml": "", "since": "", "until": ""}),
        "application/x-www-form-urlencoded",
    )
    assert reply.status == 303, reply.body[:300]
    job = reply.headers["location"]
    deadline = time.monotonic() + 60
    while True:
        page = served.request(job)
        assert page.status == 200
        if 'id="done"' in page.body:
            break
        assert 'id="error"' not in page.body, text(page.body)
        assert 'http-equiv="refresh"' in page.body  # the running page refreshes itself
        assert time.monotonic() < deadline
        time.sleep(0.1)  # polling for the positive signal above
    page_text = text(page.body)
    assert "10 attempts replayed, 10 pods" in page_text
    assert re.search(r"<strong>\d+</strong> moved", page.body)
    assert "<svg" in page.body and "<rect" in page.body
    assert count_events(ui_log.owner_url) == before


def run_what_if(served: Served, **form: str) -> str:
    """Start a what-if, wait for its result page, return its text."""
    reply = served.request("/what-if", "POST", urlencode(form), "application/x-www-form-urlencoded")
    assert reply.status == 303, reply.body[:300]
    deadline = time.monotonic() + 60
    while True:
        page = served.request(reply.headers["location"])
        if 'id="done"' in page.body:
            return text(page.body)
        assert 'id="error"' not in page.body, text(page.body)
        assert time.monotonic() < deadline
        time.sleep(0.1)  # polling for the positive signal above


def test_what_if_time_range(served: Served) -> None:
    pasted = (PROFILES / "most-allocated.yaml").read_text()
    recent = run_what_if(served, yaml=pasted, since="1d")
    assert "10 attempts replayed, 10 pods" in recent and "pasted YAML" in recent
    # Nothing was attempted a year ago: the history up to then is empty.
    old = run_what_if(served, config="most-allocated.yaml", until="2000-01-01T00:00:00Z")
    assert "0 attempts replayed, 0 pods" in old


def test_what_if_bad_yaml_names_the_field(served: Served) -> None:
    pasted = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n  - schedulerName: eventsched\n    plugins: {score: {enabled: [{name: NoSuchPlugin}]}}\n"
    reply = served.request(
        "/what-if",
        "POST",
        urlencode({"config": "", "yaml": pasted}),
        "application/x-www-form-urlencoded",
    )
    assert reply.status == 400
    message = one_sentence(reply.body)
    assert "field profiles[0].plugins.score" in message and "NoSuchPlugin" in message
    broken = served.request(
        "/what-if", "POST", urlencode({"yaml": "a: [1"}), "application/x-www-form-urlencoded"
    )
    assert broken.status == 400 and "not valid YAML" in one_sentence(broken.body)


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/pods/default/nobody", 404, "no event for pod default/nobody"),
        ("/nodes/no-such-node", 404, "no event for node no-such-node"),
        ("/no/such/page", 404, "No page at /no/such/page"),
        ("/search?since=yesterday-ish", 400, "since: 'yesterday-ish' is not a time"),
        ("/search?since=2h&until=3h", 400, "until: the end of the time range is before its start"),
        ("/search?pod=a/b&page=0", 400, "page: must be a whole number"),
        ("/pods/shop/checkout/why-not", 400, "node: name the node"),
        ("/pods/shop/checkout/why-not?node=x&attempt=nope", 404, "has no attempt nope"),
        ("/what-if/0123", 404, "No what-if run with that id"),
    ],
)
def test_bad_input_is_one_sentence(served: Served, path: str, status: int, words: str) -> None:
    reply = served.request(path)
    assert reply.status == status
    assert words in one_sentence(reply.body)


ROUTES = [p for p in PAGES if p != "/what-if"] + [
    "/what-if/0123",
    "/pods/default/nobody",
    "/nowhere",
]


def test_no_route_writes(served: Served, ui_log: Log) -> None:
    """Every route, every writing method: refused (405, or 404 for what does not exist),
    and the log's events and batches are the same afterwards."""
    before = count_events(ui_log.owner_url)
    for path in ROUTES:
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            reply = served.request(
                path, method, "position=1&kind=bound", "application/x-www-form-urlencoded"
            )
            assert reply.status in (404, 405), (method, path, reply.status)
            assert "Traceback" not in reply.body
    for method in ("PUT", "PATCH", "DELETE"):
        reply = served.request("/what-if", method, "", "application/x-www-form-urlencoded")
        assert reply.status == 405
        assert "only reads" in one_sentence(reply.body)
    assert count_events(ui_log.owner_url) == before


def test_configs_listed(served: Served) -> None:
    page = served.request("/what-if").body
    for name in ("most-allocated.yaml", "nodelabel.yaml"):
        assert name in page
    assert sorted(p.name for p in PROFILES.glob("*.yaml"))


def test_what_if_refuses_a_third_concurrent_run(served: Served) -> None:
    from eventsched.ui import whatif

    jobs = served.app.state.ui.jobs
    busy = [whatif.Job(f"busy{i}", "test", None, None) for i in range(whatif.MAX_RUNNING)]
    for job in busy:
        jobs._jobs[job.id] = job  # running, as far as the page can tell
    try:
        reply = served.request(
            "/what-if",
            "POST",
            urlencode({"config": "most-allocated.yaml"}),
            "application/x-www-form-urlencoded",
        )
        assert reply.status == 429
        assert "what-if replays are running already" in one_sentence(reply.body)
    finally:
        for job in busy:
            del jobs._jobs[job.id]


def test_a_log_that_verifies_raises_no_warning(served: Served) -> None:
    """Every page that shows events says what it checked, and finds nothing on a log that
    nobody edited."""
    showing = [p for p in PAGES if p.startswith(("/pods/", "/nodes/", "/search", "/cluster-at/"))]
    for path in ["/", *showing]:
        body = served.request(path).body
        assert 'id="integrity"' not in body, path
        scope = re.search(
            r'<p class="muted integrity-scope" id="integrity-scope">([^<]*)</p>', body
        )
        assert scope, path
        checked = (
            "the events folded, through position"
            if path.startswith("/cluster-at/")
            else "batch(es) holding the events shown"
        )
        assert checked in scope.group(1), (path, scope.group(1))
        assert scope.group(1).endswith("; nothing found."), (path, scope.group(1))
