"""All preemption scenarios, in a fixed order, and where their recorded answers live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.differential.preemption import cases_choice, cases_filters

ANSWERS = Path(__file__).parent / "answers.json"


def all_cases() -> list[dict[str, Any]]:
    out = cases_choice.cases() + cases_filters.cases()
    ids = [c["id"] for c in out]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate preemption case ids")
    return out
