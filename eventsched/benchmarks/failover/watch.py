"""The watch of bound pods, kept up while the API server restarts."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from eventsched.benchmarks.bindwatch import BindWatch


class PatientWatch(BindWatch):
    """BindWatch that lists and watches again while the API server is away."""

    def _follow_stream(self) -> None:
        with contextlib.suppress(Exception):  # the stream broke under a stopping server
            super()._follow_stream()

    def _watch_again(self) -> Any:
        while True:
            try:
                return self._watch()
            except Exception:
                if self._closed:
                    raise
                time.sleep(0.2)
