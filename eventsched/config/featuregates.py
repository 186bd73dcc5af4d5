"""The Kubernetes versions eventsched decides as, and kube-scheduler's feature gates for each.

`kubegates.json` holds, for each reference version (1.28, 1.34, 1.37), every gate that
version's kube-scheduler knows, with its versioned defaults, as upstream declares them
(`pkg/features/kube_features.go` and the generic ones kube-scheduler registers). It is
generated from the reference binaries' own tables by `tests/reference/make_gate_table.py`,
and a test compares it with each binary's `--help` where the binaries are built.

A version between two references reads the newer reference's table at its own version:
a gate's default at 1.35 is the value of its last spec at or before 1.35, which is what
kube-scheduler 1.37 run with `--emulated-version=1.35` would use.

`--feature-gates` is parsed as kube-scheduler parses it (`Name=true,Other=false`, Go's
ParseBool, `AllAlpha` and `AllBeta`), and refused with upstream's messages: an unknown
gate, a locked gate set against its lock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from eventsched.framework.features import LEGACY, Features
from eventsched.model.admission import Admission

#: The oldest and newest minor versions eventsched decides as.
OLDEST_MINOR = 28
NEWEST_MINOR = 37
SUPPORTED = tuple(f"1.{minor}" for minor in range(OLDEST_MINOR, NEWEST_MINOR + 1))
#: The versions eventsched is compared with a real kube-scheduler of (tests/reference).
REFERENCES = ("1.28", "1.34", "1.37")

ALPHA, BETA, GA, DEPRECATED = "ALPHA", "BETA", "", "DEPRECATED"
_ALL_ALPHA, _ALL_BETA = "AllAlpha", "AllBeta"

_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?")
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class VersionError(ValueError):
    """A Kubernetes version or a feature gate eventsched cannot decide as; `flag` names where
    it came from (`--kubernetes-version`, `--feature-gates`, the API server's /version)."""

    def __init__(self, flag: str, problem: str) -> None:
        self.flag = flag
        self.problem = problem
        super().__init__(f"{flag}: {problem}")


@dataclass(frozen=True, slots=True)
class GateSpec:
    """One gate at one version: its default, its stage (ALPHA, BETA, "" for GA,
    DEPRECATED) and whether it is locked to its default."""

    default: bool
    pre_release: str
    locked: bool


def parse_version(text: str, flag: str = "--kubernetes-version") -> str:
    """The minor version `text` names ("1.37" from "1.37", "v1.37.2" or "v1.37.2-eks-1"),
    refused in one line when it is not one eventsched decides as."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise VersionError(
            flag, f"{text!r} is not a Kubernetes version; give one such as 1.37 or v1.37.2"
        )
    major, minor = int(match.group(1)), int(match.group(2))
    version = f"{major}.{minor}"
    if version not in SUPPORTED:
        raise VersionError(
            flag,
            f"Kubernetes {version} is not supported: eventsched decides as Kubernetes "
            f"{SUPPORTED[0]} to {SUPPORTED[-1]}; pass --kubernetes-version with one of those",
        )
    return version


def newest() -> str:
    return SUPPORTED[-1]


@cache
def _table() -> Mapping[str, Any]:
    text = resources.files("eventsched.config").joinpath("kubegates.json").read_text("utf-8")
    loaded: Mapping[str, Any] = json.loads(text)
    return loaded


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def _reference_for(version: str) -> str:
    """The reference whose table describes `version`: the oldest one not older than it."""
    return next(r for r in REFERENCES if _minor(r) >= _minor(version))


@cache
def gate_specs(version: str) -> Mapping[str, GateSpec]:
    """Every gate kube-scheduler `version` knows, as it stands at that version."""
    at = _minor(version)
    specs: dict[str, GateSpec] = {}
    for name, versioned in _table()["references"][_reference_for(version)].items():
        current = None
        for since, default, pre_release, locked in versioned:
            if _minor(since) <= at:
                current = GateSpec(bool(default), str(pre_release), bool(locked))
        if current is not None:
            specs[name] = current
    return specs


def parse_feature_gates(text: str, flag: str = "--feature-gates") -> dict[str, bool]:
    """`Name=true,Other=false` as kube-scheduler's `--feature-gates` (a mapStringBool) reads it."""
    gates: dict[str, bool] = {}
    for pair in text.split(","):
        if not pair.strip():
            continue
        name, sep, value = pair.partition("=")
        if not sep:
            raise VersionError(flag, f"malformed pair {pair.strip()!r}, expect Name=true|false")
        name, value = name.strip(), value.strip()
        if value in _TRUE:
            gates[name] = True
        elif value in _FALSE:
            gates[name] = False
        else:
            raise VersionError(
                flag, f"invalid value of {name}: {value!r}; use true or false (Name=true)"
            )
    return gates


def effective_gates(
    version: str, overrides: Mapping[str, bool], flag: str = "--feature-gates"
) -> dict[str, bool]:
    """Every gate's value at `version` with `overrides` set, as kube-scheduler's
    featureGate.SetFromMap checks them: unknown and locked gates refused."""
    specs = gate_specs(version)
    for name, value in overrides.items():
        spec = specs.get(name)
        if spec is None and name not in (_ALL_ALPHA, _ALL_BETA):
            raise VersionError(
                flag,
                f"unrecognized feature gate: {name} (kube-scheduler {version} has no such "
                "gate; check its spelling)",
            )
        if spec is not None and spec.locked and value != spec.default:
            raise VersionError(
                flag,
                f"cannot set feature gate {name} to {str(value).lower()}, feature is locked "
                f"to {str(spec.default).lower()} in Kubernetes {version}",
            )
    values = {name: spec.default for name, spec in specs.items()}
    for stage, pseudo in ((ALPHA, _ALL_ALPHA), (BETA, _ALL_BETA)):
        if pseudo in overrides:
            for name, spec in specs.items():
                if spec.pre_release == stage and not spec.locked:
                    values[name] = overrides[pseudo]
    values.update({n: v for n, v in overrides.items() if n not in (_ALL_ALPHA, _ALL_BETA)})
    return values


def features_for(version: str, overrides: Mapping[str, bool] | None = None) -> Features:
    """What a profile decides with at `version`, `--feature-gates` applied. A gate the
    version no longer has because it graduated (GA, locked on, then removed) is on."""
    values = effective_gates(version, overrides or {})
    carried = {name: values[name] for name in Features.gate_names() if name in values}
    carried.update(
        (name, True)
        for name in Features.gate_names()
        if name not in values and graduated(name, version)
    )
    return LEGACY.with_gates(version, carried)


def graduated(gate: str, version: str) -> bool:
    """Whether `gate`, unknown at `version`, was removed after it went GA locked on: an
    older reference has it so at its own version (SidecarContainers: GA in 1.33, gone
    by 1.37), and upstream's code then runs as if it were on."""
    if gate in gate_specs(version):
        return False
    for reference in REFERENCES:
        if _minor(reference) >= _minor(version):
            break
        spec = gate_specs(reference).get(gate)
        if spec is not None and spec.default and spec.locked and spec.pre_release == GA:
            return True
    return False


def features_from_flags(version_text: str | None, gates_text: str | None) -> Features:
    """`--kubernetes-version` (newest when None) and `--feature-gates`, both checked."""
    version = parse_version(version_text) if version_text else newest()
    return features_for(version, parse_feature_gates(gates_text or ""))


def admission_at(features: Features) -> Admission:
    """The label-key merges the API server of `features`' version does when it creates a pod
    (`PrepareForCreate`; model/admission.py): what `eventsched simulate` applies to the pods
    of its manifests, which no API server created."""
    return Admission(
        topology_spread=features.match_label_keys_in_pod_topology_spread
        and features.match_label_keys_in_pod_topology_spread_selector_merge,
        pod_affinity=features.match_label_keys_in_pod_affinity,
    )
