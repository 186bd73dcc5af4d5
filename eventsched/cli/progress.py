"""A progress bar on a terminal, nothing in a pipe."""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm


def progress_bar(total: int, desc: str, unit: str = "pod") -> Any:
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        disable=not sys.stderr.isatty(),
        file=sys.stderr,
        leave=False,
        dynamic_ncols=True,
    )
