"""The agreement table: each scenario's result, per version, per family and overall.

agree: eventsched gave kube-scheduler's answer. explained: it did not, exactly as
kube-scheduler without the plugins eventsched lacks does not (xfail). known: it did not,
for the causes the version's checked-in list gives (xfail; `known.py`). disagree: any
other difference (a failure).

A scenario's key is its case id: `family/index` for v1.28 (and `gen:<profile>/<index>` for
the generated ones), `v<V>/family/index` for a newer version.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

KINDS = ("agree", "explained", "known", "disagree")
LEGACY_VERSION = "1.28"


@dataclass
class Results:
    status: dict[str, str] = field(default_factory=dict)
    problems: dict[str, list[str]] = field(default_factory=dict)
    #: The causes of a known disagreement (known.py's classification).
    causes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    run_seconds: float = 0.0
    #: Scenarios compared only up to a pick among nodes tied for the top total.
    ties: dict[str, str] = field(default_factory=dict)


RESULTS = Results()


def note(scenario_id: str, status: str, problems: list[str], causes: tuple[str, ...] = ()) -> None:
    RESULTS.status[scenario_id] = status
    RESULTS.problems[scenario_id] = problems
    if causes:
        RESULTS.causes[scenario_id] = causes


def tied(scenario_id: str, where: str) -> None:
    RESULTS.ties[scenario_id] = where


def seconds(spent: float) -> None:
    RESULTS.run_seconds += spent


def version_of(case_id: str) -> tuple[str, str]:
    """(version, the id within it) of a case id: `v1.37/affinity/3` -> ("1.37", "affinity/3")."""
    head, _, rest = case_id.partition("/")
    if head.startswith("v1.") and rest:
        return head[1:], rest
    return LEGACY_VERSION, case_id


def table(results: Results = RESULTS) -> str:
    by_version: dict[str, list[str]] = defaultdict(list)
    for case_id in results.status:
        by_version[version_of(case_id)[0]].append(case_id)
    parts = [
        _version_table(version, by_version[version], results)
        for version in sorted(by_version, key=lambda v: int(v.split(".")[1]))
    ]
    parts.append(f"eventsched time in the scenarios: {results.run_seconds:.1f} s")
    if results.ties:
        parts.append(
            f"compared up to a pick among nodes tied for the top total: {len(results.ties)}"
        )
    return "\n".join(parts)


def _version_table(version: str, case_ids: list[str], results: Results) -> str:
    families: dict[str, Counter[str]] = defaultdict(Counter)
    for case_id in case_ids:
        families[version_of(case_id)[1].split("/")[0]][results.status[case_id]] += 1
    total: Counter[str] = Counter()
    lines = [
        f"kube-scheduler v{version}:",
        f"{'family':25} {'scenarios':>9} {'agree':>6} {'explained':>9} {'known':>6} "
        f"{'disagree':>8} {'agreement':>9}",
    ]
    for family in sorted(families):
        total.update(families[family])
        lines.append(_row(family, families[family]))
    lines.append(_row("all", total))
    causes: Counter[str] = Counter(
        c
        for case_id in case_ids
        if results.status[case_id] == "known"
        for c in results.causes.get(case_id, ())
    )
    if causes:
        lines.append(f"known disagreements at v{version} by cause:")
        lines += [f"  {n:4}  {cause}" for cause, n in causes.most_common()]
    disagreements = [
        f"  {case_id}: " + "; ".join(results.problems[case_id])
        for case_id in sorted(case_ids, key=_order)
        if results.status[case_id] == "disagree"
    ]
    if disagreements:
        lines += [f"disagreements at v{version} not explained nor known:", *disagreements]
    return "\n".join(lines)


def _row(name: str, counts: Counter[str]) -> str:
    n = sum(counts.values())
    rate = f"{100 * counts['agree'] / n:.1f}%" if n else "-"
    return (
        f"{name:25} {n:9} {counts['agree']:6} {counts['explained']:9} {counts['known']:6} "
        f"{counts['disagree']:8} {rate:>9}"
    )


def _order(case_id: str) -> tuple[str, int, str]:
    """By family, then numbered scenarios by number (named ones, preemption's, by name)."""
    family, _, index = version_of(case_id)[1].partition("/")
    return family, int(index) if index.isdigit() else -1, index
