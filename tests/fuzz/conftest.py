"""Hypothesis profiles for the fuzz suite: bounded in CI, long when asked.

`ci` (the default) runs a fixed number of examples, derandomized so a run
is reproducible, with a generous per-example deadline. `soak` runs many
more: `HYPOTHESIS_PROFILE=soak python -m pytest tests/fuzz`.
"""

from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=40,
    deadline=timedelta(seconds=5),
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "soak",
    max_examples=1500,
    deadline=timedelta(seconds=30),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
