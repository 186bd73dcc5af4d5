"""The live scheduler, laid out as kube-scheduler's `pkg/scheduler`.

`scheduler` (the Scheduler: its parts wired, and its loop), `eventhandlers` (cluster
changes to events to the view, queue moves), `schedule_one` (the scheduling cycle),
`bindingcycles` and `binding` (the binding cycle on a binder thread, and its outcome on
the loop), `failure` (an attempt that placed no pod), `attempts` (an attempt's start
and timing), `journal` (the log writer: pending batch, group commit, in-doubt appends,
snapshots), `reconcile` (what a starting process logs), `queue` and `moves` (activeQ,
backoff, unschedulable, each move logged), `profiles` (a framework per schedulerName).
The view the scheduler decides on is `eventsched.view.ClusterView`, changed only by
the events it appends.
"""

from eventsched.model.cache import Cache
from eventsched.scheduler.options import SchedulerOptions, Stats
from eventsched.scheduler.ports import BindOutcome, Cluster, ClusterChange
from eventsched.scheduler.queue import SchedulingQueue
from eventsched.scheduler.scheduler import LoopTask, Scheduler

__all__ = [
    "BindOutcome",
    "Cache",
    "Cluster",
    "ClusterChange",
    "LoopTask",
    "Scheduler",
    "SchedulerOptions",
    "SchedulingQueue",
    "Stats",
]
