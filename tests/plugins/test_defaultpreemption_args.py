"""DefaultPreemptionArgs (eventsched/plugins/defaultpreemption/args.py): v1.28
validation_pluginargs_test.go `TestValidateDefaultPreemptionArgs`, plus defaulting."""

from __future__ import annotations

import pytest

from eventsched.framework import PluginArgsError
from eventsched.plugins.defaultpreemption import (
    DefaultPreemptionArgs,
    parse_args,
    validation_errors,
)


@pytest.mark.parametrize(
    ("case", "pct", "absolute", "want"),
    [
        ("valid args (default)", 10, 100, []),
        (
            "negative minCandidateNodesPercentage",
            -1,
            220,
            [("minCandidateNodesPercentage", "Invalid value: -1: not in valid range [0, 100]")],
        ),
        (
            "minCandidateNodesPercentage over 100",
            900,
            220,
            [("minCandidateNodesPercentage", "Invalid value: 900: not in valid range [0, 100]")],
        ),
        (
            "negative minCandidateNodesAbsolute",
            20,
            -1,
            [("minCandidateNodesAbsolute", "Invalid value: -1: not in valid range [0, inf)")],
        ),
        (
            "all zero",
            0,
            0,
            [
                (
                    "minCandidateNodesPercentage",
                    "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
                ),
                (
                    "minCandidateNodesAbsolute",
                    "Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage",
                ),
            ],
        ),
        (
            "both negative",
            -1,
            -1,
            [
                ("minCandidateNodesPercentage", "Invalid value: -1: not in valid range [0, 100]"),
                ("minCandidateNodesAbsolute", "Invalid value: -1: not in valid range [0, inf)"),
            ],
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_validate_default_preemption_args(
    case: str, pct: int, absolute: int, want: list[tuple[str, str]]
) -> None:
    got = validation_errors(DefaultPreemptionArgs(pct, absolute))
    assert [(p.field, p.message) for p in got] == want


def test_defaults_are_upstreams() -> None:
    """`SetDefaults_DefaultPreemptionArgs`: 10% and 100 nodes."""
    assert parse_args({}) == DefaultPreemptionArgs(10, 100)
    assert parse_args({"minCandidateNodesAbsolute": 0}) == DefaultPreemptionArgs(10, 0)


def test_parse_refuses_with_the_first_problem() -> None:
    with pytest.raises(PluginArgsError) as err:
        parse_args({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0})
    assert err.value.field == "minCandidateNodesPercentage"
    assert "cannot be zero at the same time as minCandidateNodesAbsolute" in err.value.problem


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"minCandidateNodesPercentage": "10"}, "minCandidateNodesPercentage"),
        ({"minCandidateNodesAbsolute": True}, "minCandidateNodesAbsolute"),
        ({"minCandidateNodesAbsolute": 2**31}, "minCandidateNodesAbsolute"),
        ({"minCandidateNodes": 3}, "minCandidateNodes"),
    ],
)
def test_parse_refuses_non_int32_and_unknown_fields(raw: dict[str, object], field: str) -> None:
    with pytest.raises(PluginArgsError) as err:
        parse_args(raw)
    assert err.value.field == field
