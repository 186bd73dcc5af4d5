"""High availability measured as an operator would see it, on a real control plane.

    python -m benchmarks.failover [--pods 1000] [--nodes 100]
        [--scenario kill-leader|pg-restart|apiserver-restart|all] [--json]
        [--down SECONDS] [--rate PODS_PER_SECOND] [--qps Q] [--burst B]
        [--server POSTGRESQL_URL] [--keep-logs DIR]

Each scenario gets a fresh control plane (benchmarks/controlplane.py: etcd + kube-apiserver
from $EVENTSCHED_KUBE_BIN), N ready nodes, M pods (schedulerName eventsched; created before
the schedulers start, but in pg-restart) and a fresh PostgreSQL database on --server
(created, `eventsched db upgrade`d, dropped at the end). The schedulers are real `eventsched run`
processes with the default configuration (leader election on the Lease kube-system/eventsched,
15 s / 10 s / 2 s; client QPS 50, burst 100). Bind times are when the benchmark's watch of
bound pods (``spec.nodeName!=``) saw each pod; every replica's /readyz and /metrics are
scraped every 0.25 s.

- kill-leader: two replicas; once the leader has bound a tenth of the pods it gets SIGKILL.
  Failover = first bind by the new leader - kill, and - last bind by the old one.
- pg-restart: one replica, the pods created while it runs (--rate a second); once a third
  is bound, `pg_ctlcluster ... restart` of the local PostgreSQL, or stop, --down seconds,
  start (every session on it ends: do not run it while anything else uses that server).
- apiserver-restart: one replica; once a third is bound, kube-apiserver gets SIGTERM and is
  started again with the same flags (etcd keeps running).

After each: all pods bound, none bound twice (one `bound` event per pod uid, no Binding of
ours refused with 409, the node in the log is the node in the API), every bound pod has its
`bound` event, and the hash chain verifies.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import kubernetes.client
import sqlalchemy as sa
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.engine import make_url

from benchmarks.controlplane import ControlPlane, free_port, kube_binaries, spawn_logged
from benchmarks.kube import NAMESPACE, BindWatch, _create_pods, _nodes, _pod
from eventsched.cli.logs import configure_logging
from eventsched.events import EventStore

SCENARIOS = ("kill-leader", "pg-restart", "apiserver-restart")
DEFAULT_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
SCRAPE_EVERY = 0.25
#: metric families kept from each scrape (rest_client_requests_total is summed by code)
MASTER = "leader_election_master_status"
UNREACHABLE = "eventsched_log_unreachable"
APPEND_FAILURES = "eventsched_log_append_failures_total"
REST = "rest_client_requests_total"


# -- pure parts: what the figures are computed from ------------------------------------------


@dataclass(frozen=True, slots=True)
class Failover:
    """Bind times around a kill (seconds on one clock)."""

    kill_at: float
    last_before: float | None  # the last bind not made by the new leader
    first_after: float | None  # the new leader's first bind of its own

    @property
    def from_kill(self) -> float | None:
        return None if self.first_after is None else self.first_after - self.kill_at

    @property
    def from_last_bind(self) -> float | None:
        if self.first_after is None or self.last_before is None:
            return None
        return self.first_after - self.last_before


def failover(kill_at: float, bind_times: Mapping[str, float], by_new_leader: set[str]) -> Failover:
    """Failover from each pod's bind time and which pods the new leader bound itself.

    A bind the old leader made just before the kill may be seen a little after it, so
    "before" is "not by the new leader", not "seen before the kill".
    """
    old = [t for pod, t in bind_times.items() if pod not in by_new_leader]
    new = [t for pod, t in bind_times.items() if pod in by_new_leader]
    return Failover(kill_at, max(old, default=None), min(new, default=None))


def bound_twice(uids: Iterable[str]) -> dict[str, int]:
    """uid -> number of `bound` events, for the uids logged more than once."""
    return {uid: n for uid, n in Counter(uids).items() if n > 1}


def without_decision(api_bound: Mapping[str, str], logged: Iterable[str]) -> list[str]:
    """Names of pods bound in the API (name -> uid) whose uid has no `bound` event."""
    have = set(logged)
    return sorted(name for name, uid in api_bound.items() if uid not in have)


def metric_values(text: str) -> dict[str, float]:
    """The scraped values the scenarios follow: master status, log unreachable, append
    failures, and rest_client_requests_total summed by code (keys ``rest:<code>``)."""
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == MASTER:
                values[MASTER] = sample.value
            elif sample.name in (UNREACHABLE, APPEND_FAILURES):
                values[sample.name] = sample.value
            elif sample.name == REST:
                key = f"rest:{sample.labels.get('code', '')}"
                values[key] = values.get(key, 0.0) + sample.value
    return values


@dataclass(frozen=True, slots=True)
class Sample:
    at: float
    readyz: int  # HTTP status, 0 when the replica did not answer
    values: dict[str, float]


def changes(samples: Sequence[Sample], key: str) -> list[tuple[float, float]]:
    """(time, value) each time `key` ("readyz" or a metric) takes a new value, first included."""
    out: list[tuple[float, float]] = []
    for s in samples:
        value = float(s.readyz) if key == "readyz" else s.values.get(key)
        if value is not None and (not out or out[-1][1] != value):
            out.append((s.at, value))
    return out


def first_at(points: Sequence[tuple[float, float]], value: float, after: float) -> float | None:
    return next((t for t, v in points if v == value and t >= after), None)


def delta(samples: Sequence[Sample], key: str, start: float, end: float) -> float:
    """How much a counter grew over the samples taken in (start, end], each against the one
    before; a drop is a restarted process counting from zero (as Prometheus' increase()).
    A scrape without the series counts it 0: a labelled series appears at its first count."""
    total = 0.0
    previous: float | None = None
    for s in samples:
        if s.at > end:
            break
        if not s.values:  # the scrape failed
            continue
        value = s.values.get(key, 0.0)
        if previous is not None and s.at > start:
            total += value - previous if value >= previous else value
        previous = value
    return total


def longest_gap(times: Iterable[float]) -> tuple[float, float]:
    """(start, length) of the longest pause between consecutive binds."""
    ordered = sorted(times)
    gaps = [(a, b - a) for a, b in itertools.pairwise(ordered)]
    return max(gaps, key=lambda g: g[1], default=(0.0, 0.0))


# -- results ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Checks:
    """After the run: counted from the log and the API."""

    pods: int
    bound_api: int = 0
    bound_events: int = 0
    bound_twice: dict[str, int] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)  # our Bindings answered 409
    wrong_node: list[str] = field(default_factory=list)  # log's node != API's node
    without_decision: list[str] = field(default_factory=list)
    chain_ok: bool = False

    @property
    def ok(self) -> bool:
        return (
            self.bound_api == self.pods
            and not self.bound_twice
            and not self.conflicts
            and not self.wrong_node
            and not self.without_decision
            and self.chain_ok
        )

    def line(self) -> str:
        return (
            f"bound {self.bound_api}/{self.pods} (API), {self.bound_events} `bound` events; "
            f"bound twice: {len(self.bound_twice)}; 409 on our Bindings: {len(self.conflicts)}; "
            f"log node != API node: {len(self.wrong_node)}; bound without decision: "
            f"{len(self.without_decision)}; hash chain {'verifies' if self.chain_ok else 'BROKEN'}"
        )


@dataclass(slots=True)
class Result:
    scenario: str
    nodes: int
    pods: int
    #: seconds from the first replica's start; name -> time (None when it did not happen)
    timeline: dict[str, float | None] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    checks: Checks | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.checks is not None and self.checks.ok

    def lines(self) -> list[str]:
        out = [f"{self.scenario} ({self.nodes} nodes, {self.pods} pods):"]
        out += [f"  t={_fmt(t)}  {name}" for name, t in self.timeline.items()]
        out += [f"  {name}: {_fmt(value)}" for name, value in self.figures.items()]
        if self.checks is not None:
            out.append(f"  {self.checks.line()}")
        if self.error:
            out.append(f"  ERROR: {self.error}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return "-" if value is None else str(value)


# -- the database ----------------------------------------------------------------------------


@contextlib.contextmanager
def fresh_database(server: str) -> Iterator[str]:
    """A new database eventsched_failover_<pid> on `server` (a URL to any database there),
    upgraded to the current schema; dropped (sessions ended) afterwards."""
    name = f"eventsched_failover_{os.getpid()}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        url = make_url(server).set(database=name).render_as_string(hide_password=False)
        _eventsched(url, "db", "upgrade")
        try:
            yield url
        finally:
            admin.dispose()  # the restart scenario left its pooled connections dead
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def _eventsched(url: str, *args: str) -> None:
    argv = [sys.executable, "-m", "eventsched.cli.main", "--db", url, *args]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"eventsched {' '.join(args)} failed: {done.stderr.strip()}")


def postgres_version() -> str:
    versions = sorted(os.listdir("/etc/postgresql"), key=lambda v: [int(p) for p in v.split(".")])
    return versions[-1]


def restart_postgres(down_seconds: float = 0.0) -> None:
    """`pg_ctlcluster ... restart`, or stop, `down_seconds`, start."""

    def ctl(action: str) -> None:
        argv = ["pg_ctlcluster", "--skip-systemctl-redirect", postgres_version(), "main", action]
        subprocess.run(argv, check=True, capture_output=True)

    if down_seconds <= 0:
        ctl("restart")
        return
    ctl("stop")
    time.sleep(down_seconds)
    ctl("start")


def postgres_log() -> Path:
    return Path(f"/var/log/postgresql/postgresql-{postgres_version()}-main.log")


_PG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC \[\d+\] LOG:  (.*)$")


def postgres_down(log: Iterable[str], since: float) -> tuple[float | None, float | None]:
    """(shutdown request, ready to accept connections) after `since` (Unix time) in the
    server's log, whose lines start with a UTC timestamp (Debian's log_line_prefix)."""
    down = up = None
    for line in log:
        match = _PG_LINE.match(line)
        if match is None:
            continue
        at = datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC).timestamp()
        if at < since:
            continue
        if down is None and "shutdown request" in match[2]:
            down = at
        elif down is not None and "ready to accept connections" in match[2]:
            return down, at
    return down, up


# -- replicas --------------------------------------------------------------------------------


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


class PatientWatch(BindWatch):
    """BindWatch that lists and watches again while the API server is away."""

    def _read(self) -> None:
        try:
            while len(self.bound) < self.expected and not self._closed:
                with contextlib.suppress(Exception):  # the stream broke under a stopping server
                    self._follow(self._response)
                if len(self.bound) >= self.expected or self._closed:
                    break
                self.restarts += 1
                with contextlib.suppress(Exception):
                    self._response.release_conn()
                self._response = self._rewatch()
        except BaseException as e:
            if not self._closed:
                self._error = e
        finally:
            self.done.set()

    def _rewatch(self) -> Any:
        while True:
            try:
                return self._watch()
            except Exception:
                if self._closed:
                    raise
                time.sleep(0.2)


# -- one run ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Settings:
    nodes: int = 100
    pods: int = 1000
    server: str = DEFAULT_SERVER
    #: clientConnection.qps / burst; None: eventsched's defaults (50 / 100), no --config
    qps: float | None = None
    burst: int | None = None
    #: restart scenarios: seconds the server stays stopped (0: a plain restart)
    down: float = 0.0
    #: copy the replicas' and kube-apiserver's logs here (a folder per scenario)
    keep_logs: Path | None = None
    #: pg-restart: pods created this many a second while it runs (the others: all up front)
    rate: float = 20.0
    #: apiserver-restart: SIGKILL (a crash) instead of SIGTERM
    kill_apiserver: bool = False

    def config_file(self, workdir: Path) -> Path | None:
        if self.qps is None and self.burst is None:
            return None
        connection: dict[str, float] = {}
        if self.qps is not None:
            connection["qps"] = self.qps
        if self.burst is not None:
            connection["burst"] = self.burst
        path = workdir / "eventsched.yaml"
        config = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": connection,
        }
        path.write_text(json.dumps(config) + "\n")  # JSON is YAML
        return path


class Run:
    """A control plane with nodes and pending pods, a fresh database, a watch of binds."""

    def __init__(self, stack: contextlib.ExitStack, settings: Settings, upfront: bool) -> None:
        """upfront: all pods created before the replicas start, else none (see `feed`)."""
        binaries = kube_binaries()
        if binaries is None:
            raise SystemExit("set EVENTSCHED_KUBE_BIN to kube-apiserver's directory (etcd on PATH)")
        self.pods = settings.pods
        self.down = settings.down
        self.kill_apiserver = settings.kill_apiserver
        self.cp = stack.enter_context(ControlPlane(binaries))
        self.cp.make_ready_nodes(_nodes(settings.nodes))
        _create_pods(self.cp, settings.pods if upfront else 0, "eventsched")
        self.rate = settings.rate
        self.config = settings.config_file(self.cp.workdir)
        self.url = stack.enter_context(fresh_database(settings.server))
        self.watch = PatientWatch(self.cp, NAMESPACE)
        stack.callback(self.watch.close)
        self.watch.start(settings.pods)
        self.clock = time.monotonic()
        self.wall = time.time()  # the same moment on the Unix clock
        self.replicas: list[Replica] = []
        self._stack = stack

    def now(self) -> float:
        return time.monotonic() - self.clock

    def feed(self) -> None:
        """Create the pods on a thread, `rate` a second, each retried while the API is away."""
        thread = threading.Thread(target=self._feed, name="pod-feed", daemon=True)
        thread.start()

    def _feed(self) -> None:
        client = self.cp.api_client()
        core: Any = kubernetes.client.CoreV1Api(client)
        started = time.monotonic()
        try:
            for i in range(self.pods):
                time.sleep(max(0.0, started + i / self.rate - time.monotonic()))
                _create_pod(core, _pod(f"pod-{i:05d}", "eventsched"))
        finally:
            client.close()

    def replica(self, name: str) -> Replica:
        replica = Replica(name, self.url, self.cp.kubeconfig(), self.config, self.clock)
        self._stack.callback(replica.stop)
        self.replicas.append(replica)
        return replica

    def binds(self) -> dict[str, float]:
        """pod name -> when the watch saw it bound, on this run's clock."""
        return {pod: t - self.clock for pod, t in list(self.watch.bound.items())}

    def wait(self, what: str, condition: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            dead = [r.name for r in self.replicas if r.proc.poll() is not None]
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what}: not within {timeout:.0f} s (exited: {dead})")
            time.sleep(0.1)

    def wait_bound(self, count: int, timeout: float) -> None:
        self.wait(f"{count} pods bound", lambda: len(self.watch.bound) >= count, timeout)

    def check(self) -> Checks:
        return check(self.cp, self.url, self.pods)


def _create_pod(core: Any, body: dict[str, Any], tries: int = 300) -> None:
    for _ in range(tries):
        try:
            core.create_namespaced_pod(NAMESPACE, body, _preload_content=False)
            return
        except kubernetes.client.ApiException as e:
            if e.status == 409:  # created by the try whose answer was lost
                return
        except Exception:  # the API server is away
            pass
        time.sleep(0.2)


def check(cp: ControlPlane, url: str, pods: int) -> Checks:
    """Every pod bound once, each with its `bound` event, on the node the API shows."""
    client = cp.api_client()
    try:
        core: Any = kubernetes.client.CoreV1Api(client)
        raw = core.list_namespaced_pod(NAMESPACE, _preload_content=False)
        listed: list[dict[str, Any]] = json.loads(raw.data)["items"]
    finally:
        client.close()
    on_node = [(p["metadata"], p["spec"]["nodeName"]) for p in listed if p["spec"].get("nodeName")]
    api_node = {str(meta["uid"]): str(node) for meta, node in on_node}
    api_bound = {str(meta["name"]): str(meta["uid"]) for meta, _ in on_node}
    with EventStore.connect(url) as store:
        bound = [e for e in store.read(kinds=["bound"]) if e.namespace == NAMESPACE]
        failed = [e for e in store.read(kinds=["bind_failed"]) if e.namespace == NAMESPACE]
        chain = store.verify_chain()
    return Checks(
        pods=pods,
        bound_api=len(api_bound),
        bound_events=len(bound),
        bound_twice=bound_twice(e.uid or "" for e in bound),
        conflicts=sorted(str(e.name) for e in failed if e.data.get("code") == 409),
        wrong_node=sorted(
            str(e.name) for e in bound if e.uid in api_node and api_node[e.uid] != e.node
        ),
        without_decision=without_decision(api_bound, (e.uid or "" for e in bound)),
        chain_ok=chain.ok,
    )


def new_leaders_own_binds(url: str, instance: str) -> tuple[set[str], Counter[str]]:
    """Pods whose `bound` event this instance logged for a Binding it made, and how many
    reservations left open by its predecessor it closed (`bound` / `unreserved` marked
    `reconciled`: found bound in the API, or not)."""
    own: set[str] = set()
    closed: Counter[str] = Counter()
    with EventStore.connect(url) as store:
        for e in store.read(kinds=["bound", "unreserved"]):
            if e.instance != instance:
                continue
            if e.data.get("reconciled"):
                closed[e.kind] += 1
            elif e.kind == "bound":
                own.add(str(e.name))
    return own, closed


def _timeout(pods: int) -> float:
    return max(120.0, pods / 5)


# -- scenarios -------------------------------------------------------------------------------


def kill_leader(run: Run, result: Result) -> None:
    """Both replicas start together; the one that takes the lease is killed."""
    replicas = [run.replica("replica-1"), run.replica("replica-2")]
    run.wait("one replica leads", lambda: any(r.leading() for r in replicas), 60)
    leader, standby = sorted(replicas, key=lambda r: not r.leading())
    run.wait(f"{standby.name} stands by", lambda: standby.latest(MASTER) == 0.0, 60)
    run.wait_bound(max(5, run.pods // 10), _timeout(run.pods))
    master_before = standby.latest(MASTER)
    killed = leader.kill()
    run.wait(f"{standby.name} leads", standby.leading, 60)
    lease = first_at(changes(standby.samples, MASTER), 1.0, killed)
    run.wait_bound(run.pods, _timeout(run.pods))
    binds = run.binds()
    own, closed = new_leaders_own_binds(run.url, standby.instance)
    figures = failover(killed, binds, own)
    result.timeline.update(
        {
            "both replicas started": 0.0,
            f"{leader.name} leads": first_at(changes(leader.samples, MASTER), 1.0, 0.0),
            "last bind by the old leader (or reconciled from it)": figures.last_before,
            f"kill -9 {leader.name}": killed,
            f"{standby.name} {MASTER} 0 -> 1": lease,
            f"first bind by {standby.name}": figures.first_after,
            "last pod bound": max(binds.values()),
        }
    )
    result.figures.update(
        {
            "bound before the kill": sum(t <= killed for t in binds.values()),
            "failover, kill -> first bind after (s)": figures.from_kill,
            "failover, last bind before -> first bind after (s)": figures.from_last_bind,
            "kill -> lease taken (s)": None if lease is None else lease - killed,
            "new leader's master status before / after": (
                f"{master_before} / {standby.latest(MASTER)}"
            ),
            "new leader's POSTs answered 409": standby.latest("rest:409") or 0.0,
            "open reservations the new leader closed (bound / unreserved)": (
                f"{closed['bound']} / {closed['unreserved']}"
            ),
        }
    )


def pg_restart(run: Run, result: Result) -> None:
    """Restarts the machine's own PostgreSQL cluster: --server must be on it."""
    if make_url(run.url).host not in (None, "", "127.0.0.1", "localhost", "::1"):
        raise ValueError("pg-restart restarts the local PostgreSQL; --server is elsewhere")
    replica = run.replica("replica-1")
    run.wait("replica-1 leads", replica.leading, 60)
    run.feed()
    run.wait_bound(run.pods // 3, _timeout(run.pods))
    started = run.now()
    restart_postgres(run.down)
    done = run.now()
    run.wait_bound(run.pods, _timeout(run.pods))
    with postgres_log().open(errors="replace") as log:
        down, up = postgres_down(log, run.wall + started)
    result.timeline["PostgreSQL log: shutdown request"] = None if down is None else down - run.wall
    result.timeline["PostgreSQL log: ready to accept connections"] = (
        None if up is None else up - run.wall
    )
    _outage_figures(run, replica, result, "pg_ctlcluster", started, done)
    result.figures[f"{APPEND_FAILURES} during"] = delta(
        replica.samples, APPEND_FAILURES, started, run.now()
    )
    unreachable = changes(replica.samples, UNREACHABLE)
    went = first_at(unreachable, 1.0, started)
    result.timeline[f"{UNREACHABLE} 1"] = went
    result.timeline[f"{UNREACHABLE} 0 again"] = first_at(unreachable, 0.0, went or started)


def apiserver_restart(run: Run, result: Result) -> None:
    replica = run.replica("replica-1")
    run.wait("replica-1 leads", replica.leading, 60)
    run.wait_bound(run.pods // 3, _timeout(run.pods))
    started = run.now()
    stopped = run.cp.restart_apiserver(run.down, kill=run.kill_apiserver) - run.clock
    ready = run.now()
    result.timeline["kube-apiserver exited"] = stopped
    first = replica.proc
    _supervise(run, replica, result)
    how = "SIGKILL" if run.kill_apiserver else "SIGTERM"
    _outage_figures(run, replica, result, f"kube-apiserver restart ({how})", started, ready)
    lost = lease_lost_at(replica.log, run.wall)
    result.timeline["replica-1 logs `leaderelection lost`"] = lost
    if lost is not None:
        result.figures["`reserved` decisions logged after the lease was lost"] = _reserved_after(
            run.url, f"{socket.gethostname()}-{first.pid}", run.wall + lost
        )
    end = run.now()
    codes = sorted({k for s in replica.samples for k in s.values if k.startswith("rest:")})
    for code in codes:
        if not code.startswith("rest:2"):
            result.figures[f"{REST}{{code={code[5:]!r}}} during"] = delta(
                replica.samples, code, started, end
            )


def _supervise(run: Run, replica: Replica, result: Result) -> None:
    """Wait for every pod bound; when the replica exits, start it again (as a kubelet would,
    without the crash-loop back-off) and put its exit in the timeline."""
    deadline = time.monotonic() + _timeout(run.pods)
    while len(run.watch.bound) < run.pods:
        status = replica.proc.poll()
        if status is not None:
            result.timeline[f"replica-1 exited with status {status}; started again"] = run.now()
            replica.respawn()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(run.watch.bound)} of {run.pods} bound")
        time.sleep(0.1)


def lease_lost_at(log: Path, wall: float) -> float | None:
    """When the replica's JSON log first says `leaderelection lost`, on the run's clock."""
    with log.open(errors="replace") as lines:
        for line in lines:
            if '"leaderelection lost"' in line:
                with contextlib.suppress(ValueError, KeyError):
                    stamp = json.loads(line)["timestamp"].replace("Z", "+00:00")
                    return datetime.fromisoformat(stamp).timestamp() - wall
    return None


def logged_between(url: str, start: float, end: float) -> dict[str, int]:
    """Decisions by kind whose batch was recorded between two Unix times."""
    kinds = ["reserved", "bound", "bind_failed", "unreserved", "unschedulable"]
    with EventStore.connect(url) as store:
        found = Counter(
            e.kind for e in store.read(kinds=kinds) if start <= e.recorded_at.timestamp() <= end
        )
    return {kind: found[kind] for kind in kinds}


def _reserved_after(url: str, instance: str, since: float) -> int:
    with EventStore.connect(url) as store:
        return sum(
            e.instance == instance and e.recorded_at.timestamp() > since
            for e in store.read(kinds=["reserved"])
        )


def _outage_figures(
    run: Run, replica: Replica, result: Result, what: str, started: float, done: float
) -> None:
    binds = run.binds()
    readyz = changes(replica.samples, "readyz")
    not_ready = next((t for t, v in readyz if v != 200 and t >= started), None)
    after = [t for t in binds.values() if t >= done]
    result.figures["pods bound before / during / after"] = (
        f"{sum(t < started for t in binds.values())} / "
        f"{sum(started <= t < done for t in binds.values())} / {len(after)}"
    )
    gap_start, gap = longest_gap(binds.values())
    result.timeline.update(
        {
            "replica-1 started": 0.0,
            "replica-1 leads": first_at(changes(replica.samples, MASTER), 1.0, 0.0),
            f"{what} begins": started,
            f"{what} done": done,
            "/readyz not 200": not_ready,
            "/readyz 200 again": first_at(readyz, 200.0, not_ready or started),
            "last bind before": max((t for t in binds.values() if t < started), default=None),
            "first bind after": min(after, default=None),
            "last pod bound": max(binds.values()),
        }
    )
    result.figures["decisions logged during"] = logged_between(
        run.url, run.wall + started, run.wall + done
    )
    result.figures.update(
        {
            "/readyz answers seen": [(round(t, 2), int(v)) for t, v in readyz],
            "recovery: done -> first bind after (s)": min(after) - done if after else None,
            "longest pause between binds (s)": gap,
            "  it began at": gap_start,
        }
    )


RUNNERS: dict[str, Callable[[Run, Result], None]] = {
    "kill-leader": kill_leader,
    "pg-restart": pg_restart,
    "apiserver-restart": apiserver_restart,
}


def measure(scenario: str, settings: Settings) -> Result:
    result = Result(scenario, settings.nodes, settings.pods)
    with contextlib.ExitStack() as stack:
        run = Run(stack, settings, upfront=scenario != "pg-restart")
        try:
            RUNNERS[scenario](run, result)
        except Exception as e:
            logs = "\n".join(_tail(r.log) for r in run.replicas)
            result.error = f"{type(e).__name__}: {e}\n{logs}"
        for replica in run.replicas:
            replica.stop()
        result.checks = run.check()
        if settings.keep_logs is not None:
            kept = settings.keep_logs / scenario
            kept.mkdir(parents=True, exist_ok=True)
            for log in run.cp.workdir.glob("*.log"):
                shutil.copy(log, kept / log.name)
    return result


def _tail(path: Path, lines: int = 10) -> str:
    try:
        return f"--- {path.name} ---\n" + "\n".join(path.read_text().splitlines()[-lines:])
    except OSError:
        return ""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.failover", description=__doc__)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        help=f"PostgreSQL to make databases on ({DEFAULT_SERVER})",
    )
    parser.add_argument("--qps", type=float, help="clientConnection.qps (default: eventsched's)")
    parser.add_argument("--burst", type=int, help="clientConnection.burst (default: eventsched's)")
    parser.add_argument(
        "--down",
        type=float,
        default=0.0,
        help="restart scenarios: keep the server stopped this many seconds (default 0: restart)",
    )
    parser.add_argument(
        "--keep-logs", type=Path, metavar="DIR", help="copy the logs to DIR/SCENARIO"
    )
    parser.add_argument(
        "--rate", type=float, default=20.0, help="pg-restart: pods created a second (default 20)"
    )
    parser.add_argument(
        "--kill-apiserver", action="store_true", help="apiserver-restart: SIGKILL, not SIGTERM"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per scenario")
    args = parser.parse_args(argv)
    settings = Settings(
        args.nodes,
        args.pods,
        args.server,
        args.qps,
        args.burst,
        args.down,
        args.keep_logs,
        args.rate,
        args.kill_apiserver,
    )
    configure_logging("console", "warning")  # this process's own (the log's reads): stderr
    # SIGTERM (a `timeout`, a CI's cancel) unwinds like Ctrl-C: the control plane, the
    # replicas and the database are stopped and dropped, not left behind.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    scenarios = SCENARIOS if args.scenario == "all" else (args.scenario,)
    ok = True
    for scenario in scenarios:
        result = measure(scenario, settings)
        ok = ok and result.ok
        if args.json:
            print(json.dumps(result.to_dict()), flush=True)
        else:
            print("\n".join(result.lines()), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
