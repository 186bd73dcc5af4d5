"""Prometheus metrics under kube-scheduler's names and labels, plus the event log's own.

Dashboards and alerts written for kube-scheduler
(`scheduler_schedule_attempts_total`, `scheduler_pending_pods`, ...) work
unchanged: each family has kube-scheduler v1.28's name, type, labels, buckets and
HELP, stability prefix included (tests/scheduler/metricsref holds a scrape of the
real one). Each Scheduler gets its own registry so that several can live in one
process (tests, replays) without colliding.

The families are tables, one module per group, as kube-scheduler's
pkg/scheduler/metrics lists its own: `kubescheduler` (the scheduler's),
`restclient` (client-go's REST client), `leaderelection` (client-go's lease),
`eventlog` (`eventsched_log_*`), `extenderserver` (`eventsched_extender_*`, the calls
`eventsched extender` answers); `process` adds the process collector. A row is a
`family.Family`; `builder.register` registers tables into a registry; and
`SchedulerMetrics` (`schedulermetrics`) holds the collectors with the calls that
record into them. The package imports prometheus_client and the model only, so
every layer above the model may use it.
"""

from eventsched.metrics.schedulermetrics import SchedulerMetrics

__all__ = ["SchedulerMetrics"]
