"""The watch of bound pods, kept up while the API server restarts."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from benchmarks.kube import BindWatch


class PatientWatch(BindWatch):
    """BindWatch that lists and watches again while the API server is away."""

    def _read(self) -> None:
        try:
            while len(self.bound) < self.expected and not self._closed:
                with contextlib.suppress(Exception):  # the stream broke under a stopping server
                    self._follow(self._response)
                if len(self.bound) >= self.expected or self._closed:
                    break
                self.restarts += 1
                with contextlib.suppress(Exception):
                    self._response.release_conn()
                self._response = self._rewatch()
        except BaseException as e:
            if not self._closed:
                self._error = e
        finally:
            self.done.set()

    def _rewatch(self) -> Any:
        while True:
            try:
                return self._watch()
            except Exception:
                if self._closed:
                    raise
                time.sleep(0.2)
