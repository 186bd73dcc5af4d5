"""The documentation site builds with no broken link, and its sample outputs are current."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_sample_outputs_match_what_the_commands_print() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "samples" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (
        f"{done.stderr}\nrun `python docs/samples/generate.py` and look at the change"
    )


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
