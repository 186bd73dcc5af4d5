"""What kube-scheduler's -v=10 log says about one pod: attempts and scores.

The lines read (klog text format, v1.28 `schedule_one.go` and `eventhandlers.go`):

    "Attempting to schedule pod" pod="ns/name"
    "Plugin scored node for pod" pod="ns/name" plugin="P" node="n" score=300   (weighted)
    "Calculated node's final score for pod" pod="ns/name" node="n" score=480
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_ATTEMPT = re.compile(r'"Attempting to schedule pod" pod="([^"]+)"')
_PLUGIN = re.compile(
    r'"Plugin scored node for pod" pod="([^"]+)" plugin="([^"]+)" node="([^"]+)" score=(-?\d+)'
)
_TOTAL = re.compile(
    r'"Calculated node\'s final score for pod" pod="([^"]+)" node="([^"]+)" score=(-?\d+)'
)


@dataclass
class Attempt:
    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)


class LogReader:
    """Reads kube-scheduler's log file from a remembered offset."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def offset(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def since(self, offset: int) -> str:
        with self.path.open("rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def attempts(self, offset: int, pod_key: str) -> list[Attempt]:
        """The pod's scheduling attempts logged since `offset`, each with its scores."""
        out: list[Attempt] = []
        for line in self.since(offset).splitlines():
            if (m := _ATTEMPT.search(line)) and m.group(1) == pod_key:
                out.append(Attempt())
            elif (m := _PLUGIN.search(line)) and m.group(1) == pod_key and out:
                out[-1].scores.setdefault(m.group(3), {})[m.group(2)] = int(m.group(4))
            elif (m := _TOTAL.search(line)) and m.group(1) == pod_key and out:
                out[-1].total[m.group(2)] = int(m.group(3))
        return out
