"""The commands of `eventsched`: each one's module and summary, known without importing them.

`eventsched --help` lists them all, but only the module of the command being run
is imported: the others bring in SQLAlchemy, the Kubernetes client and numpy
(about a second of start-up, and of CPU in every `eventsched run`).
"""

from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    module: str
    summary: str


#: In the order `eventsched --help` lists them.
COMMANDS: dict[str, Command] = {
    "run": Command(
        "run", "schedule pods of a Kubernetes cluster (in-cluster or with --kubeconfig)"
    ),
    "simulate": Command(
        "simulate", "schedule a simulated cluster (manifests or generated) and log every decision"
    ),
    "explain": Command(
        "explain", "why a pod landed where it did (or nowhere), from the event log alone"
    ),
    "replay": Command(
        "replay", "re-run every recorded attempt from the log and report what does not reproduce"
    ),
    "query": Command(
        "query", "run one read-only SQL statement over the event log (table, CSV or JSON)"
    ),
    "export": Command(
        "export",
        "write a slice of the log (a pod's batches, or a time range) to a file that explain, "
        "replay, query and ui open elsewhere",
    ),
    "config": Command("configcheck", "check a KubeSchedulerConfiguration file"),
    "db": Command("db", "manage the event log's database"),
    "extender": Command(
        "extender",
        "serve as kube-scheduler's extender: answer its filter, prioritize and bind calls, logged",
    ),
    "shadow": Command(
        "shadow",
        "decide beside kube-scheduler, binding nothing: record where it agrees, and why not",
    ),
    "bench": Command("bench", "measure scheduling throughput (pods/s) on a generated cluster"),
    "ui": Command("ui", "serve a read-only web page over the event log (pods, nodes, what-if)"),
    "sticky": Command("sticky", "show or clear StickyNode's first placements (from the event log)"),
}


def summary(name: str) -> str:
    """The line `eventsched --help` shows for command `name`."""
    return COMMANDS[name].summary
