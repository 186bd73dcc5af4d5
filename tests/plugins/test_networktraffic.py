"""NetworkTraffic against a real Prometheus (Debian's `prometheus`) scraping an exporter we serve.

The exporter exposes node_exporter-style series for three nodes whose
`node_network_receive_bytes_total` counters grow at known, different rates,
plus `node_uname_info` to join them to node names. Prometheus scrapes it every
second; the plugin's default query then has to find those rates. Fake HTTP
servers stand in for a Prometheus that errs, answers oddly or is too slow.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from structlog.testing import capture_logs

from eventsched.framework import (
    Code,
    CycleState,
    Framework,
    Handle,
    ListSink,
    PluginArgsError,
    PluginRef,
    Profile,
)
from eventsched.model import NodeTable
from eventsched.plugins import full_registry
from eventsched.plugins.networktraffic import NetworkTraffic
from tests.plugins.conftest import make_node, make_pod
from tests.promharness import (
    ETH1_FLOOD,
    RATES,
    WINDOW,
    PrometheusNotReady,
    RealPrometheus,
    free_port,
    running_prometheus,
    serve,
)


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealPrometheus]:
    try:
        with running_prometheus(tmp_path_factory.mktemp("prometheus")) as prom:
            yield prom
    except PrometheusNotReady as err:
        pytest.fail(str(err))


# -- helpers -------------------------------------------------------------------


class FakeClock:
    """Monotonic and wall clock a test moves by hand, to cross cache windows without sleeping."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def wall(self) -> float:
        return 1_700_000_000.0 + self.now


def table_of(*names: str) -> NodeTable:
    return NodeTable(make_node(n) for n in names)


def make_plugin(
    args: dict[str, Any], table: NodeTable, clock: FakeClock | None = None
) -> tuple[NetworkTraffic, Handle, ListSink]:
    clock = clock or FakeClock()
    handle = Handle(table, clock=clock.wall, monotonic=clock.monotonic)
    sink = ListSink()  # the tests give it to the CycleStates whose records they read
    plugin = full_registry().factory("NetworkTraffic")(args, handle)
    assert isinstance(plugin, NetworkTraffic)
    return plugin, handle, sink


def attempt(
    plugin: NetworkTraffic, table: NodeTable, sink: ListSink | None = None
) -> tuple[Code, list[int], list[int]]:
    """PreScore, then (unless it skipped) Score and NormalizeScore over every node."""
    state = CycleState(sink=sink)
    rows = np.arange(len(table))
    status = plugin.pre_score(state, make_pod(), table, rows)
    if status is not None and status.is_skip:
        return Code.SKIP, [], []
    assert status is None, status
    raw = plugin.score_batch(state, make_pod(), table, rows)
    normalized = plugin.normalize_score(state, make_pod(), raw.copy(), rows)
    return Code.SUCCESS, [int(x) for x in raw], [int(x) for x in normalized]


def recorded(sink: ListSink) -> list[dict[str, Any]]:
    inputs = sink.of("input_recorded")
    assert all(d.plugin == "NetworkTraffic" and d.data["key"] == "traffic" for d in inputs)
    return [dict(d.data["value"]) for d in inputs]


# -- against the real Prometheus ------------------------------------------------


def test_scores_order_nodes_by_received_traffic(prometheus: RealPrometheus) -> None:
    table = table_of("node-a", "node-b", "node-c", "node-unmonitored")
    plugin, _, _ = make_plugin({"address": prometheus.url, "timeRange": WINDOW}, table)
    code, raw, normalized = attempt(plugin, table)
    assert code == Code.SUCCESS
    by_node = dict(zip(table.names, raw, strict=True))
    for node, rate in RATES.items():  # eth1, lo and the unjoined machine do not count
        assert by_node[node] == pytest.approx(rate, rel=0.1), (node, by_node)
    # A node without a sample counts as the busiest measured node.
    assert by_node["node-unmonitored"] == by_node["node-b"]
    score = dict(zip(table.names, normalized, strict=True))
    assert score["node-a"] == 100  # quietest
    assert score["node-b"] == 0  # busiest
    assert score["node-unmonitored"] == 0
    # min-max: node-c sits where its rate puts it between a and b (about 90).
    expected_c = (
        (by_node["node-b"] - by_node["node-c"]) * 100 // (by_node["node-b"] - by_node["node-a"])
    )
    assert score["node-c"] == expected_c and 85 <= expected_c <= 95


def test_device_name_picks_the_interface(prometheus: RealPrometheus) -> None:
    table = table_of("node-a", "node-b", "node-c")
    plugin, _, _ = make_plugin(
        {"address": prometheus.url, "timeRange": WINDOW, "deviceName": "eth1"}, table
    )
    code, raw, _ = attempt(plugin, table)
    assert code == Code.SUCCESS
    # Only node-a has eth1; b and c have no sample, so they count as node-a's flood.
    assert raw[0] == pytest.approx(ETH1_FLOOD, rel=0.1)
    assert raw[1] == raw[2] == raw[0]


def test_one_query_per_cache_window_and_each_fetch_recorded(prometheus: RealPrometheus) -> None:
    table = table_of("node-a", "node-b", "node-c")
    clock = FakeClock()
    plugin, _, sink = make_plugin(
        {"address": prometheus.url, "timeRange": WINDOW, "cacheSeconds": 30}, table, clock
    )
    before = prometheus.queries_served()
    first = [attempt(plugin, table, sink) for _ in range(5)]
    clock.now += 29.9
    first.append(attempt(plugin, table, sink))
    assert prometheus.queries_served() - before == 1
    assert all(result == first[0] for result in first)
    assert len(recorded(sink)) == 1

    clock.now += 0.2  # the window has passed: the next attempt asks again, once
    for _ in range(3):
        assert attempt(plugin, table, sink)[0] == Code.SUCCESS
    assert prometheus.queries_served() - before == 2
    values = recorded(sink)
    assert len(values) == 2
    assert values[1]["fetchedAt"] == clock.wall()
    assert values[1]["query"] == (
        "sum by (nodename) (rate(node_network_receive_bytes_total"
        '{device="eth0"}[5s]) * on (instance) group_left (nodename) node_uname_info)'
    )
    assert set(values[1]["samples"]) == set(RATES)
    assert "error" not in values[1]


def test_replay_uses_the_recorded_samples_and_never_asks_prometheus(
    prometheus: RealPrometheus,
) -> None:
    table = table_of("node-a", "node-b", "node-c")
    live, _, sink = make_plugin({"address": prometheus.url, "timeRange": WINDOW}, table)
    live_result = attempt(live, table, sink)
    [value] = recorded(sink)

    before = prometheus.queries_served()
    replay, handle, replay_sink = make_plugin(
        {"address": prometheus.url, "timeRange": WINDOW}, table
    )
    handle.replay_inputs = {("NetworkTraffic", "traffic"): value}
    for _ in range(3):
        assert attempt(replay, table) == live_result
    assert prometheus.queries_served() == before
    assert replay_sink.of("input_recorded") == []  # replay reads the log, it does not add to it


def test_replay_of_a_failed_fetch_skips_and_of_no_record_skips() -> None:
    table = table_of("node-a", "node-b")
    # A port nothing listens on: if replay tried to connect it would still Skip, so also
    # check the value it replays decides: samples without error are used.
    plugin, handle, _ = make_plugin({"address": f"http://127.0.0.1:{free_port()}"}, table)
    handle.replay_inputs = {}
    assert attempt(plugin, table)[0] == Code.SKIP
    handle.replay_inputs = {
        ("NetworkTraffic", "traffic"): {"query": "q", "samples": {}, "error": "refused"}
    }
    assert attempt(plugin, table)[0] == Code.SKIP
    handle.replay_inputs = {
        ("NetworkTraffic", "traffic"): {
            "query": "q",
            "samples": {"node-a": 5.0, "node-b": "junk", 3: 1.0, "node-x": float("nan")},
        }
    }
    code, raw, normalized = attempt(plugin, table)
    assert (code, raw, normalized) == (Code.SUCCESS, [5, 5], [100, 100])


def test_runtime_leaves_a_skipped_plugin_out_of_the_scores(prometheus: RealPrometheus) -> None:
    table = table_of("node-a", "node-b", "node-c")
    profile = Profile(
        "eventsched",
        {
            "queueSort": (PluginRef("PrioritySort"),),
            "preScore": (PluginRef("NetworkTraffic"),),
            "score": (PluginRef("NodeResourcesFit", 1), PluginRef("NetworkTraffic", 3)),
            "bind": (PluginRef("DefaultBinder"),),
        },
        {"NetworkTraffic": {"address": prometheus.url, "timeRange": WINDOW}},
    )
    rows = np.arange(3)
    fw = Framework(profile, full_registry(), Handle(table))
    state = CycleState()
    assert fw.run_pre_score(state, make_pod(), table, rows).is_success
    scores, status = fw.run_score(state, make_pod(), table, rows)
    assert status.is_success and scores is not None
    assert scores.plugins == ["NodeResourcesFit", "NetworkTraffic"]
    assert list(scores.normalized[1]) == [100, 0, scores.normalized[1][2]]

    down = Profile(
        profile.scheduler_name,
        profile.plugins,
        {"NetworkTraffic": {"address": f"http://127.0.0.1:{free_port()}"}},
    )
    fw = Framework(down, full_registry(), Handle(table))
    state = CycleState()
    assert fw.run_pre_score(state, make_pod(), table, rows).is_success
    assert state.skip_score == {"NetworkTraffic"}
    scores, status = fw.run_score(state, make_pod(), table, rows)
    assert status.is_success and scores is not None
    assert scores.plugins == ["NodeResourcesFit"]


# -- Prometheus down, failing, slow or odd ---------------------------------------


def test_prometheus_down_skips_at_once_warns_once_and_backs_off() -> None:
    table = table_of("node-a", "node-b")
    clock = FakeClock()
    plugin, _, sink = make_plugin(
        {"address": f"http://127.0.0.1:{free_port()}", "cacheSeconds": 30}, table, clock
    )
    with capture_logs() as logs:
        began = time.monotonic()
        assert attempt(plugin, table, sink)[0] == Code.SKIP
        assert time.monotonic() - began < 1.0  # connection refused: no retries, no backoff sleep
        for _ in range(5):
            assert attempt(plugin, table, sink)[0] == Code.SKIP
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert len(warnings) == 1
    assert "Connection refused" in warnings[0]["reason"]
    [value] = recorded(sink)  # the failure is an input too: replay must Skip where the run did
    assert value["samples"] == {} and "cannot connect to Prometheus" in value["error"]


def test_failing_prometheus_is_not_asked_again_before_cache_seconds() -> None:
    fake = serve(lambda path: (500, "text/plain", b"boom", 0.0))
    try:
        table = table_of("node-a", "node-b")
        clock = FakeClock()
        plugin, _, sink = make_plugin({"address": fake.url, "cacheSeconds": 10}, table, clock)
        with capture_logs() as logs:
            for _ in range(4):
                assert attempt(plugin, table, sink)[0] == Code.SKIP
            assert fake.queries == 1  # one try: the library's default 3 retries are off
            clock.now += 10
            assert attempt(plugin, table, sink)[0] == Code.SKIP
            assert fake.queries == 2
        # The second failure falls inside the warning interval (60 s): still one warning.
        assert len([e for e in logs if e["log_level"] == "warning"]) == 1
        assert len(recorded(sink)) == 2
        assert "500" in recorded(sink)[0]["error"]
    finally:
        fake.server.shutdown()


def test_recovery_after_a_failure_scores_again() -> None:
    answers = [(503, b"starting"), (200, b"")]
    body = json.dumps(
        {
            "status": "success",
            "data": {
                "resultType": "vector",
                "result": [
                    {"metric": {"nodename": "node-a"}, "value": [1, "10"]},
                    {"metric": {"nodename": "node-b"}, "value": [1, "30"]},
                ],
            },
        }
    ).encode()

    def respond(path: str) -> tuple[int, str, bytes, float]:
        code, text = answers.pop(0) if len(answers) > 1 else answers[0]
        return code, "application/json", text or body, 0.0

    fake = serve(respond)
    try:
        table = table_of("node-a", "node-b")
        clock = FakeClock()
        plugin, _, _ = make_plugin({"address": fake.url, "cacheSeconds": 5}, table, clock)
        assert attempt(plugin, table)[0] == Code.SKIP
        clock.now += 5
        assert attempt(plugin, table) == (Code.SUCCESS, [10, 30], [100, 0])
    finally:
        fake.server.shutdown()


def test_slow_prometheus_skips_within_the_timeout() -> None:
    fake = serve(lambda path: (200, "application/json", b"{}", 3.0))
    try:
        table = table_of("node-a", "node-b")
        plugin, _, sink = make_plugin({"address": fake.url, "timeoutSeconds": 0.5}, table)
        began = time.monotonic()
        assert attempt(plugin, table, sink)[0] == Code.SKIP
        took = time.monotonic() - began
        assert 0.4 <= took < 1.5, took
        assert "did not answer within 0.5s" in recorded(sink)[0]["error"]
        began = time.monotonic()
        assert attempt(plugin, table, sink)[0] == Code.SKIP  # backed off: not even a connection
        assert time.monotonic() - began < 0.05
        assert fake.queries == 1
    finally:
        fake.server.shutdown()


def vector(*items: Any) -> bytes:
    return json.dumps(
        {"status": "success", "data": {"resultType": "vector", "result": list(items)}}
    ).encode()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # NaN, +Inf, negative, non-numeric, missing label, missing value: dropped, rest kept.
        (
            vector(
                {"metric": {"nodename": "node-a"}, "value": [1, "100"]},
                {"metric": {"nodename": "node-b"}, "value": [1, "NaN"]},
                {"metric": {"nodename": "node-b"}, "value": [1, "+Inf"]},
                {"metric": {"nodename": "node-b"}, "value": [1, "-5"]},
                {"metric": {"nodename": "node-b"}, "value": [1, "lots"]},
                {"metric": {"instance": "x"}, "value": [1, "7"]},
                {"metric": {"nodename": "node-c"}},
                {"metric": {"nodename": 12}, "value": [1, "7"]},
                "garbage",
                {"metric": {"nodename": "node-c"}, "value": [1, "300"]},
            ),
            (Code.SUCCESS, [100, 300, 300], [100, 0, 0]),
        ),
        # Two series for one node (an overridden query without sum by): they add up.
        (
            vector(
                {"metric": {"nodename": "node-a"}, "value": [1, "100"]},
                {"metric": {"nodename": "node-a"}, "value": [1, "150"]},
                {"metric": {"nodename": "node-b"}, "value": [1, "50"]},
                {"metric": {"nodename": "node-c"}, "value": [1, "50"]},
            ),
            (Code.SUCCESS, [250, 50, 50], [0, 100, 100]),
        ),
        # Absurdly large but finite: capped at 1 PB/s, still the busiest, no overflow.
        (
            vector(
                {"metric": {"nodename": "node-a"}, "value": [1, "1e300"]},
                {"metric": {"nodename": "node-b"}, "value": [1, "0"]},
                {"metric": {"nodename": "node-c"}, "value": [1, "5e14"]},
            ),
            (Code.SUCCESS, [10**15, 0, 5 * 10**14], [0, 100, 50]),
        ),
        (vector(), (Code.SKIP, [], [])),  # nothing for any node: Skip, not all-equal scores
        (vector({"metric": {}, "value": [1, "NaN"]}), (Code.SKIP, [], [])),
        (b"not json", (Code.SKIP, [], [])),
        (b'{"status": "success"}', (Code.SKIP, [], [])),
        (b'{"status": "success", "data": {"result": {"a": 1}}}', (Code.SKIP, [], [])),
        (
            b'{"status": "success", "data": {"resultType": "scalar", "result": [1, "3"]}}',
            (Code.SKIP, [], []),
        ),
        (b"[]", (Code.SKIP, [], [])),
    ],
)
def test_odd_answers_never_crash(body: bytes, expected: tuple[Code, list[int], list[int]]) -> None:
    fake = serve(lambda path: (200, "application/json", body, 0.0))
    try:
        table = table_of("node-a", "node-b", "node-c")
        plugin, _, sink = make_plugin({"address": fake.url}, table)
        assert attempt(plugin, table, sink) == expected
        [value] = recorded(sink)
        assert all(isinstance(v, float) and math.isfinite(v) for v in value["samples"].values())
        json.dumps(value, allow_nan=False)  # what goes into the log is plain JSON
    finally:
        fake.server.shutdown()


def test_score_without_prescore_enabled_still_scores_or_stays_neutral() -> None:
    fake = serve(
        lambda path: (
            200,
            "application/json",
            vector(
                {"metric": {"nodename": "node-a"}, "value": [1, "9"]},
                {"metric": {"nodename": "node-b"}, "value": [1, "1"]},
            ),
            0.0,
        )
    )
    try:
        table = table_of("node-a", "node-b")
        plugin, _, _ = make_plugin({"address": fake.url}, table)
        rows = np.arange(2)
        raw = plugin.score_batch(CycleState(), make_pod(), table, rows)
        assert list(raw) == [9, 1]
        down, _, _ = make_plugin({"address": f"http://127.0.0.1:{free_port()}"}, table)
        assert list(down.score_batch(CycleState(), make_pod(), table, rows)) == [0, 0]
    finally:
        fake.server.shutdown()


def test_query_template_placeholders_and_node_label() -> None:
    answer = vector({"metric": {"node": "node-a"}, "value": [1, "4"]})
    fake = serve(lambda path: (200, "application/json", answer, 0.0))
    try:
        table = table_of("node-a", "node-b")
        plugin, _, _ = make_plugin(
            {
                "address": fake.url + "/",
                "deviceName": "ens5",
                "timeRange": 120,
                "nodeLabel": "node",
                "query": 'sum by (node) (increase(x{device="$device"}[$range]) / $seconds) + $$0',
            },
            table,
        )
        # node-b has no sample: it counts as the busiest (node-a), so both score alike.
        assert attempt(plugin, table) == (Code.SUCCESS, [4, 4], [100, 100])
        assert fake.promql == ['sum by (node) (increase(x{device="ens5"}[120s]) / 120) + $0']
        assert fake.hits == {"/api/v1/query": 1}  # the trailing slash of address is dropped
    finally:
        fake.server.shutdown()


# -- arguments -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "field", "problem"),
    [
        ({}, "address", "required: the Prometheus URL"),
        ({"address": ""}, "address", "required"),
        ({"address": "prometheus:9090"}, "address", "must be an http:// or https:// URL"),
        ({"timeRange": "1m"}, "timeRange", 'must be a positive integer (got "1m")'),
        ({"timeRange": 0}, "timeRange", "must be a positive integer (got 0)"),
        ({"timeRange": -60}, "timeRange", "must be a positive integer (got -60)"),
        ({"timeRange": 1.5}, "timeRange", "must be a positive integer (got 1.5)"),
        ({"timeRange": True}, "timeRange", "must be a positive integer (got True)"),
        ({"timeoutSeconds": 0}, "timeoutSeconds", "must be a positive number of seconds (got 0)"),
        (
            {"timeoutSeconds": "2s"},
            "timeoutSeconds",
            'must be a positive number of seconds (got "2s")',
        ),
        ({"cacheSeconds": -1}, "cacheSeconds", "must be a non-negative number of seconds (got -1)"),
        ({"deviceName": 'eth0"} or up{x="'}, "deviceName", "must not contain quotes"),
        ({"deviceName": ""}, "deviceName", "must be a non-empty string"),
        ({"nodeLabel": 3}, "nodeLabel", "must be a non-empty string"),
        ({"query": "rate(x[$window])"}, "query", "the template may use $device, $range, $seconds"),
        ({"query": "x $"}, "query", "malformed placeholder"),
        ({"query": ""}, "query", "must be a non-empty PromQL template"),
        (
            {"prometheusAddress": "http://p:9090"},
            "prometheusAddress",
            "unknown field; NetworkTraffic takes address, deviceName",
        ),
    ],
)
def test_bad_args_name_the_field_and_the_fix(
    args: dict[str, Any], field: str, problem: str
) -> None:
    if args and "address" not in args:
        args = {"address": "http://127.0.0.1:9090", **args}
    with pytest.raises(PluginArgsError) as err:
        NetworkTraffic(args, Handle())
    assert err.value.field == field
    assert problem in err.value.problem, err.value.problem


def test_args_defaults_and_no_connection_at_configuration_time() -> None:
    plugin = NetworkTraffic({"address": f"http://127.0.0.1:{free_port()}"}, Handle())
    assert plugin.device == "eth0" and plugin.time_range == 300
    assert plugin.timeout == 2.0 and plugin.cache_seconds == 30.0
    assert plugin.query == (
        "sum by (nodename) (rate(node_network_receive_bytes_total"
        '{device="eth0"}[300s]) * on (instance) group_left (nodename) node_uname_info)'
    )
    assert plugin._client is None


# -- end to end through the CLI --------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def eventsched(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eventsched.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )


def example_config(tmp_path: Path, address: str) -> Path:
    """examples/profiles/networktraffic.yaml pointed at `address`, with the test's short window."""
    text = (ROOT / "examples/profiles/networktraffic.yaml").read_text()
    assert "http://prometheus.monitoring.svc:9090" in text and "timeRange: 300" in text
    text = text.replace("http://prometheus.monitoring.svc:9090", address)
    text = text.replace("timeRange: 300", f"timeRange: {WINDOW}")
    path = tmp_path / "networktraffic.yaml"
    path.write_text(text)
    return path


@pytest.mark.slow
def test_simulate_then_explain_shows_network_traffic_scores(
    prometheus: RealPrometheus, db_url: str, tmp_path: Path
) -> None:
    config = example_config(tmp_path, prometheus.url)
    before = prometheus.queries_served()
    run = eventsched(
        "simulate", "--config", str(config), str(ROOT / "examples/networktraffic"), "--db", db_url
    )
    assert run.returncode == 0, run.stderr
    assert "3 of 3 pending pods bound" in run.stdout
    # The quietest node wins every pod, and three pods cost Prometheus one query.
    assert "node-a  3/110" in run.stdout, run.stdout
    assert prometheus.queries_served() - before == 1

    text = eventsched("explain", "default/web-1", "--db", db_url)
    assert text.returncode == 0, text.stderr
    assert "NetworkTraffic x5" in text.stdout, text.stdout
    assert "Input from NetworkTraffic: traffic" in text.stdout
    row_a = next(line for line in text.stdout.splitlines() if line.strip().startswith("node-a"))
    assert "500 (raw " in row_a and "→ 100)" in row_a, row_a

    explained = json.loads(eventsched("explain", "default/web-1", "--json", "--db", db_url).stdout)
    (attempt_,) = explained["attempts"]
    assert attempt_["selected"] == "node-a"
    assert {"name": "NetworkTraffic", "weight": 5} in attempt_["score_plugins"]
    scores = {top["node"]: top["plugins"]["NetworkTraffic"] for top in attempt_["top"]}
    assert scores["node-a"]["normalized"] == 100 and scores["node-b"]["normalized"] == 0
    assert scores["node-a"]["weighted"] == 500
    for node, rate in RATES.items():
        assert scores[node]["raw"] == pytest.approx(rate, rel=0.1)
    inputs = [step for step in attempt_["steps"] if step["kind"] == "input_recorded"]
    assert [(i["plugin"], i["key"]) for i in inputs] == [("NetworkTraffic", "traffic")]


@pytest.mark.slow
def test_simulate_with_prometheus_down_still_binds_every_pod(db_url: str, tmp_path: Path) -> None:
    config = example_config(tmp_path, f"http://127.0.0.1:{free_port()}")
    began = time.monotonic()
    run = eventsched(
        "simulate", "--config", str(config), str(ROOT / "examples/networktraffic"), "--db", db_url
    )
    assert run.returncode == 0, run.stderr
    assert "3 of 3 pending pods bound" in run.stdout
    assert time.monotonic() - began < 60
    assert "scoring without this plugin" in run.stderr + run.stdout
    assert run.stderr.count("scoring without this plugin") == 1  # one warning, not one per pod
    text = eventsched("explain", "default/web-1", "--db", db_url).stdout
    assert "NetworkTraffic x5" not in text  # skipped: the other scorers decided
