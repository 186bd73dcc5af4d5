"""deploy/monitoring/: the Grafana dashboard and the alerts, against a real `eventsched run`.

One `eventsched run` process (leader election on, SQLite log) schedules on an API server
(the real kube-apiserver when EVENTSCHED_KUBE_BIN is set, else the emulator): five pods
bound, one that fits no node. Then:

- every metric name in the dashboard's queries (panels and template variables) and in the
  alert expressions is a series its /metrics exports (`up` excepted: Prometheus makes it);
- `promtool check rules` accepts the rule file, the PrometheusRule's groups and the chart's
  rendering of them, which are the same groups;
- Debian's real `prometheus` scrapes that process (and a target that is down) with the
  rules loaded, their `for` shortened: EventschedPodsPendingTooLong and
  EventschedInstanceDown fire, EventschedDown, EventschedNoLeader and
  EventschedLogAppendFailing and EventschedLogChainBroken stay inactive, every rule
  evaluates without error, and every
  panel's query returns data;
- the chart renders the dashboard ConfigMap and the PrometheusRule only when asked, and
  then exactly as `kubectl kustomize deploy/monitoring` does.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from eventsched.events import upgrade
from tests.deploy.test_chart import (
    CHART,
    CRD_PATH,
    PROMETHEUS_RULE_CRD,
    DryRun,
    kustomize,
    needs_real_server,
    render,
)
from tests.deploy.test_manifests import DEPLOY, NAMESPACE
from tests.kube.realserver import (
    LEASE_NAMESPACE,
    EmulatedApiServer,
    KubeServer,
    RealApiServer,
    real_binaries,
)
from tests.kube.test_kube_runner import free_port, get, start_process
from tests.kube.test_kube_scheduler import node, pod
from tests.promharness import http_get
from tests.waiting import wait_for

MONITORING = DEPLOY / "monitoring"
DASHBOARD = MONITORING / "eventsched-dashboard.json"
RULES = MONITORING / "eventsched.rules.yaml"
PROMETHEUS_RULE = MONITORING / "prometheusrule.yaml"
#: The job the rules select (a ServiceMonitor on the Service eventsched-metrics gives it).
JOB = "eventsched-metrics"
BOUND = [f"w-{i}" for i in range(5)]
TOO_BIG = "too-big"

T = TypeVar("T")


# -- PromQL: the metric names an expression reads ------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
  | (?P<matchers>\{(?:"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|[^}"'])*\})
  | (?P<range>\[[^\]]*\])
  | (?P<duration>(?:\d+(?:ms|[smhdwy]))+)
  | (?P<number>(?:0x[0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<space>\s+)
  | (?P<other>.)
    """,
    re.VERBOSE,
)
#: Keywords that take a parenthesized list of label names.
_LABEL_LISTS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
_KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2"}
#: Grafana's template variables, written where PromQL has a duration or a matcher value.
_GRAFANA_VARIABLE = re.compile(r"\$(?:\{[^}]*\}|\w+)")


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: identifiers that are not functions
    or aggregations (followed by `(`), keywords, label names (inside `{...}` or after
    `by`/`without`/`on`/`ignoring`/`group_left`/`group_right`), numbers or durations."""
    tokens = [
        (m.lastgroup, m.group())
        for m in _TOKEN.finditer(_GRAFANA_VARIABLE.sub("1", expr))
        if m.lastgroup != "space"
    ]
    names: set[str] = set()
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        following = tokens[i + 1][1] if i + 1 < len(tokens) else ""
        if kind == "ident" and text.lower() in _LABEL_LISTS:
            i += 1
            if following == "(":  # skip the label list
                while i < len(tokens) and tokens[i][1] != ")":
                    i += 1
        elif (
            kind == "ident"
            and following != "("
            and following.lower() not in ("by", "without")  # `sum by (...) (...)`
            and text.lower() not in _KEYWORDS
        ):
            names.add(text)
        elif kind == "ident" and text == "label_values" and following == "(":
            # Grafana's label_values([selector,] label): its last argument is a label name.
            depth, j, last_comma = 0, i + 1, i + 1
            while j < len(tokens):
                depth += {"(": 1, ")": -1}.get(tokens[j][1], 0)
                if depth == 1 and tokens[j][1] == ",":
                    last_comma = j
                if depth == 0:
                    break
                j += 1
            tokens[last_comma + 1] = ("label", tokens[last_comma + 1][1])
        i += 1
    return names


def test_metric_names_skips_functions_labels_and_durations() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (instance, le) (rate(a_bucket{job=~"$job", '
        'verb="POST"}[$__rate_interval]))) > 1e3 or on (job) sum(b_total offset 5m) '
        "without (kind) and absent(up{x='}'} == 1) / ignoring(code) group_left(le) c"
    )
    assert metric_names(expr) == {"a_bucket", "b_total", "up", "c"}
    assert metric_names('label_values(d{job=~"$job"}, instance)') == {"d"}
    assert metric_names("label_values(job)") == set()


# -- what the files hold ------------------------------------------------------------------


def dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text())


def panels(board: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in board["panels"]:
        yield panel
        yield from panel.get("panels", [])


def panel_queries(board: dict[str, Any]) -> list[tuple[str, str]]:
    """(panel title, PromQL) of every query of every panel."""
    return [
        (panel["title"], target["expr"])
        for panel in panels(board)
        for target in panel.get("targets", [])
    ]


def variable_queries(board: dict[str, Any]) -> list[tuple[str, str]]:
    found = []
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            found.append((variable["name"], query["query"] if isinstance(query, dict) else query))
    return found


def rule_groups(path: Path = RULES) -> list[dict[str, Any]]:
    return list(yaml.safe_load(path.read_text())["groups"])


def alerts(groups: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {rule["alert"]: rule for group in groups for rule in group["rules"] if "alert" in rule}


def test_the_dashboard_is_a_grafana_dashboard_with_its_variables() -> None:
    board = dashboard()
    assert 36 <= board["schemaVersion"] <= 41
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    assert {"job", "instance"} <= set(variables)
    ids = [p["id"] for p in panels(board)]
    assert len(ids) == len(set(ids))
    for panel in panels(board):
        for target in panel.get("targets", []):
            assert target["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            # every query is narrowed to the chosen job and instances
            for name in metric_names(target["expr"]):
                assert re.search(
                    rf'{name}\{{job=~"\$job", instance=~"\$instance"', target["expr"]
                ), (panel["title"], target["expr"])
    titles = {p["title"] for p in panels(board)}
    for title in (
        "Up",
        "Scheduling rate",
        "Scheduling latency 99th quantile",
        "Kube API request rate",
        "POST request latency 99th quantile",
        "GET request latency 99th quantile",
        "Memory",
        "CPU usage",
        "Pending pods by queue",
        "Unschedulable pods by plugin",
        "Preemptions",
        "Queue incoming pods",
        "Log append latency",
        "Log lag",
        "Log growth",
        "Log events by kind",
        "Log append failures",
        "Event log database",
        "Leaders",
    ):
        assert title in titles


def test_the_rule_files_hold_the_same_groups() -> None:
    """deploy/monitoring's rule file, its PrometheusRule and the chart's copies agree."""
    prometheus_rule = yaml.safe_load(PROMETHEUS_RULE.read_text())
    assert prometheus_rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert prometheus_rule["kind"] == "PrometheusRule"
    assert prometheus_rule["spec"] == {"groups": rule_groups()}
    assert (CHART / "files" / RULES.name).read_text() == RULES.read_text()
    assert (CHART / "files" / DASHBOARD.name).read_text() == DASHBOARD.read_text()
    assert set(alerts(rule_groups())) == {
        "EventschedDown",
        "EventschedInstanceDown",
        "EventschedNoLeader",
        "EventschedPodsPendingTooLong",
        "EventschedLogAppendFailing",
        "EventschedLogLagging",
        "EventschedLogChainBroken",
    }
    for rule in alerts(rule_groups()).values():
        assert f'job="{JOB}"' in rule["expr"], rule["alert"]
        assert rule["labels"]["severity"] in ("critical", "warning")
        assert {"summary", "description"} <= set(rule["annotations"])


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("promtool")
    assert binary, "promtool is needed: apt-get install prometheus (it ships promtool)"
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=60)


def test_promtool_checks_the_rules(tmp_path: Path) -> None:
    sources = {
        "rule-file.yaml": RULES.read_text(),
        "prometheusrule-spec.yaml": yaml.safe_dump(
            yaml.safe_load(PROMETHEUS_RULE.read_text())["spec"]
        ),
    }
    chart_rule = next(
        d
        for d in render({"metrics": {"prometheusRule": {"enabled": True}}}, name="prod")
        if d["kind"] == "PrometheusRule"
    )
    sources["chart-spec.yaml"] = yaml.safe_dump(chart_rule["spec"])
    assert 'job="prod-eventsched-metrics"' in sources["chart-spec.yaml"]
    assert f'job="{JOB}"' not in sources["chart-spec.yaml"]
    for name, text in sources.items():
        (tmp_path / name).write_text(text)
        out = promtool("check", "rules", str(tmp_path / name))
        assert out.returncode == 0, (name, out.stdout, out.stderr)
        assert f"SUCCESS: {len(alerts(rule_groups()))} rules found" in out.stdout, out.stdout
    # ... and it does refuse a broken expression, so the checks above mean something.
    broken = rule_groups()
    broken[0]["rules"][0]["expr"] = "sum by (job (up)"
    (tmp_path / "broken.yaml").write_text(yaml.safe_dump({"groups": broken}))
    assert promtool("check", "rules", str(tmp_path / "broken.yaml")).returncode != 0


# -- the chart --------------------------------------------------------------------------------


def test_the_chart_renders_dashboard_and_rule_only_when_asked_as_kustomize_does() -> None:
    def monitoring_objects(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(
            (
                d
                for d in docs
                if d["kind"] == "PrometheusRule"
                or d["metadata"].get("labels", {}).get("grafana_dashboard") == "1"
            ),
            key=lambda d: (d["kind"], d["metadata"]["name"]),
        )

    assert monitoring_objects(render()) == []
    on = render({"metrics": {"dashboard": {"enabled": True}, "prometheusRule": {"enabled": True}}})
    built = sorted(kustomize(MONITORING), key=lambda d: (d["kind"], d["metadata"]["name"]))
    assert [(d["kind"], d["metadata"]["name"]) for d in built] == [
        ("ConfigMap", "eventsched-dashboard"),
        ("PrometheusRule", "eventsched"),
    ]
    assert monitoring_objects(on) == built
    assert json.loads(built[0]["data"]["eventsched.json"]) == dashboard()
    for doc in built:
        assert doc["metadata"]["namespace"] == NAMESPACE
    # deploy/ does not include deploy/monitoring (its CRD may be missing from the cluster).
    assert not [d for d in kustomize(DEPLOY) if d["kind"] == "PrometheusRule"]


@needs_real_server
def test_kustomize_build_is_accepted_by_the_real_api_server(
    real_apiserver: RealApiServer,
) -> None:
    """The ConfigMap, and the PrometheusRule against a CRD typed as prometheus-operator's
    for the fields the rules use (strict field validation refuses any other)."""
    status, body = real_apiserver.request("POST", CRD_PATH, PROMETHEUS_RULE_CRD)
    assert status in (201, 409), body
    name = PROMETHEUS_RULE_CRD["metadata"]["name"]

    def established() -> bool:
        conditions = (real_apiserver.call("GET", f"{CRD_PATH}/{name}").get("status") or {}).get(
            "conditions"
        ) or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    real_apiserver.wait_for(established, timeout=30)
    real_apiserver.ensure_namespace(NAMESPACE)
    dry = DryRun(real_apiserver)
    for doc in kustomize(MONITORING):
        status, body = dry.apply(doc)
        assert status in (200, 201), (doc["kind"], body)
    misspelt = next(d for d in kustomize(MONITORING) if d["kind"] == "PrometheusRule")
    misspelt["spec"]["groups"][0]["rules"][0]["fr"] = "5m"
    status, body = dry.apply(misspelt)
    assert status >= 400 and "fr" in body["message"], body


# -- a running eventsched -------------------------------------------------------------------


@dataclass
class Scheduler:
    server: KubeServer
    port: int
    process: subprocess.Popen[str]
    log: Path

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def metrics(self) -> str:
        code, text = get(self.port, "/metrics")
        assert code == 200, text
        return text


def _bound(server: KubeServer) -> set[str]:
    return {
        p["metadata"]["name"]
        for p in server.list("pods", "default")
        if (p.get("spec") or {}).get("nodeName")
    }


@pytest.fixture(scope="module")
def scheduler(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Scheduler]:
    """`eventsched run` with five pods bound and one unschedulable (it needs 64 CPUs)."""
    home = tmp_path_factory.mktemp("eventsched-run")
    server: KubeServer
    emulator: EmulatedApiServer | None = None
    if real_binaries() is not None:
        server = request.getfixturevalue("real_apiserver")
        server.reset()
    else:
        server = emulator = EmulatedApiServer().start()
    db_url = f"sqlite:///{home / 'events.db'}"
    upgrade(db_url)
    config = home / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "leaderElection: {leaderElect: true, leaseDuration: 3s, renewDeadline: 2s, "
        f"retryPeriod: 1s, resourceNamespace: {LEASE_NAMESPACE}}}\n"
        "profiles: [{schedulerName: eventsched}]\n"
    )
    for name in ("node-a", "node-b"):
        server.create(node(name, cpu="4"))
    port = free_port()
    log = home / "run.log"
    process = start_process(db_url, server.kubeconfig(home / "kubeconfig"), port, config, log)
    running = Scheduler(server, port, process, log)
    try:
        wait_for("/readyz", lambda: get(port, "/readyz")[0] == 200, timeout=40)
        for name in BOUND:
            server.create(pod(name, cpu="100m"))
        server.create(pod(TOO_BIG, cpu="64"))
        wait_for("the five pods bound", lambda: _bound(server) >= set(BOUND), timeout=30)
        wait_for(
            "the too-big pod in the unschedulable queue",
            lambda: 'scheduler_pending_pods{queue="unschedulable"} 1.0' in running.metrics(),
            timeout=30,
        )
        yield running
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(20)
        if emulator is not None:
            emulator.stop()
            assert not emulator.internal_errors, "\n".join(emulator.internal_errors)
        else:
            server.reset()
    output = log.read_text(errors="replace")
    assert "Traceback" not in output, output[-5000:]


def exported_series(text: str) -> set[str]:
    """The sample names of a scrape: `x_bucket`, `x_count`, `x_sum` for a histogram."""
    return {
        sample.name for family in text_string_to_metric_families(text) for sample in family.samples
    }


def test_every_dashboard_and_alert_query_names_an_exported_metric(scheduler: Scheduler) -> None:
    exported = exported_series(scheduler.metrics()) | {"up"}  # `up` is Prometheus' own
    board = dashboard()
    queries = (
        panel_queries(board)
        + variable_queries(board)
        + [(name, rule["expr"]) for name, rule in alerts(rule_groups()).items()]
    )
    read: set[str] = set()
    missing = []
    for where, expr in queries:
        names = metric_names(expr)
        assert names, (where, expr)
        read |= names
        missing += [(where, name) for name in sorted(names - exported)]
    assert not missing, f"not exported by eventsched run: {missing}"
    # The tokenizer found the families the panels are about (and no label names).
    assert {
        "scheduler_schedule_attempts_total",
        "scheduler_pod_scheduling_sli_duration_seconds_bucket",
        "scheduler_scheduling_algorithm_duration_seconds_bucket",
        "scheduler_scheduling_attempt_duration_seconds_bucket",
        "rest_client_requests_total",
        "rest_client_request_duration_seconds_bucket",
        "process_resident_memory_bytes",
        "process_cpu_seconds_total",
        "scheduler_pending_pods",
        "scheduler_unschedulable_pods",
        "scheduler_preemption_attempts_total",
        "scheduler_preemption_victims_sum",
        "scheduler_queue_incoming_pods_total",
        "eventsched_log_append_duration_seconds_bucket",
        "eventsched_log_lag_seconds_bucket",
        "eventsched_log_bytes_total",
        "eventsched_log_events_total",
        "eventsched_log_append_failures_total",
        "eventsched_log_unreachable",
        "leader_election_master_status",
        "up",
    } <= read
    assert not read & {"job", "instance", "le", "queue", "result", "code", "verb", "kind"}


# -- a real Prometheus scraping it, with the rules loaded ------------------------------------


@dataclass
class Prometheus:
    url: str

    def api(self, path: str, **params: str) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        status, body = http_get(f"{self.url}/api/v1/{path}{query}", timeout=5)
        assert status == 200, body
        answer = json.loads(body)
        assert answer["status"] == "success", answer
        return answer["data"]

    def rules(self) -> dict[str, dict[str, Any]]:
        return {
            rule["name"]: rule for group in self.api("rules")["groups"] for rule in group["rules"]
        }


def shortened(groups: list[dict[str, Any]], period: str) -> list[dict[str, Any]]:
    """The rules with every `for` set to `period`, so that an alert fires within the test."""
    copied = json.loads(json.dumps(groups))
    for group in copied:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = period
    return copied


@pytest.fixture(scope="module")
def prometheus(
    scheduler: Scheduler, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Prometheus]:
    """Debian's prometheus on a free port, scraping the scheduler and a target nobody
    listens on as job eventsched-metrics every second, the rules evaluated every second."""
    tmp_path = tmp_path_factory.mktemp("prometheus")
    binary = shutil.which("prometheus")
    assert binary, "prometheus is needed: apt-get install prometheus"
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"groups": shortened(rule_groups(), "2s")}))
    config = tmp_path / "prometheus.yml"
    config.write_text(
        yaml.safe_dump(
            {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [str(rules)],
                "scrape_configs": [
                    {
                        "job_name": JOB,
                        "scrape_timeout": "1s",
                        "static_configs": [
                            {"targets": [scheduler.target, f"127.0.0.1:{free_port()}"]}
                        ],
                    }
                ],
            }
        )
    )
    port = free_port()
    log = tmp_path / "prometheus.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    prom = Prometheus(f"http://127.0.0.1:{port}")

    def ready() -> bool:
        assert process.poll() is None, log.read_text(errors="replace")[-3000:]
        try:
            return http_get(f"{prom.url}/-/ready", timeout=1)[0] == 200
        except OSError:
            return False

    try:
        wait_for("prometheus ready", ready, timeout=30)
        yield prom
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_alerts_fire_and_stay_inactive_on_a_real_scrape(
    scheduler: Scheduler, prometheus: Prometheus
) -> None:
    should_fire = {"EventschedPodsPendingTooLong", "EventschedInstanceDown"}

    def fired() -> dict[str, dict[str, Any]] | None:
        rules = prometheus.rules()
        firing = {name for name, rule in rules.items() if rule["state"] == "firing"}
        return rules if should_fire <= firing else None

    rules = wait_for(f"{sorted(should_fire)} firing", fired, timeout=40)
    # The process is up, leads its lease and appends: these are evaluated and quiet.
    inactive = (
        "EventschedDown",
        "EventschedNoLeader",
        "EventschedLogAppendFailing",
        "EventschedLogChainBroken",
    )
    for name in inactive:
        assert rules[name]["state"] == "inactive", rules[name]
        assert rules[name]["lastEvaluation"] > "2000", rules[name]
    assert set(rules) == set(alerts(rule_groups()))
    for name, rule in rules.items():
        assert rule["health"] == "ok", (name, rule.get("lastError"))
    (pending,) = rules["EventschedPodsPendingTooLong"]["alerts"]
    assert pending["labels"]["instance"] == scheduler.target
    assert float(pending["value"]) == 1
    (down,) = rules["EventschedInstanceDown"]["alerts"]
    assert down["labels"]["instance"] != scheduler.target


def grafana_expr(expr: str, instance: str) -> str:
    """A panel's query as Grafana sends it with job and instance chosen."""
    return (
        expr.replace("$job", JOB)
        .replace("$instance", instance)  # its dots match themselves
        .replace("$__rate_interval", "15s")
    )


def test_every_panel_has_data_on_a_real_scrape(
    scheduler: Scheduler, prometheus: Prometheus
) -> None:
    """What the issue's "done when" asks: a Prometheus scraping `eventsched run` fills
    every panel of the dashboard (each query returns at least one series)."""
    board = dashboard()
    instance = scheduler.target
    # The variables offer the job and the instance (once the first scrape is in).
    for name, query in variable_queries(board):
        ((selector, label),) = re.findall(r"label_values\((.*),\s*(\w+)\)", query)
        wanted = {"job": JOB, "instance": instance}[name]

        def offered(selector: str = selector, label: str = label, wanted: str = wanted) -> bool:
            match = grafana_expr(selector, instance)
            return wanted in {s.get(label) for s in prometheus.api("series", **{"match[]": match})}

        wait_for(f"variable {name} to offer {wanted}", offered, timeout=30)

    queries = panel_queries(board)

    def empty() -> list[tuple[str, str]]:
        return [
            (title, expr)
            for title, expr in queries
            if not prometheus.api("query", query=grafana_expr(expr, instance))["result"]
        ]

    # rate() needs two scrapes in its window: wait until every query has an answer.
    last: list[list[tuple[str, str]]] = []

    def all_filled() -> bool:
        last.append(empty())
        return not last[-1]

    try:
        wait_for("every panel query to return data", all_filled, timeout=30)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; still empty: {last[-1]}") from None
