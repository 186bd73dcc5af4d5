"""A differential scenario, kube-scheduler's recorded answer, and the answers files.

A scenario is plain JSON: `namespaces`, `objects` (anything else to create first: Services,
ReplicaSets, PriorityClasses, StorageClasses, PersistentVolumes, claims, CSINodes, ...),
`nodes`, `pods` (already assigned: `spec.nodeName` set) and one `pending` pod. The recorder
adds `answer` (kube-scheduler with the default profile) and `ablations` (the same
pending pod scheduled by profiles without some of the plugins the scenario uses, which
tells the comparison what a scheduler lacking those plugins should answer).

Answers are kept per Kubernetes version: v1.28's in `answers/<family>.json` (recorded
first, before there were others), every other version's in `answers/v<version>/`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ANSWERS = Path(__file__).parent / "answers"

#: kube-scheduler v1.28's default plugins (pkg/scheduler/apis/config/v1/default_plugins.go),
#: in order, without the queue-sort, PreEnqueue, PostFilter and Bind ones.
UPSTREAM_DEFAULT = (
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "EBSLimits",
    "GCEPDLimits",
    "NodeVolumeLimits",
    "AzureDiskLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
)
#: The same at each reference version (`getDefaultPlugins` and `applyFeatureGates` with
#: the version's default gates): the in-tree volume limits are gone by v1.34, whose
#: DynamicResourceAllocation (GA) adds DynamicResources; v1.37 runs NodeName before
#: NodeUnschedulable and appends NodeDeclaredFeatures (GA).
UPSTREAM_DEFAULTS: dict[str, tuple[str, ...]] = {
    "1.28": UPSTREAM_DEFAULT,
    "1.34": (
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    ),
    "1.37": (
        "NodeName",
        "NodeUnschedulable",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "NodeDeclaredFeatures",
    ),
}
#: The version whose answers are in answers/ itself (every other one's in answers/v<V>/).
LEGACY_VERSION = "1.28"
#: Plugins that can reject nodes and that only some scenarios use: ablated when used.
ABLATABLE = (
    "NodePorts",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
)
VOLUME_PLUGINS = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")
#: The in-tree volume limits: their Filter looks a pod's claims up too (a missing claim is
#: an error there); ablated as one block, with every set of the other plugins.
IN_TREE_LIMITS = ("EBSLimits", "GCEPDLimits", "AzureDiskLimits")
#: The in-line volume sources they count.
IN_TREE_SOURCES = ("awsElasticBlockStore", "gcePersistentDisk", "azureDisk")
#: Short names in ablation profiles' schedulerName, which kube-scheduler also uses as its
#: Events' reportingController (at most 63 characters).
_CODES = {
    "NodePorts": "np",
    "VolumeRestrictions": "vr",
    "NodeVolumeLimits": "nvl",
    "VolumeBinding": "vb",
    "VolumeZone": "vz",
    "PodTopologySpread": "pts",
    "InterPodAffinity": "ipa",
    "EBSLimits": "ebs",
    "GCEPDLimits": "gcepd",
    "AzureDiskLimits": "azuredisk",
}
_CONTROLLERS = ("ReplicaSet", "StatefulSet", "ReplicationController")


@dataclass
class Answer:
    """One scheduling attempt's outcome, as kube-scheduler's log and the API showed it."""

    node: str | None
    #: The FailedScheduling Event's message (None when the pod was bound).
    message: str | None = None
    feasible: list[str] = field(default_factory=list)
    #: node -> plugin -> weighted score ("Plugin scored node for pod"); empty when fewer
    #: than two nodes were feasible (kube-scheduler does not score then).
    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    #: node -> "Calculated node's final score for pod".
    total: dict[str, int] = field(default_factory=dict)
    #: One node holds the top total, or only one node was feasible.
    unique: bool = False
    #: The PodScheduled condition's message (kube-scheduler's; None when bound).
    condition: str | None = None
    #: "Attempting to schedule pod" lines seen for the pod before the answer (1 normally).
    attempts: int = 1

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Answer:
        return cls(**dict(raw))


def is_unique(total: Mapping[str, int], feasible: list[str]) -> bool:
    if len(feasible) == 1:
        return True
    if not total:
        return False
    best = max(total.values())
    return sum(1 for v in total.values() if v == best) == 1


def scenario_id(scenario: Mapping[str, Any]) -> str:
    return str(scenario["id"])


# -- which optional plugins a scenario uses --------------------------------------------


def upstream_default(version: str = LEGACY_VERSION) -> tuple[str, ...]:
    """kube-scheduler's default plugins at `version` (a reference version)."""
    return UPSTREAM_DEFAULTS[version]


def uses(scenario: Mapping[str, Any], version: str = LEGACY_VERSION) -> frozenset[str]:
    """The ABLATABLE plugins (and in-tree volume limits) whose inputs the scenario sets (the
    pending pod's host ports, spread constraints or default spreading, any pod's inter-pod
    (anti-)affinity, volumes), among those kube-scheduler `version` has."""
    return _uses(scenario) & frozenset(upstream_default(version))


def _uses(scenario: Mapping[str, Any]) -> frozenset[str]:
    pending = scenario["pending"]
    spec = pending.get("spec") or {}
    used: set[str] = set()
    if any(p.get("hostPort") for c in spec.get("containers") or [] for p in c.get("ports") or []):
        used.add("NodePorts")
    if spec.get("topologySpreadConstraints") or _default_spreading(scenario):
        used.add("PodTopologySpread")
    for p in [*scenario.get("pods", []), pending]:
        affinity = (p.get("spec") or {}).get("affinity") or {}
        if affinity.get("podAffinity") or affinity.get("podAntiAffinity"):
            used.add("InterPodAffinity")
    used |= _volume_plugins(scenario, spec)
    return frozenset(used)


def _default_spreading(scenario: Mapping[str, Any]) -> bool:
    """A Service or controller of the scenario selects the pending pod (system default
    spreading then applies: `helper.DefaultSelector`)."""
    pending = scenario["pending"]
    meta = pending["metadata"]
    namespace = meta.get("namespace", "default")
    labels = meta.get("labels") or {}
    for obj in scenario.get("objects", []):
        if obj.get("kind") != "Service" or obj["metadata"].get("namespace", "default") != namespace:
            continue
        selector = (obj.get("spec") or {}).get("selector") or {}
        if selector and all(labels.get(k) == v for k, v in selector.items()):
            return True
    for ref in meta.get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") in _CONTROLLERS:
            return any(
                o.get("kind") == ref["kind"] and o["metadata"]["name"] == ref["name"]
                for o in scenario.get("objects", [])
            )
    return False


def _volume_plugins(scenario: Mapping[str, Any], spec: Mapping[str, Any]) -> set[str]:
    """A claim in the pending pod reaches every volume plugin: each one looks the claim up
    (a missing or unbound claim fails there), whatever else it checks. An in-line AWS EBS,
    GCE PD or Azure Disk volume is counted by its in-tree limit (or, where migrated, by
    NodeVolumeLimits) and checked for disk conflicts by VolumeRestrictions."""
    volumes = spec.get("volumes") or []
    if any(v.get("persistentVolumeClaim") or v.get("ephemeral") for v in volumes):
        return set(VOLUME_PLUGINS) | set(IN_TREE_LIMITS)
    if any(v.get(s) for v in volumes for s in IN_TREE_SOURCES):
        return {"VolumeRestrictions", "NodeVolumeLimits", *IN_TREE_LIMITS}
    return set()


def ablation_sets(used: Iterable[str]) -> list[frozenset[str]]:
    """The plugin sets to record without: every non-empty subset of up to two used
    plugins; with more, each alone and all together. The in-tree volume limits go with
    every set, and alone."""
    block = frozenset(used) & frozenset(IN_TREE_LIMITS)
    plugins = sorted(set(used) - block)
    if len(plugins) <= 2:
        sets = [
            frozenset(c)
            for r in range(1, len(plugins) + 1)
            for c in itertools.combinations(plugins, r)
        ]
    else:
        sets = [frozenset([p]) for p in plugins] + [frozenset(plugins)]
    if not block:
        return sets
    return [block] + [s | block for s in sets]


def ablation_key(plugins: Iterable[str]) -> str:
    return "+".join(sorted(plugins))


def profile_name(plugins: Iterable[str]) -> str:
    """The schedulerName of the kube-scheduler profile without `plugins` (a DNS subdomain
    of at most 63 characters)."""
    return "without." + ".".join(sorted(_CODES[p] for p in plugins))


# -- answers files ------------------------------------------------------------------------


def answers_dir(version: str = LEGACY_VERSION) -> Path:
    """Where the families' answers recorded with kube-scheduler `version` are."""
    return ANSWERS if version == LEGACY_VERSION else ANSWERS / f"v{version}"


def recorded_versions() -> list[str]:
    """The versions with recorded families: v1.28, then each answers/v<V>/ holding some."""
    found = [LEGACY_VERSION] if recorded_families(ANSWERS) else []
    newer = [
        d.name[1:]
        for d in ANSWERS.glob("v*")
        if d.is_dir() and d.name[1:] in UPSTREAM_DEFAULTS and recorded_families(d)
    ]
    return found + sorted(newer, key=lambda v: int(v.split(".")[1]))


def family_path(family: str, directory: Path = ANSWERS) -> Path:
    return directory / f"{family}.json"


def load_family(family: str, directory: Path = ANSWERS) -> dict[str, Any]:
    return dict(json.loads(family_path(family, directory).read_text()))


def recorded_families(directory: Path = ANSWERS) -> list[str]:
    return sorted(p.stem for p in directory.glob("*.json"))


def dump_family(document: Mapping[str, Any]) -> str:
    """The answers file: header fields, then one scenario per block with each manifest on
    one line, so a re-recording's diff shows which scenario and which answer changed."""
    lines = ["{"]
    for key, value in document.items():
        if key != "scenarios":
            lines.append(f"  {json.dumps(key)}: {_one_line(value)},")
    lines.append('  "scenarios": [')
    scenarios = list(document.get("scenarios", []))
    for i, scenario in enumerate(scenarios):
        lines.append("    {")
        items = list(scenario.items())
        for j, (key, value) in enumerate(items):
            comma = "," if j + 1 < len(items) else ""
            lines.append(f"      {json.dumps(key)}: {_block(value, 6)}{comma}")
        lines.append("    }" + ("," if i + 1 < len(scenarios) else ""))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _one_line(value: Any) -> str:
    return json.dumps(value, sort_keys=False, separators=(", ", ": "))


def _block(value: Any, indent: int) -> str:
    """Lists and maps one item per line (items on one line each); scalars inline."""
    pad = " " * (indent + 2)
    if isinstance(value, list) and value:
        inner = ",\n".join(pad + _one_line(v) for v in value)
        return "[\n" + inner + "\n" + " " * indent + "]"
    if isinstance(value, dict) and value:
        inner = ",\n".join(f"{pad}{json.dumps(k)}: {_one_line(v)}" for k, v in value.items())
        return "{\n" + inner + "\n" + " " * indent + "}"
    return _one_line(value)
