"""The scenarios known to disagree at a version, with their upstream causes: a checked-in list,
rewritten by this script (run by hand when eventsched's behaviour at that version changes).

    python -m tests.differential.known --version 1.37 [--jobs 2]

It replays every recorded family scenario of the version (answers/v<V>/) through
eventsched deciding as that version, exactly as test_differential.py does, and writes
disagreements/v<V>.json: each scenario that disagrees (and is not explained by plugins
eventsched lacks) with the causes `causes.classify` finds, and per cause its upstream
description, its count and one example. test_differential.py marks the listed scenarios
xfail(strict=True): a listed scenario that agrees, or disagrees for other causes, fails,
so the list shrinks as eventsched learns the version and never hides a new disagreement.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

from eventsched.logs import configure_logging
from tests.differential.causes import CAUSES, classify
from tests.differential.eventsched_run import run_scenario, template_database
from tests.differential.scenario import load_family, recorded_families
from tests.differential.verdict import judge
from tests.differential.versions import target

DIRECTORY = Path(__file__).parent / "disagreements"


def known_path(version: str) -> Path:
    return DIRECTORY / f"v{version}.json"


@cache
def known(version: str) -> dict[str, tuple[str, ...]]:
    """scenario id -> its causes, as listed for `version` (empty without a list)."""
    path = known_path(version)
    if not path.exists():
        return {}
    listed = json.loads(path.read_text())["scenarios"]
    return {sid: tuple(causes) for sid, causes in listed.items()}


def command(version: str) -> str:
    return f"python -m tests.differential.known --version {version}"


def scenarios(version: str) -> list[dict[str, Any]]:
    directory = target(version).answers
    return [
        s
        for family in recorded_families(directory)
        for s in load_family(family, directory)["scenarios"]
    ]


def replay(version: str, scenario: dict[str, Any]) -> tuple[str, str, tuple[str, ...]]:
    """(scenario id, status, causes) of one scenario through eventsched at `version`."""
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


def _quiet() -> None:
    """eventsched's own log (a line per scenario opened, an error where a scenario makes
    eventsched's attempt fail) left out: what differs is what the list says."""
    configure_logging("console", "critical")


def document(version: str, results: list[tuple[str, str, tuple[str, ...]]]) -> dict[str, Any]:
    listed = {sid: list(causes) for sid, status, causes in results if status == "disagree"}
    counts: Counter[str] = Counter(c for causes in listed.values() for c in causes)
    examples: dict[str, str] = {}
    for sid, causes in listed.items():
        for c in causes:
            examples.setdefault(c, sid)
    return {
        "kubernetesVersion": version,
        "regenerate": command(version),
        "replayed": len(results),
        "agree": sum(1 for _, status, _ in results if status == "agree"),
        "causes": {
            c: {"count": n, "example": examples[c], "upstream": CAUSES.get(c, "")}
            for c, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        },
        "scenarios": listed,
    }


def dump(doc: dict[str, Any]) -> str:
    """One cause and one scenario per line, so that the list's diff shows what changed."""
    lines = ["{"]
    for key in ("kubernetesVersion", "regenerate", "replayed", "agree"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(doc[key])},")
    for key in ("causes", "scenarios"):
        items = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in doc[key].items()]
        body = ",\n".join(items)
        lines.append(f"  {json.dumps(key)}: {{" + (f"\n{body}\n  " if items else "") + "}")
        lines[-1] += "," if key == "causes" else ""
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential.known")
    parser.add_argument("--version", required=True, help="a recorded version, e.g. 1.37")
    parser.add_argument("--jobs", type=int, default=1, help="processes replaying")
    args = parser.parse_args(argv)
    todo = scenarios(args.version)
    if not todo:
        print(f"no answers recorded for {args.version} in {target(args.version).answers}")
        return 2
    began = time.monotonic()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs), initializer=_quiet) as pool:
        results = list(pool.map(replay, [args.version] * len(todo), todo, chunksize=8))
    doc = document(args.version, results)
    DIRECTORY.mkdir(exist_ok=True)
    known_path(args.version).write_text(dump(doc))
    print(
        f"{len(todo)} scenarios at {args.version} in {time.monotonic() - began:.0f} s: "
        f"{doc['agree']} agree, {len(doc['scenarios'])} listed in {known_path(args.version)}",
        file=sys.stderr,
    )
    for c, info in doc["causes"].items():
        print(f"{info['count']:4}  {c}  (e.g. {info['example']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
