"""Write the docs' sample outputs from real runs: `python docs/samples/generate.py`.

Each sample is a command run on the examples in a fresh SQLite log. With
`--check` nothing is written: the samples are made again and compared with
the ones in the repository after masking what changes from run to run
(times, uids, counts, rates); a test runs it, so a sample cannot drift from
what the commands print.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SHOWN_URL = "sqlite:///eventsched.db"

#: sample file -> the eventsched arguments that make it, run in this order on one log.
#: `simulate-again.txt` shows stderr too: the state rebuilt from the log is said there.
SAMPLES = {
    "simulate.txt": ["simulate", "examples/cluster"],
    "simulate-again.txt": ["simulate", "examples/cluster"],
    "explain.txt": ["explain", "default/too-big"],
    "replay.txt": ["replay"],
    "query.txt": [
        "query",
        "SELECT kind, COUNT(*) AS events FROM decisions GROUP BY kind ORDER BY events DESC, kind",
    ],
}
WITH_STDERR = {"simulate-again.txt"}

#: The query cookbook's log: the example cluster twice, then Coscheduling with its profile.
COOKBOOK_LOG = [
    ["simulate", "examples/cluster/"],
    ["simulate", "examples/cluster/"],
    ["simulate", "--config", "examples/profiles/coscheduling.yaml", "examples/coscheduling/"],
]
#: sample file -> a cookbook query, as SQLite takes it (docs/querying.md shows PostgreSQL's
#: spelling where the two differ).
COOKBOOK = {
    "query-moved.txt": """
SELECT p.identity, p.first_node, p.node AS last_node, p.bound_at
FROM placements AS p
WHERE p.position = (SELECT MAX(q.position) FROM placements AS q WHERE q.identity = p.identity)
  AND p.node <> p.first_node
ORDER BY p.identity""",
    "query-rejecter.txt": """
SELECT plugin, COUNT(*) AS rejections, COUNT(DISTINCT node) AS nodes
FROM (SELECT DISTINCT position, node, plugin FROM filter_rejections
      WHERE recorded_at > datetime('now', '-7 days')) AS r
GROUP BY plugin
ORDER BY rejections DESC, plugin""",
    "query-unschedulable-time.txt": """
WITH first_unschedulable AS (
    SELECT namespace, uid, MIN(recorded_at) AS since
    FROM decisions WHERE kind = 'unschedulable'
    GROUP BY namespace, uid
), first_bound AS (
    SELECT uid, MIN(recorded_at) AS bound_at
    FROM decisions WHERE kind = 'bound'
    GROUP BY uid
)
SELECT u.namespace,
       COUNT(*) AS pods,
       COUNT(*) - COUNT(b.bound_at) AS still_pending,
       ROUND(SUM((julianday(COALESCE(b.bound_at, 'now')) - julianday(u.since)) * 86400), 1)
           AS unschedulable_seconds
FROM first_unschedulable AS u
LEFT JOIN first_bound AS b ON b.uid = u.uid AND b.bound_at > u.since
GROUP BY u.namespace
ORDER BY unschedulable_seconds DESC, u.namespace""",
    "query-configurations.txt": """
SELECT data ->> 'digest' AS digest, scheduler AS profile, MIN(recorded_at) AS first_loaded
FROM events
WHERE kind = 'config_loaded'
GROUP BY data ->> 'digest', scheduler
ORDER BY first_loaded""",
    "query-under-configuration.txt": """
SELECT d.kind, COUNT(*) AS decisions, COUNT(DISTINCT d.uid) AS pods
FROM decisions AS d
JOIN decisions AS a ON a.attempt = d.attempt AND a.kind = 'attempt_started'
WHERE a.data ->> 'configDigest' = '2769cdecd7898ec4'
GROUP BY d.kind
ORDER BY decisions DESC, d.kind""",
    "query-winning-scores.txt": """
SELECT s.plugin, COUNT(*) AS attempts, ROUND(AVG(s.weighted), 1) AS avg_weighted
FROM plugin_scores AS s
JOIN decisions AS sel ON sel.attempt = s.attempt AND sel.kind = 'selected' AND sel.node = s.node
GROUP BY s.plugin
ORDER BY avg_weighted DESC, s.plugin""",
}
#: Samples whose rows depend on the run (ties broken at random, how long a pod waited):
#: checked for their columns only.
COLUMNS_ONLY = {"query-moved.txt", "query-rejecter.txt", "query-unschedulable-time.txt"}
#: Files whose fenced blocks must show a masked prefix of a sample.
QUOTED = {ROOT / "README.md": "simulate.txt"}


def make() -> dict[str, str]:
    made = _run_on_a_fresh_log([], SAMPLES)
    queries = {name: ["query", sql.strip()] for name, sql in COOKBOOK.items()}
    made.update(_run_on_a_fresh_log(COOKBOOK_LOG, queries))
    return made


def _run_on_a_fresh_log(setup: list[list[str]], samples: dict[str, list[str]]) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/eventsched.db"
        env = {**os.environ, "EVENTSCHED_DATABASE_URL": url, "COLUMNS": "100"}
        run = [sys.executable, "-m", "eventsched.cli.main"]
        for args in [["db", "upgrade"], *setup]:
            subprocess.run([*run, *args], env=env, cwd=ROOT, check=True, capture_output=True)
        made = {}
        for name, args in samples.items():
            done = subprocess.run(
                [*run, *args],
                env=env,
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if name in WITH_STDERR else subprocess.DEVNULL,
                text=True,
                check=True,
            )
            made[name] = done.stdout.replace(url, SHOWN_URL)
        return made


def mask(text: str) -> str:
    """What stays the same from run to run: no times, uids, hashes or numbers."""
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+(?:\+00:00|Z)?", "<time>", text)
    text = re.sub(r"\b[0-9a-f]{8}-[0-9a-f-]{27}\b", "<uid>", text)
    text = re.sub(r"\b[0-9a-f]{16,}\b", "<hex>", text)
    text = re.sub(r"\d+(?:\.\d+)?", "0", text)
    return re.sub(r"[ ]+", " ", text)


def _columns(table: str) -> str:
    """A query's table without its rows: its header line (the rule under it is as wide
    as the widest row)."""
    return table.splitlines(keepends=True)[0]


def _any_order(table: str) -> str:
    """A query's table with its rows sorted once masked: counts that tie in one run and
    not in the next (how many attempts were scored) reorder rows without changing them."""
    lines = table.splitlines(keepends=True)
    return "".join([lines[0], *sorted(mask(line) for line in lines[2:])])


def quoted_blocks(path: Path) -> list[str]:
    """The fenced blocks of `path` that name no language (output, not code)."""
    blocks: list[str] = []
    lines: list[str] | None = None
    language = ""
    for line in path.read_text().splitlines(keepends=True):
        if not line.startswith("```"):
            if lines is not None:
                lines.append(line)
        elif lines is None:
            lines, language = [], line[3:].strip()
        else:
            if not language:
                blocks.append("".join(lines))
            lines = None
    return blocks


def check(made: dict[str, str]) -> list[str]:
    problems = []
    for name, text in made.items():
        kept = (HERE / name).read_text()
        if name in COLUMNS_ONLY:
            kept, text = _columns(kept), _columns(text)
        elif name.startswith("query"):
            kept, text = _any_order(kept), _any_order(text)
        if mask(kept) != mask(text):
            problems.append(f"docs/samples/{name} differs from what the command prints now")
    for path, name in QUOTED.items():
        sample = mask(made[name])
        if not any(mask(b.replace("  ...\n", "")) in sample for b in quoted_blocks(path)):
            problems.append(f"{path.name} shows no block of docs/samples/{name} as it is now")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args()
    made = make()
    if args.check:
        problems = check(made)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    for name, text in made.items():
        (HERE / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
