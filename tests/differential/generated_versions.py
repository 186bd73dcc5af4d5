"""The breadth suite at a newer Kubernetes version: answers/v<V>/generated/chunk-*.jsonl
(recorded by `python -m tests.differential.record_generated --kubernetes-version V`)
replayed through eventsched's profiles built from the same KubeSchedulerConfiguration
document (`generated.scheduler_document()`) deciding as V (`features_for(V)`), and compared
as generated_replay.py compares v1.28's.

A scenario that disagrees must be on the version's list of known disagreements
(disagreements/v<V>.json, `python -m tests.differential.known --version V`) for exactly
the causes listed there; a listed scenario that agrees, or disagrees for other causes,
fails its slice, so the list is kept true as eventsched learns the version.
"""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from eventsched.config.featuregates import features_for
from eventsched.config.file import parse_config
from eventsched.framework.profile import Profile
from eventsched.plugins import in_tree_registry
from tests.differential import report
from tests.differential.causes import classify
from tests.differential.compare import compare
from tests.differential.eventsched_run import run_scenario, template_database
from tests.differential.generated import (
    chunk_path,
    digest,
    generate_one,
    read_chunk,
    recorded_chunks,
    scheduler_document,
)
from tests.differential.generated_replay import SLICE, profile_name
from tests.differential.knownlist import command, known
from tests.differential.scenario import Answer, answers_dir, recorded_versions
from tests.differential.verdict import Verdict


def generated_dir(version: str) -> Path:
    return answers_dir(version) / "generated"


def generated_versions() -> list[str]:
    """The newer versions with recorded generated scenarios."""
    return [
        v
        for v in recorded_versions()
        if v != "1.28" and generated_dir(v).is_dir() and recorded_chunks(generated_dir(v))
    ]


def lines(version: str) -> list[dict[str, Any]]:
    directory = generated_dir(version)
    return [
        line for c in recorded_chunks(directory) for line in read_chunk(chunk_path(c, directory))
    ]


@cache
def profiles(version: str) -> dict[str, Profile]:
    config = parse_config(
        scheduler_document(), "generated.py", in_tree_registry(), features_for(version)
    )
    return {p.scheduler_name: p for p in config.profiles}


def replay_line(
    line: dict[str, Any], workdir: Path, version: str
) -> tuple[str, list[str], tuple[str, ...]]:
    """(agree or disagree, what differs, its causes) of one recorded line at `version`."""
    scenario = generate_one(int(line["id"].split("/")[1]))
    if digest(scenario) != line["digest"]:
        return "disagree", ["the generator changed since the recording"], ("generator changed",)
    if line.get("answer") is None:
        return "disagree", [f"not recorded: {line.get('error')}"], ("not recorded",)
    profile = profiles(version)[profile_name(scenario)]
    began = time.perf_counter()
    outcome = run_scenario(scenario, template_database(workdir), workdir, profile)
    report.seconds(time.perf_counter() - began)
    plugins = frozenset(ref.name for ref in profile.plugins.get("score", ()))
    problems = compare(outcome, Answer.from_json(line["answer"]), plugins)
    if not problems:
        return "agree", [], ()
    recorded = {**scenario, "answer": line["answer"]}
    causes = classify(recorded, outcome, Verdict("disagree", problems), version)
    return "disagree", [str(p) for p in problems], causes


def slices() -> list[Any]:
    """One test case per SLICE recorded scenarios of each chunk file of each version."""
    out = []
    for version in generated_versions():
        directory = generated_dir(version)
        for chunk in recorded_chunks(directory):
            count = len(read_chunk(chunk_path(chunk, directory)))
            for first in range(0, count, SLICE):
                name = f"v{version}/chunk-{chunk:03d}[{first}:{first + SLICE}]"
                out.append(pytest.param(version, chunk, first, id=name))
    return out


def replay_slice(version: str, chunk: int, first: int, workdir: Path) -> None:
    """Replay one slice; fail listing every scenario that disagrees and is not listed for
    its causes, and every listed one that no longer disagrees so."""
    listed = known(version)
    todo = read_chunk(chunk_path(chunk, generated_dir(version)))[first : first + SLICE]
    failures = []
    for line in todo:
        sid = line["id"]
        status, problems, causes = replay_line(line, workdir, version)
        row = f"v{version}/gen:{profile_name(generate_one(int(sid.split('/')[1])))}/{sid.split('/')[1]}"
        expected = listed.get(sid)
        if status == "agree":
            report.note(row, "agree", [])
            if expected is not None:
                failures.append(f"{sid}: listed ({', '.join(expected)}) but agrees now")
        elif expected == causes:
            report.note(row, "known", problems, causes)
        else:
            report.note(row, "disagree", problems)
            was = f"listed for {', '.join(expected)}" if expected else "not listed"
            failures.append(
                f"{sid} ({was}) disagrees for {', '.join(causes)}:\n    " + "\n    ".join(problems)
            )
    assert not failures, (
        f"{len(failures)} of {len(todo)} at v{version}:\n"
        + "\n".join(failures)
        + f"\n(rewrite the list: {command(version)})"
    )
