"""The schedulers under test: `eventsched run` processes, each scraped on a thread."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from eventsched.benchmarks.failover.scrapes import MASTER, SCRAPE_EVERY, Sample, metric_values
from eventsched.benchmarks.processes import free_port, spawn_logged


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""
    except OSError:
        return 0, ""


class Replica:
    """One `eventsched run` process (JSON logs to its own file) and a thread scraping it."""

    def __init__(
        self, name: str, url: str, kubeconfig: Path, config: Path | None, clock: float
    ) -> None:
        self.name = name
        self.port = free_port()
        self.log = kubeconfig.parent / f"{name}.log"
        self.argv = [
            sys.executable, "-m", "eventsched.cli.main", "--db", url,
            "--log-format", "json", "--log-level", "info",
            "run", "--kubeconfig", str(kubeconfig), "--http-address", f"127.0.0.1:{self.port}",
            "--secure-port", "0",
        ]  # fmt: skip
        if config is not None:
            self.argv += ["--config", str(config)]
        self.proc = spawn_logged(self.argv, self.log)
        self.samples: list[Sample] = []
        self._clock = clock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._scrape, name=f"scrape-{name}", daemon=True)
        self._thread.start()

    @property
    def instance(self) -> str:
        """The `instance` its log events carry (SchedulerOptions' default)."""
        return f"{socket.gethostname()}-{self.proc.pid}"

    def respawn(self) -> None:
        """Start the process again (same flags and port), as its restart policy would."""
        self.proc = spawn_logged(self.argv, self.log)

    def _scrape(self) -> None:
        while not self._stop.wait(SCRAPE_EVERY):
            ready, _ = _get(self.port, "/readyz")
            code, text = _get(self.port, "/metrics")
            values = metric_values(text) if code == 200 else {}
            self.samples.append(Sample(time.monotonic() - self._clock, ready, values))

    def latest(self, key: str) -> float | None:
        return self.samples[-1].values.get(key) if self.samples else None

    def leading(self) -> bool:
        return self.latest(MASTER) == 1.0

    def kill(self) -> float:
        self.proc.kill()
        at = time.monotonic() - self._clock
        self.proc.wait()
        return at

    def stop(self) -> None:
        self._stop.set()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._thread.join(5)
