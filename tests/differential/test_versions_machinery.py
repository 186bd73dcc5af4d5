"""The per-version parts of the differential suite: which plugins a version's scenarios
ablate, what the recorder reads from a newer kube-scheduler, the causes a disagreement is
put down to, and the checked-in lists of known disagreements."""

from __future__ import annotations

import json

from tests.differential.causes import classify, message_causes
from tests.differential.eventsched_run import Outcome
from tests.differential.generate import generate
from tests.differential.knownlist import document, dump, known
from tests.differential.kubeapi import cache_size_in
from tests.differential.recorder import _not_ready, _taint_keys
from tests.differential.report import Results, table, version_of
from tests.differential.scenario import (
    IN_TREE_LIMITS,
    UPSTREAM_DEFAULTS,
    ablation_sets,
    answers_dir,
    uses,
)
from tests.differential.verdict import Verdict
from tests.differential.versions import target


def test_a_version_ablates_only_the_plugins_it_has() -> None:
    """v1.34 and v1.37 have no in-tree volume limits (default_plugins.go): a profile
    disabling EBSLimits would be refused, so no ablation names them."""
    volume = next(s for s in generate("intree") if IN_TREE_LIMITS[0] in uses(s))
    assert set(IN_TREE_LIMITS) <= uses(volume, "1.28")
    for version in ("1.34", "1.37"):
        used = uses(volume, version)
        assert used and not set(IN_TREE_LIMITS) & used
        assert all(not set(IN_TREE_LIMITS) & a for a in ablation_sets(used))
        assert set(used) <= set(UPSTREAM_DEFAULTS[version])


def test_upstream_defaults_per_version() -> None:
    # from pkg/scheduler/apis/config/v1/default_plugins.go at each version
    assert UPSTREAM_DEFAULTS["1.37"][:2] == ("NodeName", "NodeUnschedulable")
    assert UPSTREAM_DEFAULTS["1.34"][:2] == ("NodeUnschedulable", "NodeName")
    assert "NodeDeclaredFeatures" in UPSTREAM_DEFAULTS["1.37"]
    assert "NodeDeclaredFeatures" not in UPSTREAM_DEFAULTS["1.34"]
    assert all("DynamicResources" in UPSTREAM_DEFAULTS[v] for v in ("1.34", "1.37"))
    assert answers_dir("1.28").name == "answers" and answers_dir("1.37").name == "v1.37"


def test_the_cache_size_under_either_name() -> None:
    v128 = 'scheduler_scheduler_cache_size{type="nodes"} 3\n'
    v137 = 'scheduler_cache_size{type="nodes"} 3\nscheduler_cache_size{type="pods"} 2\n'
    assert cache_size_in(v128) == {"nodes": 3}
    assert cache_size_in(v137) == {"nodes": 3, "pods": 2}


def test_the_sync_probe_sees_not_ready_in_either_version() -> None:
    nodes = [{"spec": {"taints": [{"key": "dedicated", "effect": "NoSchedule"}]}}, {}]
    assert _taint_keys(nodes) == {"dedicated"}
    assert _not_ready("0/2 nodes are available: 2 node(s) had untolerated taint(s).")
    assert _not_ready(
        "0/2 nodes are available: 2 node(s) had untolerated taint {node.kubernetes.io/not-ready: }."
    )
    assert not _not_ready("0/2 nodes are available: 2 Insufficient differential.test/probe.")


def test_message_causes_rewrite_eventsched_towards_kube_scheduler() -> None:
    ours = (
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
        "{a: b}, 1 node(s) had untolerated taint {c: }."
    )
    theirs = "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s)."
    assert message_causes(theirs, ours) == {"taint message"}
    assert message_causes(theirs + " no new claims to deallocate", ours) == {
        "taint message",
        "DynamicResources PostFilter message",
    }
    unbound = "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims."
    assert message_causes(unbound + " not found", unbound) == {
        "DynamicResources PostFilter after a PreFilter rejection"
    }
    absent = (
        "0/6 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "5 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    only = "0/6 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
    assert message_causes(absent, only) == {"PreFilterResult absent nodes"}
    assert message_causes(absent, 'nodeinfo not found for node name "x"') == {
        "PreFilterResult names an absent node"
    }


def test_what_no_rule_explains_is_named() -> None:
    theirs = "0/2 nodes are available: 2 Insufficient memory."
    ours = "0/2 nodes are available: 2 Insufficient cpu."
    assert message_causes(theirs, ours) == {
        "message reasons: kube-scheduler ['Insufficient memory'], eventsched ['Insufficient cpu']"
    }


def _answer(**fields: object) -> dict[str, object]:
    base = {"node": "a", "feasible": ["a", "b"], "unique": True, "scores": {}, "total": {}}
    return {**base, **fields}


def test_scores_are_put_down_to_their_plugin_and_change() -> None:
    scenario = {
        "answer": _answer(
            scores={"a": {"NodeResourcesFit": 50}, "b": {"NodeResourcesFit": 40}},
            total={"a": 50, "b": 40},
        )
    }
    ours = Outcome(
        node="a",
        feasible=["a", "b"],
        scores={
            "a": {"NodeResourcesFit": 50, "NodeResourcesBalancedAllocation": 90},
            "b": {"NodeResourcesFit": 40, "NodeResourcesBalancedAllocation": 80},
        },
        total={"a": 140, "b": 120},
    )
    verdict = Verdict("disagree")
    assert classify(scenario, ours, verdict, "1.37") == (
        "BalancedAllocation skips best-effort pods",
    )
    scenario["answer"]["scores"]["a"]["NodeResourcesBalancedAllocation"] = 75  # type: ignore[index]
    scenario["answer"]["scores"]["b"]["NodeResourcesBalancedAllocation"] = 75  # type: ignore[index]
    assert classify(scenario, ours, verdict, "1.37") == ("BalancedAllocation v1.37 formula",)
    assert classify(scenario, ours, verdict, "1.34") == ("NodeResourcesBalancedAllocation score",)


def test_a_node_eventsched_rejects_is_put_down_to_its_plugin() -> None:
    scenario = {"answer": _answer(feasible=["a", "b"], unique=False)}
    ours = Outcome(
        node="a",
        feasible=["a"],
        rejections={"b": ("EBSLimits", ("node(s) exceed max volume count",))},
    )
    assert classify(scenario, ours, Verdict("disagree"), "1.37") == ("in-tree volume limits gone",)


def test_the_list_file_round_trips_and_counts_causes() -> None:
    results = [
        ("a/0", "agree", ()),
        ("a/1", "disagree", ("taint message",)),
        ("a/2", "disagree", ("taint message", "ImageLocality")),
    ]
    doc = document("1.37", results)
    assert json.loads(dump(doc)) == doc
    assert doc["agree"] == 1 and doc["scenarios"]["a/2"] == ["taint message", "ImageLocality"]
    assert list(doc["causes"]) == ["taint message", "ImageLocality"]
    assert doc["causes"]["taint message"] == {
        "count": 2,
        "example": "a/1",
        "upstream": doc["causes"]["taint message"]["upstream"],
    }


def test_the_checked_in_lists_name_their_causes() -> None:
    for version in ("1.34", "1.37"):
        for sid, causes in known(version).items():
            assert causes and list(causes) == sorted(causes), sid


def test_each_version_decides_as_itself() -> None:
    assert target("1.28").features.is_legacy and target("1.28").case_id("a/1") == "a/1"
    assert target("1.37").features.version == "1.37"
    assert target("1.37").case_id("a/1") == "v1.37/a/1"
    assert version_of("v1.37/a/1") == ("1.37", "a/1") and version_of("gen:x/3") == (
        "1.28",
        "gen:x/3",
    )


def test_the_agreement_table_has_a_section_per_version() -> None:
    results = Results(
        status={"a/0": "agree", "v1.37/a/0": "known", "v1.37/a/1": "disagree"},
        problems={"a/0": [], "v1.37/a/0": ["x"], "v1.37/a/1": ["y"]},
        causes={"v1.37/a/0": ("taint message",)},
    )
    text = table(results)
    assert text.index("kube-scheduler v1.28:") < text.index("kube-scheduler v1.37:")
    assert "     1  taint message" in text and "v1.37/a/1: y" in text


def test_a_reason_with_a_dot_is_one_reason() -> None:
    ours = (
        "0/3 nodes are available: 1 Insufficient example.com/gpu, 2 node(s) had untolerated "
        "taint {dedicated: infra}."
    )
    theirs = (
        "0/3 nodes are available: 1 Insufficient example.com/gpu, 2 node(s) had untolerated "
        "taint(s)."
    )
    assert message_causes(theirs, ours) == {"taint message"}
