"""The API server's label-key merges at pod creation (model/admission.py), after
pkg/registry/core/pod/strategy_test.go Test_mutatePodAffinity and
Test_mutateTopologySpreadConstraints (v1.37.2), and which versions apply them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from eventsched.cluster import load_manifests
from eventsched.config.featuregates import admission_at, features_for
from eventsched.model.admission import Admission, admitted

BOTH = Admission(topology_spread=True, pod_affinity=True)


def pod(labels: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "p", "labels": labels}, "spec": spec}


def affinity_term(selector: Any, match: list[str], mismatch: list[str]) -> dict[str, Any]:
    term: dict[str, Any] = {"topologyKey": "zone", "labelSelector": selector}
    if match:
        term["matchLabelKeys"] = match
    if mismatch:
        term["mismatchLabelKeys"] = mismatch
    return term


def test_match_and_mismatch_label_keys_merge_into_every_affinity_term() -> None:
    # "matchLabelKeys are merged into labelSelector with In and mismatchLabelKeys are merged
    # with NotIn": required and preferred, affinity and anti-affinity.
    def term() -> dict[str, Any]:
        return affinity_term({"matchLabels": {"region": "Asia"}}, ["country"], ["city"])

    spec = {
        "affinity": {
            kind: {
                "requiredDuringSchedulingIgnoredDuringExecution": [term()],
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "podAffinityTerm": term()}
                ],
            }
            for kind in ("podAffinity", "podAntiAffinity")
        }
    }
    original = pod({"country": "Japan", "city": "Kyoto"}, spec)
    before = copy.deepcopy(original)
    out = admitted(original, BOTH)
    assert original == before  # the manifest itself is left alone
    expressions = [
        {"key": "country", "operator": "In", "values": ["Japan"]},
        {"key": "city", "operator": "NotIn", "values": ["Kyoto"]},
    ]
    for kind in ("podAffinity", "podAntiAffinity"):
        section = out["spec"]["affinity"][kind]
        required = section["requiredDuringSchedulingIgnoredDuringExecution"][0]
        preferred = section["preferredDuringSchedulingIgnoredDuringExecution"][0]
        for merged in (required, preferred["podAffinityTerm"]):
            assert merged["labelSelector"] == {
                "matchLabels": {"region": "Asia"},
                "matchExpressions": expressions,
            }
            assert merged["matchLabelKeys"] == ["country"]  # the keys stay


def test_keys_the_pod_has_no_label_for_are_ignored() -> None:
    # "keys, which are not found in Pod labels, are ignored".
    term = affinity_term({"matchLabels": {"region": "Asia"}}, ["country"], ["city"])
    spec = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
    out = admitted(pod({}, spec), BOTH)
    merged = out["spec"]["affinity"]["podAffinity"]
    assert merged["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"] == {
        "matchLabels": {"region": "Asia"}
    }


def test_a_nil_selector_is_left_nil() -> None:
    # "matchLabelKeys is ignored if the labelSelector is nil" (both functions).
    term = affinity_term(None, ["country"], [])
    spec = {
        "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
        "topologySpreadConstraints": [{"topologyKey": "zone", "matchLabelKeys": ["country"]}],
    }
    out = admitted(pod({"country": "Japan"}, spec), BOTH)
    assert out["spec"] == spec


def test_spread_constraints_merge_match_label_keys() -> None:
    # Test_mutateTopologySpreadConstraints "matchLabelKeys are merged into labelSelector
    # with In"; with the SelectorMerge gate off, "... are not merged".
    constraint = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
        "matchLabelKeys": ["pod-template-hash"],
    }
    manifest = pod(
        {"app": "web", "pod-template-hash": "abc"}, {"topologySpreadConstraints": [constraint]}
    )
    out = admitted(manifest, Admission(topology_spread=True))
    assert out["spec"]["topologySpreadConstraints"][0]["labelSelector"] == {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "pod-template-hash", "operator": "In", "values": ["abc"]}],
    }
    assert admitted(manifest, Admission(pod_affinity=True)) == manifest


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.28", Admission()),
        ("1.30", Admission()),  # MatchLabelKeysInPodAffinity alpha, off
        ("1.31", Admission(pod_affinity=True)),
        ("1.33", Admission(pod_affinity=True)),
        ("1.34", Admission(topology_spread=True, pod_affinity=True)),
        ("1.37", Admission(topology_spread=True, pod_affinity=True)),
    ],
)
def test_the_merges_of_each_versions_api_server(version: str, expected: Admission) -> None:
    assert admission_at(features_for(version)) == expected
    off = features_for("1.37", {"MatchLabelKeysInPodTopologySpreadSelectorMerge": False})
    assert admission_at(off) == Admission(pod_affinity=True)


def test_simulates_manifests_are_admitted_as_the_versions_api_server_admits_them(
    tmp_path: Any,
) -> None:
    # eventsched simulate passes admission_at(features) to load_manifests: a manifest pod's
    # pod affinity matchLabelKeys, which kube-scheduler never reads itself, is in its
    # selector as a cluster of that version would hold it.
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {tenant: a}}\n"
        "spec:\n  containers: [{name: c}]\n  affinity:\n    podAntiAffinity:\n"
        "      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      - topologyKey: zone\n        labelSelector: {}\n"
        "        matchLabelKeys: [tenant]\n"
    )

    def selector(version: str) -> Any:
        loaded = load_manifests(tmp_path, admission=admission_at(features_for(version)))
        (term,) = loaded.pods[0].affinity["podAntiAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]
        return term["labelSelector"]

    assert selector("1.30") == {}
    assert selector("1.37") == {
        "matchExpressions": [{"key": "tenant", "operator": "In", "values": ["a"]}]
    }
