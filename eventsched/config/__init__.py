"""Profiles: kube-scheduler's defaults now, KubeSchedulerConfiguration files later (issue 4)."""

from eventsched.config.defaults import DEFAULT_SCHEDULER_NAME, default_profile
from eventsched.config.digest import profile_digest

__all__ = ["DEFAULT_SCHEDULER_NAME", "default_profile", "profile_digest"]
