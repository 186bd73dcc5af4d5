"""PodTopologySpread's constraints: a pod's own, the plugin's args, and the defaults.

kube-scheduler v1.28 reads `spec.topologySpreadConstraints` as the API server
validated them; `eventsched simulate` takes manifests nobody validated, so a
constraint is checked here as the API server would (`SpreadError` names the
field), and the plugin turns the error into an UnschedulableAndUnresolvable
status instead of raising. The args are validated as
`ValidatePodTopologySpreadArgs` does (`PluginArgsError` names the field).

`filterTopologySpreadConstraints` and `buildDefaultConstraints` become
`constraints_for`: the constraints with one `whenUnsatisfiable`, each with its
selector resolved (matchLabelKeys merged in, or the pod's default selector).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eventsched.framework import PluginArgsError
from eventsched.model import ManifestError, Pod, label_key_problem
from eventsched.model.objects import ClusterObjects
from eventsched.model.selectors import IN, LabelRequirement, LabelSelector

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
ACTIONS = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
HONOR = "Honor"
IGNORE = "Ignore"
POLICIES = (HONOR, IGNORE)
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"
POD_FIELD = "spec.topologySpreadConstraints"
FIELDS = (
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
)


class SpreadError(ValueError):
    """A topology spread constraint the API server would refuse; `field` is its path."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


@dataclass(frozen=True, slots=True)
class SpreadSpec:
    """One `v1.TopologySpreadConstraint`, validated; unset fields at their meaning."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    #: The nil selector (`nothing`) when `labelSelector` is unset.
    label_selector: LabelSelector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE
    match_label_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Constraint:
    """kube-scheduler's internal `topologySpreadConstraint`: the selector resolved."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    honor_affinity: bool = True
    honor_taints: bool = False


#: kube-scheduler's `systemDefaultConstraints` (plugin.go).
SYSTEM_DEFAULT_CONSTRAINTS = (
    SpreadSpec(3, LABEL_HOSTNAME, SCHEDULE_ANYWAY, LabelSelector(nothing=True)),
    SpreadSpec(5, LABEL_TOPOLOGY_ZONE, SCHEDULE_ANYWAY, LabelSelector(nothing=True)),
)


# -- reading one constraint --------------------------------------------------------------


def _positive(raw: Mapping[str, Any], key: str, where: str) -> int:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpreadError(f"{where}.{key}", f"must be an integer (got {value!r})")
    if value <= 0:
        raise SpreadError(f"{where}.{key}", f"must be greater than zero (got {value})")
    return value


def _one_of(raw: Mapping[str, Any], key: str, where: str, allowed: tuple[str, ...]) -> str:
    value = raw.get(key)
    if value not in allowed:
        quoted = ", ".join(f'"{a}"' for a in allowed)
        problem = "is required" if value in (None, "") else f"unsupported value {value!r}"
        raise SpreadError(f"{where}.{key}", f"{problem}; supported values: {quoted}")
    return str(value)


def _policy(raw: Mapping[str, Any], key: str, where: str, default: str) -> str:
    """A node inclusion policy; unset means `default` (Honor for affinity, Ignore for taints)."""
    return default if raw.get(key) is None else _one_of(raw, key, where, POLICIES)


def _topology_key(raw: Mapping[str, Any], where: str) -> str:
    key = raw.get("topologyKey")
    if not isinstance(key, str) or not key:
        raise SpreadError(f"{where}.topologyKey", "is required (a node label key)")
    problem = label_key_problem(key)
    if problem is not None:
        raise SpreadError(f"{where}.topologyKey", problem)
    return key


def _selector(raw: Mapping[str, Any], where: str) -> LabelSelector:
    try:
        return LabelSelector.parse(raw.get("labelSelector"), where, "labelSelector")
    except ManifestError as exc:
        raise SpreadError(f"{where}.{exc.field}", exc.problem) from exc


def _match_label_keys(
    raw: Mapping[str, Any], where: str, selector: LabelSelector, merged: bool
) -> tuple[str, ...]:
    keys = raw.get("matchLabelKeys") or []
    if not isinstance(keys, list):
        raise SpreadError(f"{where}.matchLabelKeys", "must be a list of label keys")
    for i, key in enumerate(keys):
        problem = label_key_problem(key) if isinstance(key, str) else "must be a label key"
        if problem is not None:
            raise SpreadError(f"{where}.matchLabelKeys[{i}]", problem)
    if merged:
        _merged_keys_problem(raw.get("labelSelector"), keys, where)
        return tuple(keys)
    in_selector = {r.key for r in selector.requirements}
    for i, key in enumerate(keys):
        if key in in_selector:
            problem = f"{key!r} exists in both matchLabelKeys and labelSelector"
            raise SpreadError(f"{where}.matchLabelKeys[{i}]", problem)
    return tuple(keys)


def _merged_keys_problem(selector: Any, keys: Sequence[str], where: str) -> None:
    """`ValidateMatchLabelKeysAndMismatchLabelKeys` (the SelectorMerge gate on, from 1.34): the
    API server has merged each key into `matchExpressions` already, so a key is refused
    only where the user wrote it too (in matchLabels, or in an earlier expression); and
    keys with no labelSelector are refused, as they select nothing."""
    if not keys:
        return
    if not isinstance(selector, Mapping):
        raise SpreadError(
            f"{where}.matchLabelKeys", "must not be specified when labelSelector is not set"
        )
    index = {key: i for i, key in enumerate(keys)}
    seen = set(selector.get("matchLabels") or ())
    for expression in selector.get("matchExpressions") or ():
        key = expression.get("key") if isinstance(expression, Mapping) else None
        if key in index and key in seen:
            problem = f"{key!r} exists in both matchLabelKeys and labelSelector"
            raise SpreadError(f"{where}.matchLabelKeys[{index[key]}]", problem)
        seen.add(key)


def parse_spec(raw: Any, where: str, merged: bool = False) -> SpreadSpec:
    """One constraint, checked as the API server checks a pod's; `merged`: as one that has
    merged matchLabelKeys into the selector checks it (from 1.34, `_merged_keys_problem`).

    minDomains with ScheduleAnyway, which the API server refuses, is let
    through: kube-scheduler ignores it there, so nothing misbehaves.
    """
    if not isinstance(raw, Mapping):
        raise SpreadError(where, "must be a topology spread constraint object")
    max_skew = _positive(raw, "maxSkew", where)
    key = _topology_key(raw, where)
    action = _one_of(raw, "whenUnsatisfiable", where, ACTIONS)
    min_domains = 1
    if raw.get("minDomains") is not None:
        min_domains = _positive(raw, "minDomains", where)
    affinity_policy = _policy(raw, "nodeAffinityPolicy", where, HONOR)
    taints_policy = _policy(raw, "nodeTaintsPolicy", where, IGNORE)
    selector = _selector(raw, where)
    keys = _match_label_keys(raw, where, selector, merged)
    return SpreadSpec(
        max_skew, key, action, selector, min_domains, affinity_policy, taints_policy, keys
    )


def _no_repeat(specs: Sequence[SpreadSpec], path: str) -> None:
    """Two constraints may not share {topologyKey, whenUnsatisfiable} (API and args validation)."""
    seen: set[tuple[str, str]] = set()
    for i, spec in enumerate(specs):
        pair = (spec.topology_key, spec.when_unsatisfiable)
        if pair in seen:
            raise SpreadError(
                f"{path}[{i}]",
                f"duplicate {{topologyKey, whenUnsatisfiable}}: {{{pair[0]}, {pair[1]}}}",
            )
        seen.add(pair)


def pod_specs(pod: Pod, merged: bool = False) -> tuple[SpreadSpec, ...]:
    """The pod's own constraints, validated as the API server validates them (`merged`: one
    that merges matchLabelKeys into the selectors)."""
    specs = tuple(
        parse_spec(raw, f"{POD_FIELD}[{i}]", merged) for i, raw in enumerate(pod.topology_spread)
    )
    _no_repeat(specs, POD_FIELD)
    return specs


# -- the args ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpreadArgs:
    """`PodTopologySpreadArgs` after defaulting: the constraints a pod without its own gets."""

    default_constraints: tuple[SpreadSpec, ...]
    #: `System`: the system defaults, and nodes need not carry every key to be scored.
    system_defaulted: bool


def parse_args(args: Mapping[str, Any]) -> SpreadArgs:
    """`PodTopologySpreadArgs` defaulted (v1: defaultingType System) and validated."""
    defaulting = args.get("defaultingType", SYSTEM_DEFAULTING)
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        raise PluginArgsError("defaultingType", f'must be "System" or "List" (got {defaulting!r})')
    raw = args.get("defaultConstraints") or []
    if not isinstance(raw, list):
        raise PluginArgsError("defaultConstraints", "must be a list of topology spread constraints")
    if defaulting == SYSTEM_DEFAULTING and raw:
        raise PluginArgsError(
            "defaultingType", 'must be "List" when defaultConstraints are not empty'
        )
    specs = []
    for i, item in enumerate(raw):
        where = f"defaultConstraints[{i}]"
        if isinstance(item, Mapping):
            unknown = sorted(str(k) for k in item if k not in FIELDS)
            if unknown:
                raise PluginArgsError(f"{where}.{unknown[0]}", "unknown field")
            if item.get("labelSelector") is not None:
                raise PluginArgsError(
                    f"{where}.labelSelector",
                    "must not be set: the selector of a default constraint is deduced for each pod",
                )
        try:
            specs.append(parse_spec(item, where))
        except SpreadError as exc:
            raise PluginArgsError(exc.field, exc.problem) from exc
    try:
        _no_repeat(specs, "defaultConstraints")
    except SpreadError as exc:
        raise PluginArgsError(exc.field, exc.problem) from exc
    if defaulting == SYSTEM_DEFAULTING:
        return SpreadArgs(SYSTEM_DEFAULT_CONSTRAINTS, True)
    return SpreadArgs(tuple(specs), False)


# -- resolving -----------------------------------------------------------------------------


def _merged(
    selector: LabelSelector, keys: tuple[str, ...], labels: Mapping[str, str]
) -> LabelSelector:
    """`mergeLabelSetWithSelector`: the pod's values for matchLabelKeys ANDed in.

    A nil selector has no requirements to keep, so it becomes the label set alone.
    """
    values = {k: labels[k] for k in keys if k in labels}
    if not values:
        return selector
    extra = tuple(LabelRequirement(k, IN, frozenset([v])) for k, v in sorted(values.items()))
    kept = () if selector.nothing else selector.requirements
    return LabelSelector(extra + kept)


def _resolved(spec: SpreadSpec, selector: LabelSelector) -> Constraint:
    return Constraint(
        spec.max_skew,
        spec.topology_key,
        selector,
        spec.min_domains,
        spec.node_affinity_policy == HONOR,
        spec.node_taints_policy == HONOR,
    )


def constraints_for(
    pod: Pod,
    own: tuple[SpreadSpec, ...],
    args: SpreadArgs,
    objects: ClusterObjects,
    action: str,
    merge_match_label_keys: bool = True,
) -> tuple[Constraint, ...]:
    """The pod's constraints with `action`; the defaults when it has none of its own.
    `merge_match_label_keys`: the MatchLabelKeysInPodTopologySpread gate (on at every version
    eventsched decides as; off, matchLabelKeys are ignored)."""
    if own:
        return tuple(
            _resolved(
                s,
                _merged(s.label_selector, s.match_label_keys, pod.labels)
                if merge_match_label_keys
                else s.label_selector,
            )
            for s in own
            if s.when_unsatisfiable == action
        )
    defaults = [s for s in args.default_constraints if s.when_unsatisfiable == action]
    if not defaults:
        return ()
    selector = objects.default_selector(pod)
    if selector.is_everything:
        return ()
    return tuple(_resolved(s, selector) for s in defaults)
