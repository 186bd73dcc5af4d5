"""The scheduler's options and the counts it keeps."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field


@dataclass(slots=True)
class SchedulerOptions:
    instance: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}")
    binder_workers: int = 16
    initial_backoff: float = 1.0
    max_backoff: float = 10.0
    max_unschedulable: float = 300.0
    #: Write a projection snapshot after this many events, so a restart folds few.
    snapshot_every: int = 20_000
    #: Longest the loop sleeps when idle before re-checking queues.
    idle_wait: float = 0.5
    #: Retry delay (doubled up to 4 s) while the log cannot be written.
    log_retry: float = 0.5
    #: Group commit: attempts decided per append at most, and how long the first may wait.
    #: Bindings start only once their group is durable, so this bounds the added latency.
    #: While nothing is scheduled, what is recorded after the fact (`bound`, observations)
    #: also waits up to `group_commit_wait` for more to join it (`Scheduler._flush_deferred`).
    group_commit_attempts: int = 64
    group_commit_wait: float = 0.05


@dataclass(slots=True)
class Stats:
    attempts: int = 0
    bound: int = 0
    unschedulable: int = 0
    errors: int = 0
    bind_failures: int = 0
    #: Preemptions acted on (their victims evicted).
    preemptions: int = 0
    events: int = 0
