"""The differential suite's own parts: log parsing, ablation sets, the expected answer
without missing plugins, the comparison and the answers file format."""

from __future__ import annotations

import json
from pathlib import Path

from tests.differential.compare import compare, expected
from tests.differential.eventsched_run import Outcome
from tests.differential.kubelog import LogReader
from tests.differential.scenario import (
    IN_TREE_LIMITS,
    Answer,
    ablation_key,
    ablation_sets,
    dump_family,
    profile_name,
)

LOG = """\
I1124 04:24:47.649415   17319 schedule_one.go:93] "Attempting to schedule pod" pod="default/p"
I1124 04:24:47.649892   17319 schedule_one.go:729] "Plugin scored node for pod" pod="default/p" plugin="TaintToleration" node="n0" score=300
I1124 04:24:47.649893   17319 schedule_one.go:729] "Plugin scored node for pod" pod="default/other" plugin="TaintToleration" node="n0" score=0
I1124 04:24:47.649906   17319 schedule_one.go:729] "Plugin scored node for pod" pod="default/p" plugin="NodeResourcesFit" node="n1" score=86
I1124 04:24:47.650019   17319 schedule_one.go:796] "Calculated node's final score for pod" pod="default/p" node="n0" score=480
I1124 04:24:47.650020   17319 schedule_one.go:93] "Attempting to schedule pod" pod="default/p"
"""


def test_log_attempts_keep_each_attempts_scores_of_the_pod_only(tmp_path: Path) -> None:
    path = tmp_path / "kube-scheduler.log"
    path.write_text("noise\n" + LOG)
    attempts = LogReader(path).attempts(len("noise\n"), "default/p")
    assert len(attempts) == 2
    assert attempts[0].scores == {"n0": {"TaintToleration": 300}, "n1": {"NodeResourcesFit": 86}}
    assert attempts[0].total == {"n0": 480}
    assert attempts[1].scores == {} and attempts[1].total == {}


def test_ablation_sets_and_profile_names() -> None:
    assert ablation_sets([]) == []
    assert ablation_sets(["NodePorts", "InterPodAffinity"]) == [
        frozenset({"InterPodAffinity"}),
        frozenset({"NodePorts"}),
        frozenset({"InterPodAffinity", "NodePorts"}),
    ]
    volume = ablation_sets(["VolumeBinding", "VolumeZone", "VolumeRestrictions", *IN_TREE_LIMITS])
    limits = frozenset(IN_TREE_LIMITS)
    assert volume[0] == limits and all(limits <= s for s in volume)
    assert len(volume) == 5  # the limits alone, each other plugin with them, all
    names = [profile_name(s) for s in volume]
    assert max(len(n) for n in names) <= 63 and len(set(names)) == len(names)
    assert ablation_key(["VolumeZone", "NodePorts"]) == "NodePorts+VolumeZone"


def _scenario() -> dict:
    scores = {
        "a": {"TaintToleration": 300, "NodeResourcesBalancedAllocation": 90, "NodePorts": 0},
        "b": {"TaintToleration": 300, "NodeResourcesBalancedAllocation": 80},
    }
    answer = Answer("a", None, ["a", "b"], scores, {"a": 390, "b": 380}, True)
    ablated = Answer("c", None, ["a", "b", "c"], {}, {}, False)
    pending = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 1, "hostPort": 1}]}]},
    }
    return {
        "pending": pending,
        "pods": [],
        "objects": [],
        "answer": answer.to_json(),
        "ablations": {"NodePorts": ablated.to_json()},
    }


def test_expected_without_a_score_plugin_subtracts_its_scores() -> None:
    without = expected(_scenario(), {"NodeResourcesBalancedAllocation"})
    assert without is not None
    assert without.total == {"a": 300, "b": 300}
    assert not without.unique  # the plugin was what made node a the only best


def test_expected_without_a_filter_plugin_is_its_ablation() -> None:
    without = expected(_scenario(), {"NodePorts"})
    assert without is not None and without.feasible == ["a", "b", "c"]
    assert expected({**_scenario(), "ablations": {}}, {"NodePorts"}) is None


def test_compare_names_each_difference() -> None:
    answer = Answer.from_json(_scenario()["answer"])
    same = Outcome("a", feasible=["a", "b"], scores=answer.scores, total=answer.total)
    assert compare(same, answer, ["TaintToleration"]) == []
    other = Outcome("b", feasible=["a", "b"], scores={"a": {"TaintToleration": 0}}, total={})
    checks = [p.check for p in compare(other, answer, ["TaintToleration"])]
    assert checks == ["node", "score", "total"]
    failed = Answer(None, "0/2 nodes are available: 2 Insufficient cpu.")
    assert [p.check for p in compare(Outcome(None, "x", "x"), failed, [])] == ["message"]


def test_answers_file_is_json_with_one_manifest_per_line() -> None:
    document = {"family": "f", "scenarios": [{"id": "f/0", "nodes": [{"a": 1}, {"b": 2}]}]}
    text = dump_family(document)
    assert json.loads(text) == document
    assert '        {"a": 1},\n        {"b": 2}\n' in text
