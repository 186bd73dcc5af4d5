"""High availability measured as an operator would see it, on a real control plane.

`python -m eventsched.benchmarks.failover --help` (cli.py) says what each scenario does;
the modules:

- scrapes: what each scrape of a replica keeps, and the figures read from the scrapes
- figures: the figures read from the bind times (failover, longest pause)
- checks: after a run, every pod bound once with its `bound` event after its decision, no
  reservation open, no pod pending that fits, the chain intact
- report: one scenario's result, as lines or JSON
- postgres: a fresh database, restarting the local cluster, reading its log
- smalldisk: a tmpfs holding a tablespace, filled and freed (disk-full)
- faultproxy: a proxy to kube-apiserver answering some requests with errors (api-faults)
- replicas: the `eventsched run` processes, each scraped on a thread
- watch: the watch of bound pods, kept up while kube-apiserver restarts
- run: one scenario's settings, control plane, database, watch and replicas
- kill_leader, pg_restart, apiserver_restart, kill9, disk_full, api_faults (and outage,
  what the restarts, disk-full and api-faults share): the scenarios
- measure: the scenarios by name, one measured on a fresh run
- cli: the command line
"""

from eventsched.benchmarks.failover.checks import Checks, bound_twice, check, without_decision
from eventsched.benchmarks.failover.cli import main
from eventsched.benchmarks.failover.figures import Failover, failover, longest_gap
from eventsched.benchmarks.failover.measure import RUNNERS, SCENARIOS, measure
from eventsched.benchmarks.failover.postgres import postgres_down
from eventsched.benchmarks.failover.report import Result
from eventsched.benchmarks.failover.run import DEFAULT_SERVER, Run, Settings
from eventsched.benchmarks.failover.scrapes import (
    APPEND_FAILURES,
    MASTER,
    REST,
    SCRAPE_EVERY,
    UNREACHABLE,
    Sample,
    changes,
    delta,
    first_at,
    metric_values,
)

__all__ = [
    "APPEND_FAILURES",
    "DEFAULT_SERVER",
    "MASTER",
    "REST",
    "RUNNERS",
    "SCENARIOS",
    "SCRAPE_EVERY",
    "UNREACHABLE",
    "Checks",
    "Failover",
    "Result",
    "Run",
    "Sample",
    "Settings",
    "bound_twice",
    "changes",
    "check",
    "delta",
    "failover",
    "first_at",
    "longest_gap",
    "main",
    "measure",
    "metric_values",
    "postgres_down",
    "without_decision",
]
