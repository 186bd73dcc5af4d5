"""The live scheduler: queue, cache, the scheduling loop and binding cycles."""

from eventsched.model.cache import Cache
from eventsched.scheduler.ports import BindOutcome, Cluster, ClusterChange
from eventsched.scheduler.queue import SchedulingQueue
from eventsched.scheduler.scheduler import Scheduler, SchedulerOptions, Stats

__all__ = [
    "BindOutcome",
    "Cache",
    "Cluster",
    "ClusterChange",
    "Scheduler",
    "SchedulerOptions",
    "SchedulingQueue",
    "Stats",
]
