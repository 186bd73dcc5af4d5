"""Write eventsched/config/kubegates.json from the reference binaries' own gate tables.

    python tests/reference/make_gate_table.py

For 1.34 and 1.37, `featuregates` (built beside the binaries by build.sh from
cmd/kube-scheduler/app) prints every gate kube-scheduler knows with its versioned specs.
v1.28 predates versioned gates: its table is the gates its kube-scheduler's `--help` lists
(every gate not yet GA, with its stage and default), and the GA ones the 1.34 table says
were GA at 1.28 (`--help` leaves those out).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from eventsched.benchmarks.kubebinaries import reference_binaries  # noqa: E402

OUT = ROOT / "eventsched" / "config" / "kubegates.json"
_HELP_GATE = re.compile(r"^\s+(\w+)=true\|false \((ALPHA|BETA|DEPRECATED) - default=(true|false)\)")


def versioned(minor: str) -> dict[str, list[list[object]]]:
    binaries = reference_binaries(minor)
    if binaries is None:
        raise SystemExit(f"no reference binaries for {minor}: run tests/reference/build.sh {minor}")
    dump = binaries.apiserver.parent / "featuregates.json"
    gates = json.loads(dump.read_text())
    table = {}
    for name, specs in sorted(gates.items()):
        ordered = sorted(specs, key=lambda s: tuple(int(p) for p in s["version"].split(".")))
        table[name] = [
            [s["version"], s["default"], s["preRelease"], s.get("lockToDefault", False)]
            for s in ordered
        ]
    return table


def from_help(minor: str, newer: dict[str, list[list[object]]]) -> dict[str, list[list[object]]]:
    binaries = reference_binaries(minor)
    if binaries is None or binaries.scheduler is None:
        raise SystemExit(f"no kube-scheduler {minor} (EVENTSCHED_KUBE_BIN)")
    text = subprocess.run(
        [str(binaries.scheduler), "--help"], capture_output=True, text=True, check=False
    ).stdout
    table: dict[str, list[list[object]]] = {}
    for line in text.splitlines():
        match = _HELP_GATE.match(line)
        if match:
            name, stage, default = match.groups()
            table[name] = [[minor, default == "true", stage, False]]
    at = int(minor.split(".")[1])
    for name, specs in newer.items():
        if name in table:
            continue
        current = [s for s in specs if int(str(s[0]).split(".")[1]) <= at]
        if current and current[-1][2] == "":
            table[name] = [[minor, current[-1][1], "", current[-1][3]]]
    return dict(sorted(table.items()))


def main() -> None:
    v134 = versioned("1.34")
    table = {
        "references": {"1.28": from_help("1.28", v134), "1.34": v134, "1.37": versioned("1.37")}
    }
    OUT.write_text(json.dumps(table, separators=(",", ":"), sort_keys=False) + "\n")
    sizes = {minor: len(gates) for minor, gates in table["references"].items()}
    print(f"wrote {OUT.relative_to(ROOT)}: gates per reference {sizes}")


if __name__ == "__main__":
    main()
