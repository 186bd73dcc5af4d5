"""PodTopologySpread at 1.33+ and 1.34+: per-constraint counting (v1.33 on) and pods whose
selectors the API server merged matchLabelKeys into (v1.34 on); test_podtopologyspread.py
holds v1.28's tables."""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.config.featuregates import features_for
from eventsched.framework import Code, CycleState
from eventsched.model import Pod
from eventsched.model.admission import Admission, admitted
from eventsched.plugins.podtopologyspread import PRE_FILTER_STATE_KEY
from tests.plugins.conftest import plugin
from tests.plugins.test_podtopologyspread import (
    BAR,
    FOO,
    LIST,
    NAME,
    cluster,
    hard,
    placed,
    pod,
    zoned,
)

V137 = features_for("1.37")
FOUR = [
    zoned("node-a", "zone1"),
    zoned("node-b", "zone1"),
    zoned("node-x", "zone2"),
    zoned("node-y", "zone2"),
]


def pre_filter(incoming: Pod, table: Any, version: str = "1.37") -> tuple[Any, Any]:
    p = plugin(NAME, LIST, table, features_for(version))
    state = CycleState()
    _, status = p.pre_filter(state, incoming, table)
    return status, state.get(PRE_FILTER_STATE_KEY, ())


@pytest.mark.parametrize("version", ["1.28", "1.37"])
def test_two_constraints_with_one_key_and_action_are_refused_at_every_version(
    version: str,
) -> None:
    # filtering_test.go (v1.33.0 on) TestPreFilterState "two spreadConstraints with the same
    # topologyKey" counts them apart, where v1.28 shared one counter per key; but the API
    # server refuses such a pod (validation.go: duplicate {topologyKey, whenUnsatisfiable}),
    # and so does eventsched, so the two ways of counting never meet a pod that exists.
    incoming = pod(
        labels={"foo": "", "bar": ""}, spread=[hard(1, "zone", FOO), hard(1, "zone", BAR)]
    )
    status, _ = pre_filter(incoming, cluster(FOUR), version)
    assert status is not None and status.message == (
        "invalid topology spread constraint: spec.topologySpreadConstraints[1]: duplicate "
        "{topologyKey, whenUnsatisfiable}: {zone, DoNotSchedule}"
    )


def spread_pod(labels: dict[str, str], constraint: dict[str, Any], merge: bool) -> Pod:
    manifest = {
        "metadata": {"name": "p", "namespace": "default", "uid": "u", "labels": labels},
        "spec": {"containers": [{"name": "c"}], "topologySpreadConstraints": [constraint]},
    }
    if merge:
        manifest = admitted(manifest, Admission(topology_spread=True))
    return Pod.from_manifest(manifest)


def test_a_pod_the_api_server_merged_counts_as_one_it_did_not() -> None:
    # The merged requirement (`bar In [a]`, strategy.go mutateTopologySpreadConstraints) and
    # the scheduler's own merge (common.go filterTopologySpreadConstraints) select the same
    # pods as the unmerged pod at v1.28: TestPreFilterState "matchLabelKeys ANDed with
    # LabelSelector when LabelSelector isn't empty".
    constraint = hard(1, "zone", FOO, matchLabelKeys=["bar"])
    table = cluster(
        FOUR,
        [
            *placed("p-a1", "node-a", {"foo": ""}),
            *placed("p-a2", "node-a", {"foo": "", "bar": "a"}),
            *placed("p-b1", "node-b", {"foo": ""}),
            *placed("p-y1", "node-y", {"foo": "", "bar": "a"}),
            *placed("p-y2", "node-y", {"bar": ""}),
        ],
    )
    merged = spread_pod({"foo": "", "bar": "a"}, constraint, merge=True)
    status, spreads = pre_filter(merged, table)
    assert status is None
    assert [(s.match_nums(), s.min_match) for s in spreads] == [({"zone1": 1, "zone2": 1}, 1)]
    unmerged = spread_pod({"foo": "", "bar": "a"}, constraint, merge=False)
    assert [s.match_nums() for s in pre_filter(unmerged, table, "1.28")[1]] == [
        {"zone1": 1, "zone2": 1}
    ]


def test_the_merged_pod_is_refused_before_1_34_only_as_its_api_server_would() -> None:
    # Legacy validation (ValidateMatchLabelKeysInTopologySpread) refuses a key that is also
    # in the selector: a merged pod could not have been created before 1.34, and 1.34's
    # ValidateMatchLabelKeysAndMismatchLabelKeys accepts it.
    merged = spread_pod({"foo": "", "bar": "a"}, hard(1, "zone", FOO, matchLabelKeys=["bar"]), True)
    table = cluster(FOUR)
    status, _ = pre_filter(merged, table, "1.33")
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert "exists in both matchLabelKeys and labelSelector" in status.message
    assert pre_filter(merged, table, "1.34")[0] is None


@pytest.mark.parametrize(
    ("selector", "problem"),
    [
        (
            {"matchLabels": {"bar": "a"}},
            "spec.topologySpreadConstraints[0].matchLabelKeys[0]: 'bar' exists in both "
            "matchLabelKeys and labelSelector",
        ),
        (
            None,
            "spec.topologySpreadConstraints[0].matchLabelKeys: must not be specified when "
            "labelSelector is not set",
        ),
    ],
)
def test_what_1_34s_api_server_refuses_is_refused(
    selector: dict[str, Any] | None, problem: str
) -> None:
    # ValidateMatchLabelKeysAndMismatchLabelKeys: a key the user put in the selector too,
    # and keys without a selector.
    incoming = spread_pod({"bar": "a"}, hard(1, "zone", selector, matchLabelKeys=["bar"]), True)
    status, _ = pre_filter(incoming, cluster(FOUR))
    assert status is not None
    assert status.message == f"invalid topology spread constraint: {problem}"
