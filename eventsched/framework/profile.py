"""A resolved profile: which plugins run at which point, with weights and args.

`eventsched.config` builds these from KubeSchedulerConfiguration YAML; the
runtime only consumes them, so the framework never parses files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from eventsched.framework.extenders.config import ExtenderConfig
from eventsched.framework.features import LEGACY, Features


@dataclass(frozen=True, slots=True)
class PluginRef:
    name: str
    weight: int = 0


@dataclass(frozen=True, slots=True)
class Profile:
    scheduler_name: str
    #: Extension point ("filter", "score", ...) to plugins in the order they run.
    plugins: Mapping[str, tuple[PluginRef, ...]] = field(default_factory=dict)
    plugin_args: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: None: the global setting; 0: kube-scheduler's adaptive percentage.
    percentage_of_nodes_to_score: int | None = None
    #: How many nodes' per-plugin scores the `scored` event keeps.
    score_breakdown_top_k: int = 10
    #: The configuration's `extenders[]`, which kube-scheduler applies to every profile.
    extenders: tuple[ExtenderConfig, ...] = ()
    #: The Kubernetes version decided as and its gates (kube-scheduler's are process-wide:
    #: every profile of a configuration carries the same).
    features: Features = LEGACY

    def at(self, point: str) -> tuple[PluginRef, ...]:
        return tuple(self.plugins.get(point, ()))

    def plugin_names(self) -> list[str]:
        seen: dict[str, None] = {}
        for refs in self.plugins.values():
            for ref in refs:
                seen.setdefault(ref.name, None)
        return list(seen)

    def to_record(self) -> dict[str, Any]:
        """The form `config_loaded` stores, from which replay rebuilds the same profile."""
        record: dict[str, Any] = {
            "schedulerName": self.scheduler_name,
            "plugins": {
                point: [{"name": r.name, "weight": r.weight} for r in refs]
                for point, refs in self.plugins.items()
            },
            "pluginConfig": {name: dict(args) for name, args in self.plugin_args.items()},
            "percentageOfNodesToScore": self.percentage_of_nodes_to_score,
            "scoreBreakdownTopK": self.score_breakdown_top_k,
        }
        if self.extenders:
            # Only when there are some: a profile without extenders keeps its digest.
            record["extenders"] = [e.to_record() for e in self.extenders]
        if not self.features.is_legacy:
            # Only when not v1.28's: a profile logged before versions keeps its digest.
            record.update(self.features.to_record())
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Profile:
        return cls(
            scheduler_name=record["schedulerName"],
            plugins={
                point: tuple(PluginRef(r["name"], int(r.get("weight", 0))) for r in refs)
                for point, refs in record.get("plugins", {}).items()
            },
            plugin_args={k: dict(v) for k, v in record.get("pluginConfig", {}).items()},
            percentage_of_nodes_to_score=record.get("percentageOfNodesToScore"),
            score_breakdown_top_k=int(record.get("scoreBreakdownTopK", 10)),
            extenders=tuple(ExtenderConfig.from_record(e) for e in record.get("extenders", ())),
            features=Features.from_record(record),
        )
