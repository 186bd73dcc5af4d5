"""eventsched's own cycle calls the configuration's `extenders[]` as kube-scheduler v1.28 does.

An HTTP extender runs in the test (stdlib server on loopback): it records every request
body and answers as each test scripts it. The scheduler runs on the simulated cluster with
the log on SQLite and PostgreSQL. Replay then runs with the extender stopped: it never
calls it, and reproduces every attempt from the recorded answers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from eventsched.audit.replay import replay
from eventsched.cluster import SimulatedCluster
from eventsched.config.file import parse_config
from eventsched.events import EventStore
from eventsched.model import Node, Pod
from eventsched.plugins import full_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.waiting import wait_for

#: verb -> (request body) -> (HTTP status, answer); a handler may block (a slow extender).
Script = dict[str, Callable[[dict[str, Any]], tuple[int, Any]]]


class Extender:
    """A scheduler extender on 127.0.0.1 that keeps what it was sent."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                verb = self.path.rsplit("/", 1)[-1]
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((verb, body))
                status, answer = outer.script[verb](body)
                data = json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the scheduler gave up waiting (a timeout test)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/scheduler"

    def verbs(self) -> list[str]:
        return [verb for verb, _ in self.requests]

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def extender(script: Script) -> Iterator[Extender]:
    ext = Extender(script)
    try:
        yield ext
    finally:
        ext.stop()


def names_of(body: dict[str, Any]) -> list[str]:
    if body["NodeNames"] is not None:
        return list(body["NodeNames"])
    return [n["metadata"]["name"] for n in body["Nodes"]["items"]]


def keep_all_but(*failed: str, message: str = "no license here") -> Callable:
    def answer(body: dict[str, Any]) -> tuple[int, Any]:
        names = names_of(body)
        passed = [n for n in names if n not in failed]
        result: dict[str, Any] = {
            "FailedNodes": {n: message for n in failed if n in names},
            "FailedAndUnresolvableNodes": {},
            "Error": "",
            "Nodes": None,
            "NodeNames": None,
        }
        if body["NodeNames"] is not None:
            result["NodeNames"] = passed
        else:
            result["Nodes"] = {
                "items": [n for n in body["Nodes"]["items"] if n["metadata"]["name"] in passed]
            }
        return 200, result

    return answer


def prefer(winner: str) -> Callable:
    def answer(body: dict[str, Any]) -> tuple[int, Any]:
        return 200, [{"Host": n, "Score": 10 if n == winner else 0} for n in names_of(body)]

    return answer


def config(**entry: Any) -> Any:
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "eventsched"}],
        "extenders": [entry],
    }
    return parse_config(doc, "test", full_registry())


def pending(name: str, cpu: str = "500m", extra: dict[str, str] | None = None) -> Pod:
    requests = {"cpu": cpu, "memory": "256Mi", **(extra or {})}
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {
                "schedulerName": "eventsched",
                "containers": [
                    {
                        "name": "c",
                        "image": "app:1",
                        "resources": {"requests": requests, "limits": extra or {}},
                    }
                ],
            },
        }
    )


def gpu_node(name: str) -> Node:
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {
                "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/gpu": "4"}
            },
        }
    )


def schedule(store: EventStore, loaded: Any, pods: list[Pod]) -> SimulatedCluster:
    cluster = SimulatedCluster([gpu_node(f"node-{c}") for c in "abc"], pods)
    scheduler = Scheduler(
        store,
        cluster,
        list(loaded.profiles),
        full_registry(),
        SchedulerOptions(initial_backoff=0.05, max_backoff=0.1, binder_workers=1),
    )
    scheduler.start()
    scheduler.run(until_idle=True)
    scheduler.stop()
    return cluster


def placed(cluster: SimulatedCluster, name: str) -> str:
    found = cluster.get_pod(f"default/{name}")
    assert found is not None
    return found.node_name


def failed_message(cluster: SimulatedCluster, name: str) -> str:
    messages = [
        e.message
        for e in cluster.events
        if e.reason == "FailedScheduling" and e.pod_key == f"default/{name}"
    ]
    assert messages, f"no FailedScheduling for {name}"
    return messages[0]


def assert_replays_without_calling(store: EventStore, ext: Extender) -> None:
    before = len(ext.requests)
    ext.stop()
    report = replay(store, full_registry())
    assert report.mismatches == [] and report.skipped == []
    assert report.reproduced == report.attempts > 0
    assert len(ext.requests) == before


@pytest.mark.parametrize("cache_capable", [True, False], ids=["NodeNames", "Nodes"])
def test_filter_narrows_the_nodes_in_either_form(store: EventStore, cache_capable: bool) -> None:
    with extender({"filter": keep_all_but("node-a", "node-b")}) as ext:
        loaded = config(urlPrefix=ext.url, filterVerb="filter", nodeCacheCapable=cache_capable)
        cluster = schedule(store, loaded, [pending("web")])
        assert placed(cluster, "web") == "node-c"
        ((verb, body),) = ext.requests
        assert verb == "filter"
        assert set(body) == {"Pod", "Nodes", "NodeNames"}
        assert body["Pod"]["metadata"]["name"] == "web"
        assert body["Pod"]["metadata"]["uid"] == "uid-web"
        assert body["Pod"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "500m"
        if cache_capable:
            assert body["Nodes"] is None and sorted(body["NodeNames"]) == [
                "node-a",
                "node-b",
                "node-c",
            ]
        else:
            assert body["NodeNames"] is None
            items = body["Nodes"]["items"]
            assert sorted(i["metadata"]["name"] for i in items) == ["node-a", "node-b", "node-c"]
            assert items[0]["status"]["allocatable"]["cpu"] == "4000m"
        (filtered,) = [e for e in store.read() if e.kind == "filtered"]
        assert filtered.data["rejections"] == [
            {
                "plugin": ext.url,
                "code": "Unschedulable",
                "reasons": ["no license here"],
                "nodes": ["node-a", "node-b"],
            }
        ]
        assert_replays_without_calling(store, ext)


def test_failed_nodes_make_the_fit_error_message(store: EventStore) -> None:
    with extender({"filter": keep_all_but("node-a", "node-b", "node-c")}) as ext:
        loaded = config(urlPrefix=ext.url, filterVerb="filter", nodeCacheCapable=True)
        cluster = schedule(store, loaded, [pending("web")])
        assert placed(cluster, "web") == ""
        assert failed_message(cluster, "web").startswith(
            "0/3 nodes are available: 3 no license here."
        )
        assert_replays_without_calling(store, ext)


def test_only_pods_asking_for_a_managed_resource_are_sent(store: EventStore) -> None:
    with extender({"filter": keep_all_but("node-a")}) as ext:
        loaded = config(
            urlPrefix=ext.url,
            filterVerb="filter",
            nodeCacheCapable=True,
            managedResources=[{"name": "example.com/gpu", "ignoredByScheduler": True}],
        )
        (fit,) = [p for p in loaded.profiles[0].plugin_args.items() if p[0] == "NodeResourcesFit"]
        assert fit[1]["ignoredResources"] == ["example.com/gpu"]
        plain, gpu = pending("plain"), pending("trainer", extra={"example.com/gpu": "1"})
        cluster = schedule(store, loaded, [plain, gpu])
        assert placed(cluster, "plain") != ""
        assert placed(cluster, "trainer") in ("node-b", "node-c")
        assert [b["Pod"]["metadata"]["name"] for _, b in ext.requests] == ["trainer"]


def _slow(ext_holder: list[Extender]) -> Callable:
    def answer(body: dict[str, Any]) -> tuple[int, Any]:
        ext_holder[0].release.wait(10)  # until the test ends: longer than httpTimeout
        return 200, {}

    return answer


@pytest.mark.parametrize("ignorable", [False, True])
def test_a_filter_timeout_fails_the_attempt_unless_ignorable(
    store: EventStore, ignorable: bool
) -> None:
    holder: list[Extender] = []
    with extender({"filter": _slow(holder)}) as ext:
        holder.append(ext)
        loaded = config(
            urlPrefix=ext.url,
            filterVerb="filter",
            nodeCacheCapable=True,
            httpTimeout="300ms",
            ignorable=ignorable,
        )
        cluster = schedule(store, loaded, [pending("web")])
        if ignorable:
            assert placed(cluster, "web") != ""
        else:
            assert placed(cluster, "web") == ""
            assert failed_message(cluster, "web") == (
                f'Post "{ext.url}/filter": context deadline exceeded '
                "(Client.Timeout exceeded while awaiting headers)"
            )
            failures = [e for e in store.read() if e.kind == "unschedulable"]
            assert failures and failures[0].data["code"] == "Error"
        assert_replays_without_calling(store, ext)


def test_prioritize_moves_the_pod_and_a_failing_one_is_ignored(store: EventStore) -> None:
    with extender({"prioritize": prefer("node-b")}) as ext:
        loaded = config(urlPrefix=ext.url, prioritizeVerb="prioritize", weight=5)
        cluster = schedule(store, loaded, [pending("web")])
        assert placed(cluster, "web") == "node-b"
        (scored,) = [e for e in store.read() if e.kind == "scored"]
        column = next(p for p in scored.data["plugins"] if p["name"] == ext.url)
        assert column["weight"] == 5
        top = scored.data["top"][0]
        assert top["node"] == "node-b"
        assert_replays_without_calling(store, ext)


def test_a_failing_prioritize_gives_no_score(store: EventStore) -> None:
    with extender({"prioritize": lambda body: (500, {})}) as ext:
        loaded = config(urlPrefix=ext.url, prioritizeVerb="prioritize", weight=5)
        cluster = schedule(store, loaded, [pending("web")])
        assert placed(cluster, "web") != ""
        assert ext.verbs() == ["prioritize"]
        (scored,) = [e for e in store.read() if e.kind == "scored"]
        assert ext.url not in [p["name"] for p in scored.data["plugins"]]
        (recorded,) = [
            e for e in store.read() if e.kind == "input_recorded" and e.plugin == ext.url
        ]
        assert recorded.data["value"] == {
            "error": f"failed prioritize with extender at URL {ext.url}/prioritize, code 500"
        }


def test_a_binding_extender_binds_instead_of_the_default_binder(store: EventStore) -> None:
    with extender({"bind": lambda body: (200, {"Error": ""})}) as ext:
        loaded = config(urlPrefix=ext.url, bindVerb="bind")
        cluster = schedule(store, loaded, [pending("web")])
        ((verb, body),) = ext.requests
        assert verb == "bind"
        (bound,) = [e for e in store.read() if e.kind == "bound"]
        assert body == {
            "PodName": "web",
            "PodNamespace": "default",
            "PodUID": "uid-web",
            "Node": bound.node,
        }
        assert bound.data["extender"] == ext.url
        assert cluster.bindings == []  # DefaultBinder posted no Binding


def test_a_binding_extenders_error_is_the_binding_failure(store: EventStore) -> None:
    with extender({"bind": lambda body: (200, {"Error": "quota exhausted"})}) as ext:
        loaded = config(urlPrefix=ext.url, bindVerb="bind")
        cluster = SimulatedCluster([gpu_node("node-a")], [pending("web")])
        scheduler = Scheduler(store, cluster, list(loaded.profiles), full_registry())
        scheduler.start()
        stop = threading.Event()
        loop = threading.Thread(target=scheduler.run, args=(stop,), daemon=True)
        loop.start()
        try:
            # The Binding fails every time; wait for the first failure to be in the log.
            failed = wait_for(
                "a bind_failed", lambda: [e for e in store.read() if e.kind == "bind_failed"]
            )
        finally:
            stop.set()
            loop.join(10)
            scheduler.stop()
        assert failed[0].data["reason"] == "quota exhausted"
        assert cluster.get_pod("default/web").node_name == ""  # type: ignore[union-attr]
        assert ext.verbs()[0] == "bind"
