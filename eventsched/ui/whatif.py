"""What-if: the counterfactual replay (`eventsched replay --config`) on a thread, with progress.

The configuration is a file of the directory given to `eventsched ui --configs
DIR` or pasted YAML, validated as `eventsched config check` validates it. The
time range selects the history: the replay runs from the log's start (the
placements before the range shape the view in it) up to the end of the range,
and the report keeps the pods with an attempt in the range. Nothing is written.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import yaml
from sqlalchemy.engine import Engine

from eventsched.audit.counterfactual import CounterfactualReport, counterfactual
from eventsched.config.file import load_config, parse_config
from eventsched.config.types import ConfigError, SchedulerConfig
from eventsched.events.reader import EventReader
from eventsched.plugins import full_registry
from eventsched.ui import reads

#: Finished jobs kept for their pages, oldest dropped first.
MAX_JOBS = 20
#: Replays running at once; each takes a core while it runs.
MAX_RUNNING = 2
#: Largest pasted configuration accepted.
MAX_YAML_BYTES = 256 * 1024


def config_files(directory: Path | None) -> list[str]:
    """The configurations one may pick: YAML files directly in `directory`."""
    if directory is None or not directory.is_dir():
        return []
    return sorted(
        p.name for p in directory.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml")
    )


def load_choice(directory: Path | None, chosen: str, pasted: str) -> tuple[str, SchedulerConfig]:
    """(source shown, configuration); ConfigError names the field of what is wrong."""
    registry = full_registry()
    if pasted.strip():
        if len(pasted.encode()) > MAX_YAML_BYTES:
            raise ConfigError("pasted YAML", "", f"larger than {MAX_YAML_BYTES} bytes")
        try:
            doc = yaml.safe_load(pasted)
        except yaml.YAMLError as exc:
            raise ConfigError("pasted YAML", "", f"not valid YAML: {exc}") from exc
        return "pasted YAML", parse_config(doc, "pasted YAML", registry)
    if not chosen:
        raise ConfigError("the form", "config", "pick a configuration file or paste one")
    if chosen not in config_files(directory) or directory is None:
        raise ConfigError("the form", "config", f"no configuration named {chosen!r} here")
    return chosen, load_config(directory / chosen, registry)


@dataclass(slots=True)
class Job:
    id: str
    source: str
    since: datetime | None
    until: datetime | None
    last_position: int = 0
    reached: int = 0
    state: str = "running"
    error: str = ""
    report: CounterfactualReport | None = None
    started: float = field(default_factory=time.monotonic)
    finished: float = 0.0

    @property
    def percent(self) -> int:
        if self.last_position <= 0:
            return 100 if self.state != "running" else 0
        return min(100, round(100 * self.reached / self.last_position))


class Jobs:
    """What-if runs: one thread each, their progress and results in memory."""

    def __init__(self, reader: EventReader, engine: Engine) -> None:
        self.reader = reader
        self.engine = engine
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def running(self) -> int:
        with self._lock:
            return sum(1 for job in self._jobs.values() if job.state == "running")

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def start(
        self,
        source: str,
        config: SchedulerConfig,
        since: datetime | None,
        until: datetime | None,
    ) -> Job:
        job = Job(secrets.token_hex(8), source, since, until)
        job.last_position = (
            reads.position_at(self.engine, until) if until else reads.last_position(self.engine)
        )
        with self._lock:
            self._jobs[job.id] = job
            while len(self._jobs) > MAX_JOBS:
                oldest = next(iter(self._jobs))
                del self._jobs[oldest]
        threading.Thread(
            target=self._run, args=(job, config), name=f"what-if-{job.id}", daemon=True
        ).start()
        return job

    def _run(self, job: Job, config: SchedulerConfig) -> None:
        def progress(position: int) -> None:
            job.reached = position

        try:
            report = counterfactual(
                self.reader,
                full_registry(),
                config.profiles,
                progress,
                until=job.last_position,
            )
            if job.since is not None or job.until is not None:
                wanted = reads.pods_attempted(self.engine, job.since, job.until)
                report.pods = [p for p in report.pods if p.uid in wanted]
            job.report = report
            job.state = "done"
        except Exception as exc:
            job.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            job.state = "failed"
        finally:
            job.reached = job.last_position
            job.finished = time.monotonic()


@dataclass(frozen=True, slots=True)
class Bar:
    node: str
    before: int
    after: int
    y: int


@dataclass(frozen=True, slots=True)
class Chart:
    """An inline SVG bar chart of pods per node before and after (sizes in px)."""

    bars: list[Bar]
    scale: float
    width: int
    height: int
    label_width: int = 140
    row: int = 28


def load_chart(report: CounterfactualReport) -> Chart:
    load = report.load()
    most = max((max(a, b) for a, b in load.values()), default=0) or 1
    row = 28
    bars = [Bar(node, a, b, i * row) for i, (node, (a, b)) in enumerate(load.items())]
    width = 560
    return Chart(bars, (width - 140 - 40) / most, width, max(row, len(bars) * row) + 24)
