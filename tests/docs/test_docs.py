"""The documentation site builds with no broken link, and its outputs are generated samples
(test_samples_a.py and test_samples_b.py check that they are current)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    index = (tmp_path / "site" / "index.html").read_text()
    # The samples are included from docs/samples, not copied by hand.
    assert "state rebuilt from the log up to position" in index
    assert "0/6 nodes are available" in index
    assert (tmp_path / "site" / "plugins" / "stickynode" / "index.html").exists()


#: Output blocks that no script can make here, with the reason.
HAND_WRITTEN = {
    ("architecture.md", "cluster (Kubernetes API"): "a diagram, not output",
    ("architecture.md", "Scheduler (scheduler/scheduler.py)"): "a diagram, not output",
    ("running.md", "Events:"): "kubectl on a real cluster, with eventsched deployed in it",
}


def test_every_output_block_in_the_docs_is_a_generated_sample() -> None:
    """Console sessions and command output are included from docs/samples (made by
    generate.py from real runs), never pasted: a pasted output drifts unseen."""
    pasted = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text()
        blocks = [body for language, body in fenced(text) if language in ("", "console", "text")]
        blocks += re.findall(r"^    \$ .*$", text, re.M)
        for body in blocks:
            if "--8<--" in body:
                continue
            name = str(page.relative_to(ROOT / "docs"))
            if not any(name == p and body.startswith(s) for p, s in HAND_WRITTEN):
                pasted.append(f"{name}: {body[:60]!r}")
    assert pasted == []


def fenced(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of a page: (language, body)."""
    blocks: list[tuple[str, str]] = []
    body: list[str] | None = None
    language = ""
    for line in text.splitlines(keepends=True):
        if not line.startswith("```"):
            if body is not None:
                body.append(line)
        elif body is None:
            body, language = [], line[3:].strip()
        else:
            blocks.append((language, "".join(body)))
            body = None
    return blocks
