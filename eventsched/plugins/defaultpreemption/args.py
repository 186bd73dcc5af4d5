"""DefaultPreemptionArgs (kubescheduler.config.k8s.io/v1) and their validation.

Defaults as `SetDefaults_DefaultPreemptionArgs`: minCandidateNodesPercentage 10,
minCandidateNodesAbsolute 100. Checks and messages as v1.28's
`ValidateDefaultPreemptionArgs` (pkg/scheduler/apis/config/validation/
validation_pluginargs.go): the percentage in [0, 100], the absolute number >= 0,
and not both 0, each problem a `field.Invalid` ("Invalid value: <v>: <detail>").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eventsched.framework import PluginArgsError, check_args

NAME = "DefaultPreemption"
PERCENTAGE = "minCandidateNodesPercentage"
ABSOLUTE = "minCandidateNodesAbsolute"
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE


@dataclass(frozen=True, slots=True)
class ArgsProblem:
    """One `field.Invalid`: the field, the value it had, and what is wrong."""

    field: str
    value: int
    detail: str

    @property
    def message(self) -> str:
        """What `field.Error.ErrorBody()` prints after the field path."""
        return f"Invalid value: {self.value}: {self.detail}"


def validation_errors(args: DefaultPreemptionArgs) -> list[ArgsProblem]:
    """Every problem `ValidateDefaultPreemptionArgs` reports, in its order."""
    pct, absolute = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    problems = []
    if pct < 0 or pct > 100:
        problems.append(ArgsProblem(PERCENTAGE, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        problems.append(ArgsProblem(ABSOLUTE, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        problems.append(
            ArgsProblem(PERCENTAGE, pct, f"cannot be zero at the same time as {ABSOLUTE}")
        )
        problems.append(
            ArgsProblem(ABSOLUTE, absolute, f"cannot be zero at the same time as {PERCENTAGE}")
        )
    return problems


def parse_args(raw: Mapping[str, Any]) -> DefaultPreemptionArgs:
    """Args from a config (missing fields defaulted), refused with the first problem."""
    check_args(NAME, raw, (PERCENTAGE, ABSOLUTE))
    args = DefaultPreemptionArgs(
        _int32(raw, PERCENTAGE, DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE),
        _int32(raw, ABSOLUTE, DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE),
    )
    problems = validation_errors(args)
    if problems:
        raise PluginArgsError(problems[0].field, problems[0].message)
    return args


def _int32(raw: Mapping[str, Any], key: str, default: int) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > _INT32_MAX:
        raise PluginArgsError(key, f"must be an int32 (got {value!r})")
    return value
