"""Server time of `eventsched ui`'s overview, pod, node and search pages on a (big) log: p50, p95.

    python -m eventsched.benchmarks.ui --db URL [--pod NS/NAME] [--requests 50] [--warm]

Serves the page with uvicorn on a free loopback port in this process, as
`eventsched ui` does, and requests each page `--requests` times over HTTP, one
at a time. The time is the server's own (its `Server-Timing` header: from the
request to the response's headers, the database queries and the template
included), not the client's. The pod defaults to the one with the newest
attempt. `--db` must be a read-only role's URL on PostgreSQL (the page's own
checks are not run here, but nothing writes).

The pod's pages show the numbers behind its reasons and its queue, which fold
the log up to its attempts (`audit.viewat`): `first_ms` is each page's first
request, which pays for folding what the pages before it did not; with
`--warm` the server's fold thread reaches the log's head before the first
request, as it does a few seconds after `eventsched ui` starts.
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import socket
import statistics
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

import sqlalchemy as sa
import uvicorn

from eventsched.events.engine import parse_url
from eventsched.ui.app import INSECURE_LOCAL, Settings, create_app


@dataclass(slots=True)
class PageTiming:
    path: str
    requests: int
    p50_ms: float
    p95_ms: float
    max_ms: float
    bytes: int
    #: The first request's time (the fold it may pay for is not in p50/p95's later ones).
    first_ms: float = 0.0


def _newest(url: str) -> tuple[str, str]:
    """The pod of the newest attempt and the node of the newest binding."""
    engine = sa.create_engine(parse_url(url))
    try:
        with engine.connect() as conn:
            pod = conn.exec_driver_sql(
                "SELECT namespace, name FROM events WHERE kind = 'attempt_started' "
                "ORDER BY position DESC LIMIT 1"
            ).one()
            node = conn.exec_driver_sql(
                "SELECT node FROM events WHERE kind = 'bound' ORDER BY position DESC LIMIT 1"
            ).scalar()
    finally:
        engine.dispose()
    return f"{pod[0]}/{pod[1]}", str(node)


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def _attempt_position(url: str, namespace: str, name: str) -> int:
    """The position just before the pod's newest attempt: its cluster-at page."""
    engine = sa.create_engine(parse_url(url))
    try:
        with engine.connect() as conn:
            found = conn.execute(
                sa.text(
                    "SELECT MAX(position) FROM events WHERE kind = 'attempt_started' "
                    "AND namespace = :ns AND name = :name"
                ),
                {"ns": namespace, "name": name},
            ).scalar()
    finally:
        engine.dispose()
    return max(int(found or 1) - 1, 0)


def _warmed(app: Any) -> None:
    """Fold to the head as the server's fold thread does, before the first request."""
    folds = app.state.ui.folds
    while folds.step():
        pass


def measure(
    url: str, pod: str | None = None, requests: int = 50, warm: bool = False
) -> list[PageTiming]:
    newest_pod, node = _newest(url)
    pod = pod or newest_pod
    namespace, _, name = pod.partition("/")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = create_app(Settings(url, access=INSECURE_LOCAL), start_chain_check=False, warm_fold=False)
    if warm:
        _warmed(app)
    at = _attempt_position(url, namespace, name)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    results = []
    try:
        for path in (
            "/",
            f"/pods/{namespace}/{name}",
            f"/pods/{namespace}/{name}/attempts",
            f"/cluster-at/{at}",
            f"/nodes/{node}",
            f"/search?pod={namespace}/{name}",
            f"/search?node={node}",
            "/search?plugin=NodeResourcesFit",
        ):
            times: list[float] = []
            size = 0
            for _ in range(requests):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
                conn.request("GET", path)
                response = conn.getresponse()
                body = response.read()
                conn.close()
                if response.status != 200:
                    raise RuntimeError(f"{path}: HTTP {response.status}: {body[:300]!r}")
                found = re.search(r"dur=([\d.]+)", response.getheader("server-timing") or "")
                assert found, "no Server-Timing header"
                times.append(float(found.group(1)))
                size = len(body)
            results.append(
                PageTiming(
                    path,
                    requests,
                    round(statistics.median(times), 1),
                    round(_p(times, 0.95), 1),
                    round(max(times), 1),
                    size,
                    round(times[0], 1),
                )
            )
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, metavar="URL")
    parser.add_argument("--pod", metavar="NS/NAME")
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--warm", action="store_true", help="fold the log to its head before the first request"
    )
    args = parser.parse_args()
    results = measure(args.db, args.pod, args.requests, args.warm)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
        return
    for r in results:
        print(
            f"{r.path}: p50 {r.p50_ms} ms, p95 {r.p95_ms} ms, max {r.max_ms} ms "
            f"over {r.requests} requests, first {r.first_ms} ms ({r.bytes:,} bytes)"
        )


if __name__ == "__main__":
    main()
