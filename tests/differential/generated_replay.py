"""Replaying the breadth suite (answers/generated/chunk-*.jsonl) through eventsched: what
the test_generated*.py modules share. Each module replays a range of chunk files, so that
pytest-xdist's `--dist loadfile` (one file per worker) spreads the suite over both workers.

A scenario of the family builders runs through eventsched_run.py with its profile and is
compared as test_differential.py compares the families'; a preemption scenario
(gen/PREEMPTION_START on) runs through preemption/run.py with the default profile and
DefaultPreemption, and is compared as test_preemption.py compares the hand-made ones.

Each test case is a slice of SLICE scenarios of one chunk file (a few seconds each); it
fails listing every scenario of the slice that disagrees, unless the scenario is in KNOWN
(strict: a KNOWN scenario that agrees fails too, so the list stays true).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from eventsched.config import default_profile
from eventsched.config.file import parse_config
from eventsched.framework.profile import Profile
from eventsched.plugins import in_tree_registry
from tests.differential import report
from tests.differential.compare import compare
from tests.differential.eventsched_run import run_scenario, template_database
from tests.differential.generated import (
    DIRECTORY,
    chunk_path,
    digest,
    generate_one,
    read_chunk,
    recorded_chunks,
    scheduler_document,
)
from tests.differential.generated_preemption import is_preemption
from tests.differential.preemption import compare as preemption_compare
from tests.differential.preemption.run import preemption_profile, run_case
from tests.differential.scenario import Answer

SLICE = 100

#: Generated scenarios that disagree for a known upstream reason: id -> the reason.
KNOWN: dict[str, str] = {}

#: Generated scenarios whose outcome depends on timing in both schedulers (which of two
#: pods woken by the same deletions is retried first: kube-scheduler's 1 s backoffs and the
#: recorder's polling, eventsched's 0.05 s ones and the machine's load), so that neither
#: agreement nor disagreement is stable: replayed and shown in the agreement table as
#: "explained", never failing. id -> the race.
RACED: dict[str, str] = {
    "gen/4785": "p1 preempts r0, r1, r2 on node-0; the Never pod p0, woken by their "
    "deletion, and p1 race for node-0: p0 first makes p1 preempt p0 too (topology spread "
    "over app=web), p1 first leaves p0 to bind after it (kube-scheduler's recording; "
    "eventsched's replay goes either way from run to run)",
}

PROFILES: dict[str, Profile] = {
    p.scheduler_name: p
    for p in parse_config(scheduler_document(), "generated.py", in_tree_registry()).profiles
}
PREEMPTION_PROFILE = preemption_profile(default_profile(preemption_compare.SCHEDULER_NAME))


def slices(chunks: range) -> list[Any]:
    """One test case per SLICE recorded scenarios of each chunk file in `chunks`."""
    out = []
    for chunk in recorded_chunks(DIRECTORY):
        if chunk not in chunks:
            continue
        count = len(read_chunk(chunk_path(chunk)))
        for first in range(0, count, SLICE):
            out.append(pytest.param(chunk, first, id=f"chunk-{chunk:03d}[{first}:{first + SLICE}]"))
    return out


def check_line(line: dict[str, Any], workdir: Path) -> list[str]:
    """What differs between eventsched and the recorded answer (empty: they agree)."""
    index = int(line["id"].split("/")[1])
    scenario = generate_one(index)
    if digest(scenario) != line["digest"]:
        return ["the generator changed since the recording: run record_generated again"]
    if line.get("answer") is None:
        return [f"not recorded: {line.get('error')}"]
    began = time.perf_counter()
    if is_preemption(index):
        ours = run_case(scenario, PREEMPTION_PROFILE, template_database(workdir), workdir)
        report.seconds(time.perf_counter() - began)
        ties: list[str] = []
        problems = [str(p) for p in preemption_compare.compare(line["answer"], ours, ties)]
        if ties:
            report.tied(f"gen:preemption/{index}", ties[0])
        return problems
    name = profile_name(scenario)
    outcome = run_scenario(scenario, template_database(workdir), workdir, PROFILES[name])
    report.seconds(time.perf_counter() - began)
    problems = compare(outcome, Answer.from_json(line["answer"]), _score_plugins(name))
    return [str(p) for p in problems]


def profile_name(scenario: dict[str, Any]) -> str:
    if isinstance(scenario["pending"], list):  # a preemption scenario's pending pods
        return "preemption"
    return str(scenario["pending"]["spec"].get("schedulerName", "default-scheduler"))


def _score_plugins(name: str) -> frozenset[str]:
    return frozenset(ref.name for ref in PROFILES[name].plugins.get("score", ()))


def replay_slice(chunk: int, first: int, workdir: Path) -> None:
    """Replay one slice; fail listing every scenario that disagrees (KNOWN aside)."""
    lines = read_chunk(chunk_path(chunk))[first : first + SLICE]
    failures = []
    for line in lines:
        sid = line["id"]
        scenario = generate_one(int(sid.split("/")[1]))
        problems = check_line(line, workdir)
        # The agreement table's rows: one per profile (preemption scenarios: one row).
        row = f"gen:{profile_name(scenario)}/{sid.split('/')[1]}"
        if sid in RACED:
            report.note(row, "explained", [f"raced: {RACED[sid]}", *problems])
            continue
        if sid in KNOWN:
            report.note(row, "disagree", problems)
            if not problems:
                failures.append(f"{sid}: listed in KNOWN ({KNOWN[sid]}) but agrees now")
            continue
        report.note(row, "disagree" if problems else "agree", problems)
        if problems:
            failures.append(f"{sid} ({scenario['description']}):\n    " + "\n    ".join(problems))
    assert not failures, f"{len(failures)} of {len(lines)} disagree:\n" + "\n".join(failures)


def slice_test(chunks: range) -> Callable[[int, int, Path], None]:
    """A module's test: one case per slice of the chunk files in `chunks`."""

    @pytest.mark.parametrize(("chunk", "first"), slices(chunks))
    def test_generated_slice(chunk: int, first: int, tmp_path: Path) -> None:
        replay_slice(chunk, first, tmp_path)

    return test_generated_slice
