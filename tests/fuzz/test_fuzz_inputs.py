"""Every input a user or a cluster can send either works or is refused in one line (exit 2).

Never a traceback (exit 1), never a hang, never a write to the log on a
refused input. Bounded for CI by tests/fuzz/conftest.py's `ci` profile;
`HYPOTHESIS_PROFILE=soak` runs long.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from eventsched.audit.query import QueryError, run_read_only
from eventsched.cli.errors import friendly_error
from eventsched.cli.main import main
from eventsched.cli.timebounds import parse_bound
from eventsched.cluster.kube.connection import ClientConnection, KubeConfigError, api_client
from eventsched.config.file import parse_config
from eventsched.events import EventStore, upgrade
from eventsched.plugins import full_registry
from tests.fuzz.strategies import clusters, scalars, values


def dump(documents: list[Any]) -> str:
    return yaml.safe_dump_all(documents, allow_unicode=True)


def run_cli(*argv: str) -> tuple[int, str]:
    """`eventsched ARGV` in-process: (exit code, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(list(argv))
        except SystemExit as exited:  # usage errors
            code = int(exited.code or 0)
    return code, err.getvalue()


#: A profile with every plugin of ours that reads a pod's annotations (but NetworkTraffic,
#: which needs a Prometheus), so the fuzzed annotations reach them.
ANNOTATION_READERS = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: eventsched
    plugins:
      multiPoint:
        enabled:
          - {name: ImportanceSort}
          - {name: NodeLabel}
          - {name: PinnedHost}
          - {name: Coscheduling}
          - {name: StickyNode}
      queueSort:
        disabled: [{name: PrioritySort}]
    pluginConfig:
      - {name: Coscheduling, args: {permitWaitingTimeSeconds: 1}}
      - {name: StickyNode, args: {identity: "annotation:eventsched.io/identity", policy: preferred}}
"""


@given(clusters(), st.booleans())
def test_a_manifest_is_simulated_or_refused_in_one_line(
    documents: list[Any], our_plugins: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp, "cluster.yaml")
        manifest.write_text(dump(documents), encoding="utf-8")
        url = f"sqlite:///{tmp}/events.db"
        upgrade(url)
        config = Path(tmp, "config.yaml")
        config.write_text(ANNOTATION_READERS)
        extra = ["--config", str(config)] if our_plugins else []
        code, err = run_cli("--db", url, "simulate", *extra, str(manifest))
        assert code in (0, 2), err
        if code == 2:
            assert err.startswith("eventsched: error: ") and len(err.strip().splitlines()) == 1, err
            with EventStore.connect(url) as store:
                assert store.last_position() == 0, "a refused input wrote to the log"


PROFILE_FIELDS = [
    "schedulerName",
    "percentageOfNodesToScore",
    "plugins",
    "pluginConfig",
]
TOP_FIELDS = [
    "clientConnection",
    "leaderElection",
    "profiles",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "percentageOfNodesToScore",
    "parallelism",
    "extenders",
]
PLUGIN_ARGS = st.sampled_from(
    [
        "NodeResourcesFit",
        "StickyNode",
        "NodeLabel",
        "PinnedHost",
        "Coscheduling",
        "ImportanceSort",
        "NetworkTraffic",
        "RandomScore",
        "NodeAffinity",
        "TaintToleration",
        "Unknown",
    ]
)


@st.composite
def configurations(draw: st.DrawFn) -> Any:
    doc: dict[str, Any] = {
        "apiVersion": draw(st.sampled_from(["kubescheduler.config.k8s.io/v1", "v1", ""])),
        "kind": "KubeSchedulerConfiguration",
    }
    for field in draw(st.lists(st.sampled_from(TOP_FIELDS), max_size=3)):
        doc[field] = draw(values)
    if draw(st.booleans()):
        profile: dict[str, Any] = {"schedulerName": "eventsched"}
        for field in draw(st.lists(st.sampled_from(PROFILE_FIELDS), max_size=2)):
            profile[field] = draw(values)
        name = draw(PLUGIN_ARGS)
        profile["pluginConfig"] = [{"name": name, "args": draw(values)}]
        profile["plugins"] = {"multiPoint": {"enabled": [{"name": name, "weight": draw(scalars)}]}}
        doc["profiles"] = [profile]
    return draw(st.just(doc) | values)


@given(configurations())
def test_a_configuration_is_loaded_or_refused_with_a_message(doc: Any) -> None:
    try:
        parse_config(doc, "config.yaml", full_registry())
    except Exception as exc:
        message = friendly_error(exc)
        assert message is not None, f"{type(exc).__name__}: {exc}"
        assert "\n" not in message.strip(), message


@given(st.text(max_size=80) | st.sampled_from(["SELECT", "select 1;", "select * from decisions"]))
def test_a_query_runs_or_is_refused_with_a_query_error(sql: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/events.db"
        upgrade(url)
        try:
            run_read_only(url, sql, timeout=2)
        except QueryError as exc:
            assert str(exc).strip()


@given(
    st.text(max_size=30)
    | st.from_regex(r"\A[0-9.]+[smhd]+\Z")
    | st.from_regex(r"\A\d{4}-\d\d-\d\dT[0-9:.]*\Z")
)
def test_a_replay_bound_is_parsed_or_refused_with_value_error(text: str) -> None:
    try:
        parse_bound(text)
    except ValueError as exc:
        assert str(exc).strip()


@st.composite
def kubeconfigs(draw: st.DrawFn) -> Any:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    for field in draw(st.lists(st.sampled_from(list(doc)), max_size=2)):
        doc[field] = draw(values)
    return draw(st.just(doc) | values)


@given(kubeconfigs())
def test_a_kubeconfig_is_used_or_refused_with_kube_config_error(doc: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "kubeconfig")
        path.write_text(yaml.safe_dump(doc), encoding="utf-8")
        try:
            api_client(ClientConnection(kubeconfig=str(path)))
        except KubeConfigError as exc:
            assert "\n" not in str(exc)
