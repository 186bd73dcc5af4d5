"""`extenders[]` of KubeSchedulerConfiguration v1: its fields, and giving them to every profile.

The parsed form (`ExtenderConfig`) lives in the framework, which calls the
extenders (framework/extenders/client.py); config/file.py parses it, and
extendercheck.py checks it with kube-scheduler's rules (`validateExtenders`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from eventsched.framework import Profile
from eventsched.framework.extenders.config import (
    DEFAULT_HTTP_TIMEOUT,
    ExtenderConfig,
    ManagedResource,
)

__all__ = [
    "DEFAULT_HTTP_TIMEOUT",
    "EXTENDER_FIELDS",
    "TLS_FIELDS",
    "ExtenderConfig",
    "ManagedResource",
    "with_extenders",
]

#: Fields of `Extender` in kubescheduler.config.k8s.io/v1.
EXTENDER_FIELDS = frozenset(
    {
        "urlPrefix",
        "filterVerb",
        "preemptVerb",
        "prioritizeVerb",
        "weight",
        "bindVerb",
        "enableHTTPS",
        "tlsConfig",
        "httpTimeout",
        "nodeCacheCapable",
        "managedResources",
        "ignorable",
    }
)
TLS_FIELDS = frozenset(
    {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"}
)


def with_extenders(
    profiles: Sequence[Profile], extenders: Sequence[ExtenderConfig]
) -> tuple[Profile, ...]:
    """Every profile with the extenders, as kube-scheduler applies them to all its profiles.

    Managed resources marked `ignoredByScheduler` become NodeResourcesFit's
    `ignoredResources` in each profile that runs it (kube-scheduler's `New()` sets the
    list to exactly those names): the extender accounts for them, the scheduler does not.
    """
    if not extenders:
        return tuple(profiles)
    ignored = [r.name for e in extenders for r in e.managed_resources if r.ignored_by_scheduler]
    out = []
    for profile in profiles:
        args = dict(profile.plugin_args)
        if ignored and "NodeResourcesFit" in profile.plugin_names():
            args["NodeResourcesFit"] = {
                **args.get("NodeResourcesFit", {}),
                "ignoredResources": ignored,
            }
        out.append(replace(profile, plugin_args=args, extenders=tuple(extenders)))
    return tuple(out)
