"""The calls kube-scheduler makes for one pod, sent to an `eventsched extender` on a
simulated cluster, logged in ./eventsched.db: filter, prioritize, bind (generate.py's
extender samples then explain and replay that log).

The server, the loop and the request bodies are the ones tests/extenderserver/ uses: the real
`ExtenderScheduler` and HTTP server on a loopback port, bodies shaped as kube-scheduler
v1.28 sends them.
"""

from __future__ import annotations

from eventsched.events import EventStore
from tests.extenderserver.helpers import pod_manifest, running_extender
from tests.extenderserver.test_extender_server import NODELABEL, NODES


def main() -> None:
    pod = pod_manifest("train")
    with (
        EventStore.connect("sqlite:///eventsched.db") as store,
        running_extender(store, NODELABEL, NODES, [pod]) as ext,
    ):
        passed = ext.client.filter(pod, NODES).body["NodeNames"]
        scores = ext.client.prioritize(pod, passed).body
        best = max(scores, key=lambda s: s["Score"])["Host"]
        ext.client.bind(pod, best)


if __name__ == "__main__":
    main()
