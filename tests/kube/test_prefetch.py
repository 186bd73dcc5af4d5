"""The first lists asked for before the scheduler is imported (cluster/kube/prefetch.py).

On `kube_server`: the emulator and, with EVENTSCHED_KUBE_BIN, a real kube-apiserver.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator, MutableMapping
from typing import Any

import structlog
from kubernetes import client
from structlog.testing import capture_logs

from eventsched.cluster.kube import KubeCluster
from eventsched.cluster.kube.prefetch import POD_QUERY, first_lists
from eventsched.cluster.kube.rest import resource_path
from eventsched.config import default_profile
from eventsched.events import EventStore
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler
from tests.kube.apiserver import ApiServer
from tests.kube.realserver import KubeServer
from tests.kube.test_kube_scheduler import node, pod

PODS, NODES = resource_path("pods"), resource_path("nodes")
FIRST = {"resourceVersion": "0"}


def _names(items: list[dict]) -> set[str]:
    return {item["metadata"]["name"] for item in items}


def test_each_first_list_is_taken_once_as_its_informer_asks_for_it(
    kube_server: KubeServer, api_client: client.ApiClient
) -> None:
    kube_server.create(node("n1"))
    kube_server.create(pod("p1"))
    prefetch = first_lists(api_client.configuration)

    pods = prefetch.take(PODS, {**POD_QUERY, **FIRST})
    assert pods is not None and pods.ok
    assert _names(pods.body["items"]) >= {"p1"}
    # Decoded slim, as the informer decodes its own lists: managedFields are not kept.
    assert all("managedFields" not in item["metadata"] for item in pods.body["items"])
    assert prefetch.take(PODS, {**POD_QUERY, **FIRST}) is None  # once
    # Another query (a relist from a later version) is the informer's own request.
    assert prefetch.take(NODES, {"resourceVersion": "5"}) is None
    nodes = prefetch.take(NODES, FIRST)
    assert nodes is not None and _names(nodes.body["items"]) >= {"n1"}


def test_a_discarded_or_failed_list_is_not_taken(apiserver: ApiServer) -> None:
    api = apiserver.client()
    try:
        discarded = first_lists(api.configuration)
        discarded.discard()
        assert discarded.take(PODS, {**POD_QUERY, **FIRST}) is None
        apiserver.wait_for(lambda: len(_lists(apiserver)) == 2)  # its requests were sent

        apiserver.fail_next("GET", "/pods$", 500)
        failed = first_lists(api.configuration)
        assert failed.take(PODS, {**POD_QUERY, **FIRST}) is None
        assert failed.take(NODES, FIRST) is not None
    finally:
        api.close()


def test_a_cluster_started_from_prefetched_lists_misses_nothing_created_since(
    apiserver: ApiServer, store: EventStore
) -> None:
    """The informers take the prefetched answers (no second list of pods or nodes) and
    watch from their resourceVersion: a pod created after the lists were prepared, before
    the scheduler started, is still seen and bound."""
    api = apiserver.client()
    apiserver.create(node("n1"))
    apiserver.create(pod("early"))
    prefetch = first_lists(api.configuration)
    apiserver.wait_for(lambda: len(_lists(apiserver)) == 2)  # both answered
    apiserver.create(pod("late"))
    apiserver.clear_requests()
    observed: list[str] = []
    cluster = KubeCluster(
        api, ["eventsched"], prefetch=prefetch, observer=lambda h, m, c, s: observed.append(m)
    )
    scheduler = Scheduler(store, cluster, [default_profile()], in_tree_registry())
    stop = threading.Event()
    loop = threading.Thread(target=scheduler.run, kwargs={"stop": stop}, daemon=True)
    try:
        with debug_logs_captured() as logs:
            assert scheduler.start(stop=stop)
        loop.start()
        # Each list says at debug level what it held and how long it waited and took.
        listed = {e["resource"]: e for e in logs if e["event"] == "listed"}
        assert listed["pods"]["prefetched"] and listed["nodes"]["prefetched"]
        assert listed["pods"]["items"] == 1 and listed["nodes"]["items"] == 1  # not `late`
        assert not listed["services"]["prefetched"]
        assert listed["pods"]["log_level"] == "debug"
        apiserver.wait_for(lambda: _node_of(apiserver, "late") == "n1")
        # Both are bound; their Bindings run concurrently, so not necessarily in order.
        apiserver.wait_for(lambda: _node_of(apiserver, "early") == "n1")
        assert _lists(apiserver) == []  # both first lists were the prefetched ones
        # The prefetch's own requests count in the rest_client metrics like the informers'.
        assert observed.count("GET") >= 2
    finally:
        stop.set()
        if loop.is_alive():
            loop.join(10)
        scheduler.stop()
        api.close()


@contextlib.contextmanager
def debug_logs_captured() -> Iterator[list[MutableMapping[str, Any]]]:
    """What is logged meanwhile, debug included (a command run earlier in this process may
    have configured a filter at warning level)."""
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    try:
        with capture_logs() as logs:
            yield logs
    finally:
        structlog.configure(**saved)


def _lists(apiserver: ApiServer) -> list[str]:
    """The lists (not watches) of pods and nodes the emulator answered."""
    return [
        r.path
        for r in apiserver.requests
        if r.method == "GET" and r.path in (PODS, NODES) and r.query.get("watch") != "true"
    ]


def _node_of(apiserver: ApiServer, name: str) -> str:
    found = apiserver.get("pods", name, "default") or {}
    return (found.get("spec") or {}).get("nodeName") or ""


def test_eventsched_run_asks_for_its_lists_before_importing_the_scheduler() -> None:
    """`eventsched.cli.run` imports neither numpy, SQLAlchemy nor the plugins: the lists
    are asked for before they are (a module-level import of them would undo that)."""
    probe = (
        "import sys, eventsched.cli.run; "
        "print(sorted(m for m in ('numpy', 'sqlalchemy', 'psycopg', 'eventsched.plugins', "
        "'eventsched.scheduler', 'eventsched.model.nodetable') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
