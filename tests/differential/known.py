"""Rewrite the list of the scenarios known to disagree at a version (knownlist.py), by hand,
when eventsched's behaviour at that version changed:

    python -m tests.differential.known --version 1.37 [--jobs 2]

It replays every recorded scenario of the version through eventsched deciding as that
version, exactly as the tests do: the families (answers/v<V>/*.json, test_differential.py)
and the generated ones (answers/v<V>/generated/, generated_versions.py). It writes
disagreements/v<V>.json: each scenario that disagrees (and is not explained by plugins
eventsched lacks) with the causes `causes.classify` finds. The tests then mark the listed
scenarios as known: a listed scenario that agrees, or disagrees for other causes, fails,
so the list shrinks as eventsched learns the version and never hides a new disagreement.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from eventsched.logs import configure_logging
from tests.differential.causes import classify
from tests.differential.eventsched_run import run_scenario, template_database
from tests.differential.generated_versions import lines, replay_line
from tests.differential.knownlist import DIRECTORY, Result, document, dump, known_path
from tests.differential.scenario import load_family, recorded_families
from tests.differential.verdict import judge
from tests.differential.versions import target


def scenarios(version: str) -> list[dict[str, Any]]:
    """The version's recorded family scenarios."""
    directory = target(version).answers
    return [
        s
        for family in recorded_families(directory)
        for s in load_family(family, directory)["scenarios"]
    ]


def replay(version: str, scenario: dict[str, Any]) -> Result:
    """One family scenario through eventsched at `version`, as test_differential judges it."""
    sid = scenario["id"]
    if scenario.get("answer") is None:
        return sid, "disagree", ("not recorded",)
    t = target(version)
    with tempfile.TemporaryDirectory(prefix="eventsched-known-") as tmp:
        workdir = Path(tmp)
        outcome = run_scenario(scenario, template_database(workdir), workdir, t.profile)
    verdict = judge(scenario, outcome, t)
    if verdict.status != "disagree":
        return sid, verdict.status, ()
    return sid, "disagree", classify(scenario, outcome, verdict, version)


def replay_generated(version: str, line: dict[str, Any]) -> Result:
    """One generated scenario's line through eventsched at `version`."""
    with tempfile.TemporaryDirectory(prefix="eventsched-known-") as tmp:
        status, _, causes = replay_line(line, Path(tmp), version)
    return line["id"], status, causes


def _quiet() -> None:
    """eventsched's own log (a line per scenario opened, an error where a scenario makes
    eventsched's attempt fail) left out: what differs is what the list says."""
    configure_logging("console", "critical")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential.known")
    parser.add_argument("--version", required=True, help="a recorded version, e.g. 1.37")
    parser.add_argument("--jobs", type=int, default=1, help="processes replaying")
    args = parser.parse_args(argv)
    families, generated = scenarios(args.version), lines(args.version)
    if not families and not generated:
        print(f"no answers recorded for {args.version} in {target(args.version).answers}")
        return 2
    began = time.monotonic()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs), initializer=_quiet) as pool:
        results = list(pool.map(replay, [args.version] * len(families), families, chunksize=8))
        results += pool.map(
            replay_generated, [args.version] * len(generated), generated, chunksize=8
        )
    doc = document(args.version, results)
    DIRECTORY.mkdir(exist_ok=True)
    known_path(args.version).write_text(dump(doc))
    print(
        f"{len(results)} scenarios at {args.version} in {time.monotonic() - began:.0f} s: "
        f"{doc['agree']} agree, {len(doc['scenarios'])} listed in {known_path(args.version)}",
        file=sys.stderr,
    )
    for c, info in doc["causes"].items():
        print(f"{info['count']:4}  {c}  (e.g. {info['example']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
