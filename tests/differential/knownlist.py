"""The checked-in lists of the scenarios known to disagree at a version, with their upstream
causes (disagreements/v<V>.json): read by the tests, written by `known.py`.

One file per version: the families' scenarios (`affinity/3`) and the generated ones
(`gen/12`), each with its causes (`causes.py`), and per cause its count, one example and
the upstream change it stands for.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from tests.differential.causes import CAUSES

DIRECTORY = Path(__file__).parent / "disagreements"

#: One replayed scenario: (id, agree / explained / disagree, its causes when it disagrees).
Result = tuple[str, str, tuple[str, ...]]


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
    """What rewrites the version's list."""
    return f"python -m tests.differential.known --version {version}"


def document(version: str, results: list[Result]) -> dict[str, Any]:
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
