"""What `eventsched bench --kube` reports: each run's figures and the ratios of the means.

CPU per pod is the scheduler process's own; for eventsched on PostgreSQL the CPU of the
database's backends is added in `log_cpu_ms_per_pod`, and the summary's CPU ratio is that
of eventsched with its log against kube-scheduler, which keeps no log.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

EVENTSCHED = "eventsched"
KUBE_SCHEDULER = "kube-scheduler"


@dataclass(slots=True)
class RunResult:
    scheduler: str
    round: int
    nodes: int
    pods: int
    bound: int
    #: first bind to last bind
    seconds: float
    pods_per_second: float
    #: scheduler process start to last bind
    from_start_seconds: float
    scheduler_cpu_seconds: float
    cpu_ms_per_pod: float
    apiserver_cpu_seconds: float
    etcd_cpu_seconds: float
    #: eventsched on PostgreSQL: every `postgres` process on the machine (None otherwise)
    postgres_cpu_seconds: float | None = None
    #: eventsched: where its log was and how many events it holds after the run
    database: str | None = None
    events: int | None = None
    #: times the API server closed the benchmark's watch and it listed again
    watch_restarts: int = 0
    #: set when not every pod was bound in time, or the scheduler exited
    error: str | None = None
    #: the scheduler's CPU when the watch first saw a pod bound (read within about 5 ms of
    #: it): its start (interpreter or binary, lists, state) and its first decision
    first_bind_cpu_seconds: float | None = None
    #: the scheduler's CPU per pod with its PostgreSQL backends' (the same as
    #: cpu_ms_per_pod for a scheduler without a log on PostgreSQL)
    log_cpu_ms_per_pod: float = 0.0
    #: the scheduler's own CPU per pod after its first bind: the steady state, its start left out
    after_first_bind_cpu_ms_per_pod: float | None = None
    #: the scheduler process's peak resident set (VmHWM), MiB, read just before it is stopped
    peak_rss_mb: float | None = None
    #: `--scheduler-cpus`: the CPUs the scheduler could run on, read from the kernel at the
    #: end of the run (None: not pinned)
    scheduler_cpus: list[int] | None = None

    def __post_init__(self) -> None:
        database = 1000 * (self.postgres_cpu_seconds or 0.0) / max(self.bound, 1)
        self.log_cpu_ms_per_pod = self.cpu_ms_per_pod + database
        if self.first_bind_cpu_seconds is not None and self.bound > 1:
            after = self.scheduler_cpu_seconds - self.first_bind_cpu_seconds
            self.after_first_bind_cpu_ms_per_pod = 1000 * after / (self.bound - 1)

    def line(self) -> str:
        extra = ""
        if self.postgres_cpu_seconds is not None:
            extra += f", postgres {self.postgres_cpu_seconds:.1f} s (machine-wide)"
        if self.events is not None:
            extra += f"; {self.events} events logged on {self.database}"
        line = (
            f"{self.scheduler} (round {self.round}): {self.bound}/{self.pods} pods bound on "
            f"{self.nodes} nodes, {self.pods_per_second:.1f} pods/s (first to last bind "
            f"{self.seconds:.2f} s; from start {self.from_start_seconds:.2f} s); CPU: "
            f"scheduler {self.scheduler_cpu_seconds:.1f} s ({self.cpu_ms_per_pod:.2f} ms/pod"
            f"{self._start()}), "
            f"kube-apiserver {self.apiserver_cpu_seconds:.1f} s, etcd {self.etcd_cpu_seconds:.1f} s"
            f"{extra}"
        )
        if self.peak_rss_mb is not None:
            line += f"; peak RSS {self.peak_rss_mb:.0f} MiB"
        if self.scheduler_cpus is not None:
            line += f"; on CPU(s) {','.join(map(str, self.scheduler_cpus))} only"
        if self.watch_restarts:
            line += f" (the watch was restarted {self.watch_restarts} time(s))"
        return line + (f" -- {self.error}" if self.error else "")

    def _start(self) -> str:
        if self.first_bind_cpu_seconds is None or self.after_first_bind_cpu_ms_per_pod is None:
            return ""
        return (
            f"; {self.first_bind_cpu_seconds:.2f} s to the first bind, "
            f"{self.after_first_bind_cpu_ms_per_pod:.2f} ms/pod after it"
        )


@dataclass(slots=True)
class KubeBenchResult:
    nodes: int
    pods: int
    qps: float
    burst: int
    rounds: int
    database: str
    runs: list[RunResult] = field(default_factory=list)
    #: `--workload`: the scheduler_perf workload run (pods: its measured pods)
    workload: str | None = None

    def _mean(self, scheduler: str, attribute: str) -> float | None:
        values = [getattr(r, attribute) for r in self.runs if r.scheduler == scheduler]
        if not values or any(v is None for v in values):
            return None
        return statistics.mean(values)

    @property
    def ok(self) -> bool:
        return bool(self.runs) and all(r.error is None and r.bound == r.pods for r in self.runs)

    def ratios(self) -> dict[str, float | None]:
        """eventsched / kube-scheduler, of the means over the rounds."""
        out: dict[str, float | None] = {}
        for key in (
            "pods_per_second",
            "cpu_ms_per_pod",
            "log_cpu_ms_per_pod",
            "first_bind_cpu_seconds",
            "after_first_bind_cpu_ms_per_pod",
            "peak_rss_mb",
        ):
            ours, theirs = self._mean(EVENTSCHED, key), self._mean(KUBE_SCHEDULER, key)
            out[key] = ours / theirs if ours is not None and theirs else None
        return out

    def summary(self) -> str:
        """The means and their ratios; eventsched's CPU with its PostgreSQL backends'."""
        ours_pps = self._mean(EVENTSCHED, "pods_per_second")
        ours_cpu = self._mean(EVENTSCHED, "log_cpu_ms_per_pod")
        theirs_pps = self._mean(KUBE_SCHEDULER, "pods_per_second")
        theirs_cpu = self._mean(KUBE_SCHEDULER, "cpu_ms_per_pod")
        if theirs_pps is None or ours_pps is None or theirs_cpu is None or ours_cpu is None:
            return (
                f"summary: eventsched {ours_pps or 0:.1f} pods/s, {ours_cpu or 0:.2f} ms CPU/pod "
                "(no kube-scheduler binary to compare with)"
            )
        ratios = self.ratios()
        with_log = ", its PostgreSQL backends' included" if self.database == "PostgreSQL" else ""
        what = f"{self.workload}, " if self.workload else ""
        return (
            f"summary ({what}{self.nodes} nodes x {self.pods} pods, QPS {self.qps:g}/burst {self.burst}, "
            f"mean of {self.rounds} round(s), eventsched on {self.database}): "
            f"eventsched/kube-scheduler pods/s {ratios['pods_per_second']:.2f}x "
            f"({ours_pps:.1f} vs {theirs_pps:.1f}); CPU per pod{with_log} "
            f"{ratios['log_cpu_ms_per_pod']:.2f}x ({ours_cpu:.2f} vs {theirs_cpu:.2f} ms)"
            f"{self._start_summary()}{self._rss_summary()}"
        )

    def _rss_summary(self) -> str:
        ours = self._mean(EVENTSCHED, "peak_rss_mb")
        theirs = self._mean(KUBE_SCHEDULER, "peak_rss_mb")
        if ours is None or theirs is None:
            return ""
        return f"; peak RSS {ours:.0f} vs {theirs:.0f} MiB"

    def _start_summary(self) -> str:
        """The schedulers' CPU to their first bind and their own CPU per pod after it."""
        ours_start = self._mean(EVENTSCHED, "first_bind_cpu_seconds")
        theirs_start = self._mean(KUBE_SCHEDULER, "first_bind_cpu_seconds")
        ours_after = self._mean(EVENTSCHED, "after_first_bind_cpu_ms_per_pod")
        theirs_after = self._mean(KUBE_SCHEDULER, "after_first_bind_cpu_ms_per_pod")
        if None in (ours_start, theirs_start, ours_after, theirs_after):
            return ""
        return (
            f"; CPU to the first bind {ours_start:.2f} vs {theirs_start:.2f} s, the process's "
            f"own per pod after it {ours_after:.2f} vs {theirs_after:.2f} ms"
        )

    def to_dict(self) -> dict[str, Any]:
        result = asdict(self)
        result["ratios"] = self.ratios()
        result["ok"] = self.ok
        return result
