"""The breadth suite: every recorded generated scenario (answers/generated/chunk-*.jsonl,
recorded by `python -m tests.differential.record_generated`) through eventsched, compared
with kube-scheduler v1.28's answer exactly as test_differential.py compares the families'.

Each test case is a slice of SLICE scenarios of one chunk file (a few seconds each); it
fails listing every scenario of the slice that disagrees, unless the scenario is in KNOWN
(strict: a KNOWN scenario that agrees fails too, so the list stays true).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from eventsched.config.file import parse_config
from eventsched.framework.profile import Profile
from eventsched.plugins import in_tree_registry
from tests.differential import report
from tests.differential.compare import compare
from tests.differential.eventsched_run import run_scenario, template_database
from tests.differential.generated import (
    DIRECTORY,
    WEIGHTS,
    chunk_path,
    digest,
    generate_one,
    read_chunk,
    recorded_chunks,
    scheduler_document,
)
from tests.differential.scenario import Answer

SLICE = 100

#: Generated scenarios that disagree for a known upstream reason: id -> the reason.
KNOWN: dict[str, str] = {}

_PROFILES: dict[str, Profile] = {
    p.scheduler_name: p
    for p in parse_config(scheduler_document(), "generated.py", in_tree_registry()).profiles
}


def _slices() -> list[Any]:
    out = []
    for chunk in recorded_chunks(DIRECTORY):
        count = len(read_chunk(chunk_path(chunk)))
        for first in range(0, count, SLICE):
            out.append(pytest.param(chunk, first, id=f"chunk-{chunk:03d}[{first}:{first + SLICE}]"))
    return out


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("generated")


def check_line(line: dict[str, Any], workdir: Path) -> list[str]:
    """What differs between eventsched and the recorded answer (empty: they agree)."""
    index = int(line["id"].split("/")[1])
    scenario = generate_one(index)
    if digest(scenario) != line["digest"]:
        return ["the generator changed since the recording: run record_generated again"]
    if line.get("answer") is None:
        return [f"not recorded: {line.get('error')}"]
    name = _profile_name(scenario)
    began = time.perf_counter()
    outcome = run_scenario(scenario, template_database(workdir), workdir, _PROFILES[name])
    report.seconds(time.perf_counter() - began)
    problems = compare(outcome, Answer.from_json(line["answer"]), _score_plugins(name))
    return [str(p) for p in problems]


def _profile_name(scenario: dict[str, Any]) -> str:
    return str(scenario["pending"]["spec"].get("schedulerName", "default-scheduler"))


def _score_plugins(name: str) -> frozenset[str]:
    return frozenset(ref.name for ref in _PROFILES[name].plugins.get("score", ()))


@pytest.mark.parametrize(("chunk", "first"), _slices())
def test_generated_slice(chunk: int, first: int, workdir: Path) -> None:
    lines = read_chunk(chunk_path(chunk))[first : first + SLICE]
    failures = []
    for line in lines:
        sid = line["id"]
        scenario = generate_one(int(sid.split("/")[1]))
        problems = check_line(line, workdir)
        # The agreement table's rows: one per profile.
        row = f"gen:{_profile_name(scenario)}/{sid.split('/')[1]}"
        if sid in KNOWN:
            report.note(row, "disagree", problems)
            if not problems:
                failures.append(f"{sid}: listed in KNOWN ({KNOWN[sid]}) but agrees now")
            continue
        report.note(row, "disagree" if problems else "agree", problems)
        if problems:
            failures.append(f"{sid} ({scenario['description']}):\n    " + "\n    ".join(problems))
    assert not failures, f"{len(failures)} of {len(lines)} disagree:\n" + "\n".join(failures)


def test_the_generator_is_seeded_and_reaches_every_profile_and_family() -> None:
    """The same scenarios on every run (the recordings hold only digests), and the first
    chunk alone already sends pods to every profile and draws every family."""
    first = [generate_one(i) for i in range(500)]
    assert [digest(s) for s in first[:50]] == [digest(generate_one(i)) for i in range(50)]
    profiles = {_profile_name(s) for s in first}
    assert profiles == set(_PROFILES)
    families = {s["description"].split(":")[0] for s in first}
    assert families == set(WEIGHTS)
