"""The overview's shadow section: how often eventsched agrees with the scheduler it
shadows (placements: agree or tie; failures: the same message), per scheduler and over
time, and the newest differences."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import ClassVar

from sqlalchemy.engine import Engine

from eventsched.ui import shadowreads
from eventsched.ui.shadow import PLACED, UNSCHEDULABLE, ShadowVerdict


@dataclass(slots=True)
class Tally:
    """Verdicts on one kind of decision (placements, failures or nominations)."""

    agree: int = 0
    tie: int = 0
    differ: int = 0

    def add(self, verdict: str, count: int) -> None:
        if verdict in ("agree", "tie", "differ"):
            setattr(self, verdict, getattr(self, verdict) + count)

    @property
    def total(self) -> int:
        return self.agree + self.tie + self.differ

    @property
    def agreeing(self) -> int:
        return self.agree + self.tie

    @property
    def rate(self) -> float | None:
        """(agree + tie) / all, in percent; None when there is none."""
        return 100.0 * self.agreeing / self.total if self.total else None


@dataclass(slots=True)
class Tallies:
    """One shadowed scheduler's verdicts, or one time bucket's."""

    key: str
    placed: Tally = field(default_factory=Tally)
    unschedulable: Tally = field(default_factory=Tally)
    nominated: Tally = field(default_factory=Tally)

    def add(self, observed: str, verdict: str, count: int) -> None:
        tally = {PLACED: self.placed, UNSCHEDULABLE: self.unschedulable}.get(
            observed, self.nominated
        )
        tally.add(verdict, count)


def tallies(counts: list[shadowreads.VerdictCount]) -> list[Tallies]:
    """VerdictCounts (shadowreads) summed per key, in the keys' order."""
    by_key: dict[str, Tallies] = {}
    for c in counts:
        by_key.setdefault(c.key, Tallies(c.key)).add(c.observed, c.verdict, c.count)
    return list(by_key.values())


#: The time buckets of the agreement over time: (unit, its length); the finest whose
#: count over the verdicts' span stays within MAX_BUCKETS.
UNITS = (
    ("second", timedelta(seconds=1)),
    ("minute", timedelta(minutes=1)),
    ("hour", timedelta(hours=1)),
    ("day", timedelta(days=1)),
)
MAX_BUCKETS = 120


def bucket_unit(first: datetime, last: datetime) -> str:
    span = last - first
    return next((u for u, size in UNITS if span / size < MAX_BUCKETS), "day")


@dataclass(frozen=True, slots=True)
class Window:
    label: str
    length: timedelta


#: The overview's windows: ?shadow=KEY.
WINDOWS = {
    "1h": Window("last hour", timedelta(hours=1)),
    "1d": Window("last day", timedelta(days=1)),
    "7d": Window("last 7 days", timedelta(days=7)),
    "30d": Window("last 30 days", timedelta(days=30)),
}
DEFAULT_WINDOW = "1d"
#: Differences listed, the newest first.
MAX_DIFFERENCES = 50


#: The chart's columns share about this many pixels, each 3 to 40 wide.
CHART_WIDTH, MIN_COLUMN, MAX_COLUMN = 480, 3, 40


@dataclass(slots=True)
class Chart:
    """The agreement over time as stacked columns: agree, tie, differ per bucket."""

    #: (the bucket's place among every bucket, its verdicts), for the buckets with any.
    columns: list[tuple[int, Tallies]]
    most: int
    width: int
    height: int = 150
    column: int = 8
    #: Pixels left of the first column, for the axis' labels.
    left: ClassVar[int] = 40

    #: The first and the last bucket, short (the day left out of seconds and minutes).
    first: str = ""
    last: str = ""

    def y(self, count: int) -> float:
        return round((self.height - 30) * count / self.most, 1) if self.most else 0.0


@dataclass(slots=True)
class ShadowOverview:
    window: str
    label: str
    schedulers: list[Tallies]
    unit: str
    buckets: list[Tallies]
    differences: list[ShadowVerdict]
    chart: Chart
    #: Whether the list of differences was cut at MAX_DIFFERENCES.
    more: bool = False

    @property
    def placed(self) -> Tally:
        return _sum(t.placed for t in self.schedulers)

    @property
    def unschedulable(self) -> Tally:
        return _sum(t.unschedulable for t in self.schedulers)

    @property
    def nominated(self) -> Tally:
        return _sum(t.nominated for t in self.schedulers)


def _sum(parts: Iterable[Tally]) -> Tally:
    total = Tally()
    for t in parts:
        total.agree += t.agree
        total.tie += t.tie
        total.differ += t.differ
    return total


def chart(buckets: list[Tallies], every: list[str], unit: str) -> Chart:
    """Columns at each bucket of `every` (the unit's buckets from the first to the last),
    those without a verdict left empty."""
    at = {label: i for i, label in enumerate(every)}
    columns = [(at[b.key], b) for b in buckets if b.key in at]
    most = max((b.placed.total for b in buckets), default=0)
    slots = max(len(every), 1)
    column = max(MIN_COLUMN, min(MAX_COLUMN, CHART_WIDTH // slots))
    made = Chart(columns, most, Chart.left + column * slots + 20, column=column)
    if every:
        made.first, made.last = _short(every[0], unit), _short(every[-1], unit)
    return made


def _short(label: str, unit: str) -> str:
    """A bucket's label without what the reader knows: "10:07:09" for "2026-11-23 10:07:09",
    "11-23 10:00" for an hour, the whole date for a day."""
    return {"second": label[11:], "minute": label[11:], "hour": label[5:]}.get(unit, label)


def every_bucket(first: datetime, last: datetime, unit: str) -> list[str]:
    """The labels of every `unit` bucket from `first`'s to `last`'s, as time_bucket spells them."""
    size = dict(UNITS)[unit]
    start = _truncate(first, unit)
    labels: list[str] = []
    moment = start
    while moment <= last and len(labels) <= MAX_BUCKETS * 2:
        labels.append(_label(moment, unit))
        moment += size
    return labels


def _truncate(moment: datetime, unit: str) -> datetime:
    moment = moment.astimezone(UTC).replace(microsecond=0)
    if unit == "second":
        return moment
    if unit == "minute":
        return moment.replace(second=0)
    if unit == "hour":
        return moment.replace(minute=0, second=0)
    return moment.replace(hour=0, minute=0, second=0)


def _label(moment: datetime, unit: str) -> str:
    return moment.strftime(
        {
            "second": "%Y-%m-%d %H:%M:%S",
            "minute": "%Y-%m-%d %H:%M",
            "hour": "%Y-%m-%d %H:00",
            "day": "%Y-%m-%d",
        }[unit]
    )


def load_overview(engine: Engine, window: str, now: datetime) -> ShadowOverview | None:
    """The verdicts of the `window` (a key of WINDOWS) back from `now`; None without any."""
    since = now - WINDOWS[window].length
    found = shadowreads.span(engine, since)
    if found is None:
        return None
    first, last = found
    unit = bucket_unit(first, last)
    buckets = tallies(shadowreads.counts_by_bucket(engine, since, unit))
    rows = shadowreads.differences(engine, since, MAX_DIFFERENCES + 1)
    return ShadowOverview(
        window,
        WINDOWS[window].label,
        tallies(shadowreads.counts_by_scheduler(engine, since)),
        unit,
        buckets,
        [ShadowVerdict.of(r) for r in rows[:MAX_DIFFERENCES]],
        chart(buckets, every_bucket(first, last, unit), unit),
        more=len(rows) > MAX_DIFFERENCES,
    )
