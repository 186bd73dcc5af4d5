"""The breadth suite: thousands of scenarios from one seed, mixing every family's features
with non-default profiles (issue 54, part 3).

Scenario `gen/<i>` takes the rng seeded with "gen/<SEED>/<i>": it picks a family (weighted
towards the ones with the most arguments), builds that family's scenario with a random
variant index, then may add an extended resource (nodes' allocatable and the pending pod's
request) and may send the pending pod to one of PROFILES through `spec.schedulerName`. The
recorder runs kube-scheduler with the default profile and every profile here (all without
DefaultPreemption, like the families' recordings); the replay builds eventsched's profiles
from the same KubeSchedulerConfiguration document (`scheduler_document`).

Scenarios gen/4000 on (`generated_preemption.PREEMPTION_START`) are preemption scenarios
instead, in the hand-made preemption suite's format, recorded with DefaultPreemption
enabled (generated_preemption.py).

Answers are kept compact (`answers/generated/chunk-NNN.jsonl`, one line per scenario:
id, the digest of its inputs, kube-scheduler's answer); the scenario itself is regenerated.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

from tests.differential.families_basic import GPU
from tests.differential.generate import FAMILIES
from tests.differential.generated_preemption import generate_preemption, is_preemption
from tests.differential.scenario import ANSWERS

SEED = 54
COUNT = 5000
CHUNK = 500
DIRECTORY = ANSWERS / "generated"

#: family -> weight in the draw (the families with the most arguments count double).
WEIGHTS: dict[str, int] = {
    "resources": 2,
    "taints": 1,
    "nodeaffinity": 2,
    "nodename": 1,
    "unschedulable": 1,
    "balanced": 1,
    "images": 1,
    "priority": 1,
    "ports": 1,
    "spread": 3,
    "affinity": 3,
    "volumes": 1,
    "mixed": 3,
    "intree": 1,
}

_FIT = "NodeResourcesFit"
_CPU_MEM = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]

#: schedulerName -> the profile's `plugins` and `pluginConfig` (DefaultPreemption is
#: disabled in each by `scheduler_document`).
PROFILES: dict[str, dict[str, Any]] = {
    "most-allocated": {
        "pluginConfig": [
            {
                "name": _FIT,
                "args": {"scoringStrategy": {"type": "MostAllocated", "resources": _CPU_MEM}},
            }
        ]
    },
    "requested-to-capacity": {
        "pluginConfig": [
            {
                "name": _FIT,
                "args": {
                    "scoringStrategy": {
                        "type": "RequestedToCapacityRatio",
                        "resources": [
                            {"name": "cpu", "weight": 2},
                            {"name": "memory", "weight": 1},
                            {"name": GPU, "weight": 3},
                        ],
                        "requestedToCapacityRatio": {
                            "shape": [
                                {"utilization": 0, "score": 10},
                                {"utilization": 60, "score": 3},
                                {"utilization": 100, "score": 0},
                            ]
                        },
                    }
                },
            }
        ]
    },
    "least-weighted": {
        "pluginConfig": [
            {
                "name": _FIT,
                "args": {
                    "scoringStrategy": {
                        "type": "LeastAllocated",
                        "resources": [
                            {"name": "cpu", "weight": 3},
                            {"name": "memory", "weight": 1},
                            {"name": GPU, "weight": 2},
                        ],
                    }
                },
            },
            {
                "name": "NodeResourcesBalancedAllocation",
                "args": {"resources": [*_CPU_MEM, {"name": GPU, "weight": 1}]},
            },
        ]
    },
    "weights": {
        "plugins": {
            "multiPoint": {
                "enabled": [
                    {"name": "ImageLocality", "weight": 5},
                    {"name": "TaintToleration", "weight": 7},
                    {"name": "NodeAffinity", "weight": 1},
                    {"name": "PodTopologySpread", "weight": 4},
                    {"name": "InterPodAffinity", "weight": 1},
                    {"name": "NodeResourcesBalancedAllocation", "weight": 3},
                ]
            }
        }
    },
    "disabled": {
        "plugins": {
            "multiPoint": {
                "disabled": [
                    {"name": "NodeResourcesBalancedAllocation"},
                    {"name": "ImageLocality"},
                    {"name": "PodTopologySpread"},
                    {"name": "NodePorts"},
                ]
            }
        }
    },
    "score-only-disabled": {
        "plugins": {
            "score": {"disabled": [{"name": _FIT}, {"name": "TaintToleration"}]},
        },
        "pluginConfig": [
            {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 10}},
        ],
    },
}


def scheduler_document() -> dict[str, Any]:
    """The KubeSchedulerConfiguration's profiles: default-scheduler and PROFILES, each
    without DefaultPreemption (the recorder adds its clientConnection and leaderElection)."""
    profiles = [_profile("default-scheduler", {})]
    profiles += [_profile(name, body) for name, body in PROFILES.items()]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": profiles,
    }


def _profile(name: str, body: dict[str, Any]) -> dict[str, Any]:
    plugins = json.loads(json.dumps(body.get("plugins") or {}))
    multi = plugins.setdefault("multiPoint", {})
    multi["disabled"] = [{"name": "DefaultPreemption"}, *multi.get("disabled", [])]
    out: dict[str, Any] = {"schedulerName": name, "plugins": plugins}
    if body.get("pluginConfig"):
        out["pluginConfig"] = body["pluginConfig"]
    return out


def generate_one(index: int, seed: int = SEED) -> dict[str, Any]:
    """Scenario `gen/<index>`, the same on every run (from PREEMPTION_START on, a
    preemption scenario: generated_preemption.py)."""
    if is_preemption(index):
        return generate_preemption(index, seed)
    rng = random.Random(f"gen/{seed}/{index}")
    family = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
    make, _ = FAMILIES[family]
    body = make(rng, rng.randrange(1000))
    body["description"] = f"{family}: {body['description']}"
    if rng.random() < 0.3:
        _add_extended(rng, body)
    if rng.random() < 0.45:
        name = rng.choice(sorted(PROFILES))
        body["pending"]["spec"]["schedulerName"] = name
        body["description"] += f" [profile {name}]"
    return {"id": f"gen/{index}", **body}


def _add_extended(rng: random.Random, body: dict[str, Any]) -> None:
    """Some nodes get example.com/gpu; the pending pod's first container may request it."""
    for manifest in body["nodes"]:
        if rng.random() < 0.6:
            count = str(rng.choice((1, 2, 4, 8)))
            manifest["status"]["allocatable"][GPU] = count
            manifest["status"]["capacity"][GPU] = count
    container = body["pending"]["spec"]["containers"][0]
    if rng.random() < 0.7 and GPU not in (container.get("resources") or {}).get("requests", {}):
        want = str(rng.choice((1, 2, 3)))
        resources = container.setdefault("resources", {})
        resources.setdefault("requests", {})[GPU] = want
        resources.setdefault("limits", {})[GPU] = want
    body["description"] += " +gpu"


def digest(scenario: dict[str, Any]) -> str:
    """A short hash of the scenario's inputs: a recorded answer is for these inputs only."""
    text = json.dumps(scenario, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def chunk_path(chunk: int, directory: Path = DIRECTORY) -> Path:
    return directory / f"chunk-{chunk:03d}.jsonl"


def chunk_of(index: int) -> int:
    return index // CHUNK


def recorded(directory: Path = DIRECTORY) -> dict[str, dict[str, Any]]:
    """id -> recorded line, over every chunk file."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(directory.glob("chunk-*.jsonl")):
        for line in read_chunk(path):
            out[line["id"]] = line
    return out


def read_chunk(path: Path) -> list[dict[str, Any]]:
    """The chunk's lines by scenario index, the last line of each id (a scenario recorded
    again is appended)."""
    latest: dict[str, dict[str, Any]] = {}
    for text in path.read_text().splitlines():
        if text.strip():
            line = json.loads(text)
            latest[line["id"]] = line
    return sorted(latest.values(), key=lambda line: int(line["id"].split("/")[1]))


def recorded_chunks(directory: Path = DIRECTORY) -> list[int]:
    return sorted(int(p.stem.split("-")[1]) for p in directory.glob("chunk-*.jsonl"))


def answer_line(scenario: dict[str, Any], answer: dict[str, Any] | None, error: str) -> str:
    line: dict[str, Any] = {"id": scenario["id"], "digest": digest(scenario), "answer": answer}
    if error:
        line["error"] = error
    return json.dumps(line, separators=(",", ":"), sort_keys=False)
