"""What `bench --kube --shadow` measured: one run of the shadow beside kube-scheduler."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

#: What a differ's cause says when kube-scheduler scored only a sample of the nodes.
SAMPLED = "percentageOfNodesToScore"


@dataclass(frozen=True, slots=True)
class Verdicts:
    """Each pod's last verdict, summed up."""

    placed: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    #: Placements that differ where kube-scheduler scored only a sample of the nodes.
    sampled: int = 0
    lags: tuple[float, ...] = ()

    @property
    def agreement(self) -> float | None:
        total = sum(self.placed.values())
        return (self.placed["agree"] + self.placed["tie"]) / total if total else None

    @property
    def same_message(self) -> float | None:
        total = sum(self.failed.values())
        return (self.failed["agree"] + self.failed["tie"]) / total if total else None

    def lag(self, quantile: float) -> float | None:
        if not self.lags:
            return None
        ordered = sorted(self.lags)
        return ordered[min(len(ordered) - 1, int(quantile * len(ordered)))]


@dataclass(slots=True)
class ShadowRunResult:
    nodes: int
    pods: int
    database: str
    #: kube-scheduler's percentageOfNodesToScore (None: its default, adaptive).
    percentage_of_nodes_to_score: int | None = None
    #: The pods were created before kube-scheduler started.
    pods_first: bool = False
    #: Pods kube-scheduler bound, and left pending with a FailedScheduling message.
    bound: int = 0
    pending: int = 0
    #: Pods with a verdict on what kube-scheduler last did with them.
    decided: int = 0
    #: From the first pod created to kube-scheduler's last decision, and to the shadow's.
    kube_seconds: float = 0.0
    shadow_seconds: float = 0.0
    shadow_cpu_seconds: float = 0.0
    verdicts: Verdicts = field(default_factory=Verdicts)
    error: str | None = None

    @property
    def kube_pods_per_second(self) -> float:
        return self.pods / self.kube_seconds if self.kube_seconds else 0.0

    @property
    def shadow_pods_per_second(self) -> float:
        return self.decided / self.shadow_seconds if self.shadow_seconds else 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and self.decided == self.bound + self.pending

    def line(self) -> str:
        v = self.verdicts
        if self.error is not None:
            return f"shadow {self.nodes} nodes x {self.pods} pods: FAILED: {self.error}"
        return (
            f"shadow {self.nodes} nodes x {self.pods} pods ({self.database}, "
            f"percentageOfNodesToScore {self.percentage_of_nodes_to_score or 'adaptive'}"
            f"{', pods first' if self.pods_first else ''}): "
            f"kube-scheduler {self.kube_pods_per_second:.0f} pods/s, shadow decided "
            f"{self.decided}/{self.bound + self.pending} at {self.shadow_pods_per_second:.0f} "
            f"pods/s ({1000 * self.shadow_cpu_seconds / max(self.decided, 1):.1f} ms CPU/pod); "
            f"lag p50 {_seconds(v.lag(0.5))} p99 {_seconds(v.lag(0.99))}; "
            f"placements agree {_percent(v.agreement)} (agree {v.placed['agree']}, tie "
            f"{v.placed['tie']}, differ {v.placed['differ']}, of which {v.sampled} where "
            f"kube-scheduler scored a sample); FailedScheduling same "
            f"{_percent(v.same_message)} of {sum(v.failed.values())}"
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        v = self.verdicts
        data["verdicts"] = {
            "placed": dict(v.placed),
            "failed": dict(v.failed),
            "differ_sampled": v.sampled,
            "agreement": v.agreement,
            "same_message": v.same_message,
            "lag_p50_seconds": v.lag(0.5),
            "lag_p99_seconds": v.lag(0.99),
            "lag_max_seconds": max(v.lags, default=None),
        }
        data["kube_pods_per_second"] = self.kube_pods_per_second
        data["shadow_pods_per_second"] = self.shadow_pods_per_second
        data["ok"] = self.ok
        return data


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"
