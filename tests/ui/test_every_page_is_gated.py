"""Every route of the page goes through the reader's gate: walked from the app's own
route table (a page added later is walked too), as a reader allowed one namespace,
no page shows a pod of another, and none answers without credentials."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.routing import Route

from eventsched._httpguard import Guard, UserInfo
from eventsched.ui.app import Access, Settings
from tests.serving.reviewer import FakeReviewer
from tests.ui.conftest import Served, simulate

#: A value for each path parameter of the routes: pods of both namespaces of
#: examples/cluster, a node, a position.
PARAMS = {"node": "worker-1", "position": "1", "job": "0"}
READER = UserInfo("shop-reader")


def test_a_reader_of_one_namespace_sees_no_other_on_any_page(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    simulate(url)
    reviewer = FakeReviewer({"t": READER}, {(READER.name, "get", "pods/shop")})
    access = Access(Guard(reviewer, ("/healthz", "/static/*")), reviewer)
    with Served(Settings(url, chain_interval=0.5, access=access)) as served:
        paths = []
        for route in served.app.routes:
            if not isinstance(route, Route) or route.path == "/healthz":
                continue
            if "{namespace}" in route.path:
                for namespace, name in (("shop", "checkout"), ("default", "too-big")):
                    paths.append(route.path.format(namespace=namespace, name=name, **PARAMS))
            else:
                paths.append(re.sub(r"\{(\w+)(:\w+)?\}", lambda m: PARAMS[m.group(1)], route.path))
        assert "/search" in paths and "/pods/default/too-big" in paths
        for path in paths:
            assert served.request(path).status == 401, path
            reply = served.request(path + "?pod=default/too-big&node=worker-1", token="t")
            if path.startswith("/pods/default/") or path.startswith("/gangs/default/"):
                assert reply.status == 403, (path, reply.status)
            assert reply.status in (200, 403, 404), (path, reply.status, reply.body[:300])
            assert "/pods/default/" not in reply.body, path
        assert "/pods/shop/" in served.request("/", token="t").body
