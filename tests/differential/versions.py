"""What the families' replay compares at each Kubernetes version: eventsched's default profile
deciding as that version (`features_for(version)`), and which of kube-scheduler's default
plugins it lacks there.

v1.28's answers are in answers/<family>.json and its cases keep their plain ids
(`affinity/3`); every newer version's are in answers/v<V>/ and its cases are
`v<V>/<family>/<index>` (`v1.37/affinity/3`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from eventsched.config import default_profile
from eventsched.config.featuregates import features_for
from eventsched.framework.features import Features
from eventsched.framework.profile import Profile
from tests.differential.eventsched_run import SCHEDULER_NAME, without_preemption
from tests.differential.scenario import (
    LEGACY_VERSION,
    answers_dir,
    recorded_versions,
    upstream_default,
)


@dataclass(frozen=True)
class Target:
    """One version's side of the comparison."""

    version: str
    features: Features
    #: eventsched's default profile at `features`, without DefaultPreemption (the answers
    #: files were recorded without it: "preemption": false).
    profile: Profile
    #: kube-scheduler's default plugins at `version` that `profile` lacks.
    missing: frozenset[str]
    #: The score plugins of `profile` (the ones whose scores are compared).
    score_plugins: frozenset[str]

    @property
    def legacy(self) -> bool:
        return self.version == LEGACY_VERSION

    @property
    def answers(self) -> Path:
        return answers_dir(self.version)

    def case_id(self, scenario_id: str) -> str:
        """The test case's id (and the agreement table's key) of a scenario."""
        return scenario_id if self.legacy else f"v{self.version}/{scenario_id}"


@cache
def target(version: str) -> Target:
    features = features_for(version)
    profile = without_preemption(default_profile(SCHEDULER_NAME, features=features))
    present = set(profile.plugin_names())
    return Target(
        version=version,
        features=features,
        profile=profile,
        missing=frozenset(p for p in upstream_default(version) if p not in present),
        score_plugins=frozenset(ref.name for ref in profile.plugins.get("score", ())),
    )


def versions() -> list[str]:
    """The versions whose families are recorded, v1.28 first."""
    return recorded_versions()
