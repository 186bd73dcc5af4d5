"""A real Prometheus (Debian's `prometheus`) scraping an exporter with known traffic per node.

The exporter exposes node_exporter-style series for three nodes whose
`node_network_receive_bytes_total` counters grow at known, different rates
(`RATES`), plus `node_uname_info` to join them to node names. Prometheus
scrapes it every second. Used by the NetworkTraffic tests and by
`docs/samples/generate.py` for the plugin page's sample.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from eventsched.plugins.networktraffic import DEFAULT_QUERY

#: Received bytes/s on eth0 per node; node-a also gets a flood on eth1 that must not count.
RATES = {"node-a": 1_000.0, "node-b": 200_000.0, "node-c": 20_000.0}
ETH1_FLOOD = 5_000_000.0
WINDOW = 5  # timeRange in seconds: 5 scrapes at 1 s


class PrometheusNotReady(RuntimeError):
    """Prometheus exited or never had a rate for every node; the message ends with its log."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Served:
    """An HTTP server on a loopback port, run in a thread; `hits` counts requests by path."""

    server: ThreadingHTTPServer
    hits: dict[str, int] = field(default_factory=dict)
    #: The PromQL of every /api/v1/query request, in order.
    promql: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def queries(self) -> int:
        return self.hits.get("/api/v1/query", 0)


def serve(respond: Callable[[str], tuple[int, str, bytes, float]]) -> Served:
    """`respond(path)` gives (status, content type, body, delay in seconds before answering)."""
    served: Served

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            path = url.path
            served.hits[path] = served.hits.get(path, 0) + 1
            served.promql.extend(urllib.parse.parse_qs(url.query).get("query", []))
            status, ctype, body, delay = respond(path)
            if delay:
                time.sleep(delay)
            try:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test): that is the point

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    served = Served(server)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return served


def exporter_text(started: float) -> bytes:
    """Counters as node_exporter would expose them, `instance` set per node (honor_labels)."""
    elapsed = time.monotonic() - started
    lines = [
        "# TYPE node_network_receive_bytes_total counter",
    ]
    for i, (_node, rate) in enumerate(sorted(RATES.items()), start=1):
        instance = f"10.0.0.{i}:9100"
        lines.append(
            f'node_network_receive_bytes_total{{device="eth0",instance="{instance}"}} '
            f"{1e6 + rate * elapsed:.3f}"
        )
        lines.append(
            f'node_network_receive_bytes_total{{device="lo",instance="{instance}"}} '
            f"{ETH1_FLOOD * elapsed:.3f}"
        )
    lines.append(
        'node_network_receive_bytes_total{device="eth1",instance="10.0.0.1:9100"} '
        f"{ETH1_FLOOD * elapsed:.3f}"
    )
    # A machine node_exporter sees but that is no Kubernetes node: no uname_info, joins to nothing.
    lines.append(
        'node_network_receive_bytes_total{device="eth0",instance="10.0.0.99:9100"} '
        f"{9e9 * elapsed:.3f}"
    )
    lines.append("# TYPE node_uname_info gauge")
    for i, node in enumerate(sorted(RATES), start=1):
        lines.append(
            f'node_uname_info{{instance="10.0.0.{i}:9100",nodename="{node}",sysname="Linux"}} 1'
        )
    return ("\n".join(lines) + "\n").encode()


def http_get(url: str, timeout: float = 2.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return int(resp.status), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


@dataclass
class RealPrometheus:
    url: str
    exporter: Served
    process: subprocess.Popen[bytes]

    def query(self, promql: str) -> list[dict[str, Any]]:
        status, body = http_get(f"{self.url}/api/v1/query?query={urllib.parse.quote(promql)}")
        assert status == 200, body
        return list(json.loads(body)["data"]["result"])

    def queries_served(self) -> int:
        """Prometheus' own count of /api/v1/query requests: what the plugin costs it."""
        _, body = http_get(f"{self.url}/metrics")
        total = 0.0
        for line in body.decode().splitlines():
            if line.startswith("prometheus_http_requests_total{") and (
                'handler="/api/v1/query"' in line
            ):
                total += float(line.rsplit(" ", 1)[1])
        return int(total)


def _fail_with_log(message: str, log_path: Path) -> None:
    tail = log_path.read_text(errors="replace")[-3000:] if log_path.exists() else ""
    raise PrometheusNotReady(f"{message}\n--- prometheus log (tail) ---\n{tail}")


@contextmanager
def running_prometheus(home: Path) -> Iterator[RealPrometheus]:
    """Debian's prometheus on a free loopback port, scraping our exporter every second,
    its config and storage under `home`; ready once every node has a full window's rate.

    Never the packaged service: the binary runs with its own config, storage and port.
    """
    binary = shutil.which("prometheus") or (
        "/usr/bin/prometheus" if Path("/usr/bin/prometheus").exists() else None
    )
    if binary is None:
        raise PrometheusNotReady(
            "the `prometheus` binary is missing: install Debian's prometheus "
            "(apt-get install -y prometheus); the NetworkTraffic tests run a real Prometheus"
        )
    started = time.monotonic()
    exporter = serve(lambda path: (200, "text/plain; version=0.0.4", exporter_text(started), 0.0))
    config = home / "prometheus.yml"
    config.write_text(
        "global:\n"
        "  scrape_interval: 1s\n"
        "  evaluation_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: node\n"
        "    honor_labels: true\n"
        "    static_configs:\n"
        f"      - targets: ['127.0.0.1:{exporter.server.server_address[1]}']\n"
    )
    port = free_port()
    log_path = home / "prometheus.log"
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={home / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    prom = RealPrometheus(f"http://127.0.0.1:{port}", exporter, process)
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                _fail_with_log(f"prometheus exited with code {process.returncode}", log_path)
            try:
                if http_get(f"{prom.url}/-/ready", timeout=1)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                _fail_with_log("prometheus was not ready within 30 s", log_path)
            time.sleep(0.2)
        # rate() needs two samples inside the window: wait for every node to have a rate.
        query = DEFAULT_QUERY.replace("$device", "eth0").replace("$range", f"{WINDOW}s")
        deadline = time.monotonic() + 40
        while len(prom.query(query)) < len(RATES):
            if time.monotonic() > deadline:
                _fail_with_log(
                    f"no rate for every node within 40 s (scrapes served: "
                    f"{exporter.hits.get('/metrics', 0)}); last answer: {prom.query(query)}",
                    log_path,
                )
            time.sleep(0.5)
        # rate() over a window only partly covered by samples reads low: fill the window.
        while exporter.hits.get("/metrics", 0) < WINDOW + 3:
            if time.monotonic() > deadline:
                _fail_with_log("the exporter was not scraped every second", log_path)
            time.sleep(0.5)
        yield prom
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        exporter.server.shutdown()
