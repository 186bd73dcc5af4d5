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
#: Files whose fenced blocks must show a masked prefix of a sample.
QUOTED = {ROOT / "README.md": "simulate.txt"}


def make() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/eventsched.db"
        env = {**os.environ, "EVENTSCHED_DATABASE_URL": url, "COLUMNS": "100"}
        run = [sys.executable, "-m", "eventsched.cli.main"]
        subprocess.run([*run, "db", "upgrade"], env=env, cwd=ROOT, check=True, capture_output=True)
        made = {}
        for name, args in SAMPLES.items():
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
