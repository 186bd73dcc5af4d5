"""The agreement table: each scenario's result, per family and overall.

agree: eventsched gave kube-scheduler's answer. explained: it did not, exactly as
kube-scheduler without the plugins eventsched lacks does not (xfail). disagree: any other
difference (a failure).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

KINDS = ("agree", "explained", "disagree")


@dataclass
class Results:
    status: dict[str, str] = field(default_factory=dict)
    problems: dict[str, list[str]] = field(default_factory=dict)
    run_seconds: float = 0.0
    #: Scenarios compared only up to a pick among nodes tied for the top total.
    ties: dict[str, str] = field(default_factory=dict)


RESULTS = Results()


def note(scenario_id: str, status: str, problems: list[str]) -> None:
    RESULTS.status[scenario_id] = status
    RESULTS.problems[scenario_id] = problems


def tied(scenario_id: str, where: str) -> None:
    RESULTS.ties[scenario_id] = where


def seconds(spent: float) -> None:
    RESULTS.run_seconds += spent


def table(results: Results = RESULTS) -> str:
    families: dict[str, Counter[str]] = defaultdict(Counter)
    for sid, status in results.status.items():
        families[sid.split("/")[0]][status] += 1
    total: Counter[str] = Counter()
    lines = [
        f"{'family':25} {'scenarios':>9} {'agree':>6} {'explained':>9} {'disagree':>8} {'agreement':>9}"
    ]
    for family in sorted(families):
        total.update(families[family])
        lines.append(_row(family, families[family]))
    lines.append(_row("all", total))
    lines.append(f"eventsched time in the scenarios: {results.run_seconds:.1f} s")
    if results.ties:
        lines.append(
            f"compared up to a pick among nodes tied for the top total: {len(results.ties)}"
        )
    disagreements = [
        f"  {sid}: " + "; ".join(results.problems[sid])
        for sid in sorted(results.status, key=_order)
        if results.status[sid] == "disagree"
    ]
    if disagreements:
        lines += ["disagreements not explained by missing plugins:", *disagreements]
    return "\n".join(lines)


def _row(name: str, counts: Counter[str]) -> str:
    n = sum(counts.values())
    rate = f"{100 * counts['agree'] / n:.1f}%" if n else "-"
    return f"{name:25} {n:9} {counts['agree']:6} {counts['explained']:9} {counts['disagree']:8} {rate:>9}"


def _order(sid: str) -> tuple[str, int, str]:
    """By family, then numbered scenarios by number (named ones, preemption's, by name)."""
    family, _, index = sid.partition("/")
    return family, int(index) if index.isdigit() else -1, index
