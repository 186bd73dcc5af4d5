"""PinnedHost (PreScore + Score): steer pods toward configured hosts, or the one a pod names.

An operator lists preferred nodes by name (`hosts`) or by labels
(`selectors`), each with a score; a pod may name its own preferred node in
the `eventsched.io/preferred-node` annotation, which then gets the maximum
score. A node's raw score is the highest score of the rules it matches (0
when none), rescaled min-max over the nodes being scored so the preferred
node gets 100 and the others 0 whatever the absolute numbers. It is a
preference, never a requirement: a pinned host that does not fit is simply
not among the nodes scored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.framework import (
    LEGACY_FEATURES,
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    SKIP,
    CycleState,
    Features,
    Handle,
    PluginArgsError,
    Status,
    check_args,
    min_max_normalize,
)
from eventsched.model import (
    Indexes,
    IntArray,
    NodeTable,
    Pod,
    is_dns1123_subdomain,
    label_key_problem,
    label_value_problem,
)

NAME = "PinnedHost"
#: The pod annotation naming the node it prefers; that node gets MAX_NODE_SCORE.
PREFERRED_NODE_ANNOTATION = "eventsched.io/preferred-node"
KNOWN_ARGS = ("hosts", "selectors")
DEFAULT_RULE_SCORE = MAX_NODE_SCORE

_STATE_KEY = "PreScorePinnedHost"


def _quote(value: object) -> str:
    """A value as the config errors print it: strings in double quotes, like `(got "1m")`."""
    return json.dumps(value) if isinstance(value, str) else repr(value)


@dataclass(frozen=True, slots=True)
class Selector:
    """Nodes carrying every label of `match_labels` get `score`."""

    match_labels: tuple[tuple[str, str], ...]
    score: int

    def matches(self, table: NodeTable, rows: Indexes) -> np.ndarray:
        out = np.ones(len(rows), dtype=bool)
        for key, value in self.match_labels:
            out &= table.label_values(key)[rows] == value
        return out


class PinnedHost:
    """Prefer configured hosts and the pod's preferred node; see the module docstring."""

    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args, KNOWN_ARGS)
        self.handle = handle
        self.hosts: dict[str, int] = _hosts(args.get("hosts"))
        self.selectors: tuple[Selector, ...] = _selectors(args.get("selectors"))

    def annotations_read(self) -> tuple[str, ...]:
        return (PREFERRED_NODE_ANNOTATION,)

    def pre_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> Status | None:
        """Read the pod's annotation once; Skip when there is nothing to prefer."""
        preferred = pod.annotations.get(PREFERRED_NODE_ANNOTATION, "").strip()
        state.write(_STATE_KEY, preferred)
        if not preferred and not self.hosts and not self.selectors:
            return SKIP
        return None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        """Raw score per node: the highest score among the rules (hosts, selectors, annotation) it matches."""
        preferred: str | None = state.get(_STATE_KEY)
        if preferred is None:  # enabled at Score without PreScore
            preferred = pod.annotations.get(PREFERRED_NODE_ANNOTATION, "").strip()
        scores = np.zeros(len(rows), dtype=np.int64)
        # A few named hosts: look each up by row instead of comparing every node's name.
        by_row = np.zeros(len(table), dtype=np.int64)
        named = {**self.hosts, **({preferred: MAX_NODE_SCORE} if preferred else {})}
        for host, score in named.items():
            row = table.row_of(host)
            if row is not None:
                by_row[row] = max(int(by_row[row]), score)
        if named:
            scores = np.maximum(scores, by_row[rows])
        for selector in self.selectors:
            scores = np.maximum(scores, np.where(selector.matches(table, rows), selector.score, 0))
        if preferred:
            self._check_preferred(state, preferred, table, rows)
        return scores

    def _check_preferred(
        self, state: CycleState, preferred: str, table: NodeTable, rows: Indexes
    ) -> None:
        """Log, once per attempt, why the pod's preferred node could not get its score.

        The runtime records only numbers for Score, so a typo in the
        annotation would otherwise look like the plugin ignoring the pod.
        `input_recorded`: the closed event vocabulary has no kind for a
        plugin's notes, and this is what the plugin read from the snapshot.
        """
        row = table.row_of(preferred)
        if row is None:
            reason = f"no node named {preferred} in the cluster; no node gets the pod's preference"
            found = False
        elif not np.any(rows == row):
            reason = (
                f"node {preferred} is not among the {len(rows)} feasible node(s) scored "
                "(it failed a filter or was not evaluated)"
            )
            found = True
        else:
            return
        state.record_input(
            self.name,
            "preferredNode",
            {
                "annotation": PREFERRED_NODE_ANNOTATION,
                "node": preferred,
                "found": found,
                "scored": False,
                "reason": reason,
            },
        )

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: IntArray, rows: Indexes
    ) -> IntArray:
        """Min-max to 0..100: the best node 100, the worst 0; all equal means no preference, all 0."""
        return min_max_normalize(scores)


def _score(raw: object, field: str) -> int:
    if raw is None:
        return DEFAULT_RULE_SCORE
    if (
        isinstance(raw, bool)
        or not isinstance(raw, int)
        or not MIN_NODE_SCORE <= raw <= MAX_NODE_SCORE
    ):
        raise PluginArgsError(
            field, f"must be an integer {MIN_NODE_SCORE}..{MAX_NODE_SCORE} (got {_quote(raw)})"
        )
    return raw


def _list(raw: object, field: str, what: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise PluginArgsError(field, f"must be a list of {what} (got {_quote(raw)})")
    return raw


def _item(raw: object, field: str, known: tuple[str, ...], what: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise PluginArgsError(field, f"must be a mapping {what} (got {_quote(raw)})")
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise PluginArgsError(
            f"{field}.{unknown[0]}", f"unknown field; an entry takes {', '.join(known)}"
        )
    return raw


def _hosts(raw: object) -> dict[str, int]:
    hosts: dict[str, int] = {}
    where: dict[str, int] = {}
    for i, item in enumerate(_list(raw, "hosts", "{name: NODE, score: 0..100}")):
        entry = _item(item, f"hosts[{i}]", ("name", "score"), "{name: NODE, score: 0..100}")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise PluginArgsError(f"hosts[{i}].name", f"must be a node name (got {_quote(name)})")
        if not is_dns1123_subdomain(name):
            raise PluginArgsError(
                f"hosts[{i}].name",
                f"must be a node name: a lowercase DNS subdomain of at most 253 characters "
                f"(got {_quote(name)})",
            )
        if name in hosts:
            raise PluginArgsError(
                f"hosts[{i}].name", f"{name} is already listed as hosts[{where[name]}]; keep one"
            )
        hosts[name] = _score(entry.get("score"), f"hosts[{i}].score")
        where[name] = i
    return hosts


def _selectors(raw: object) -> tuple[Selector, ...]:
    out = []
    what = "{matchLabels: {KEY: VALUE}, score: 0..100}"
    for i, item in enumerate(_list(raw, "selectors", what)):
        entry = _item(item, f"selectors[{i}]", ("matchLabels", "score"), what)
        labels = entry.get("matchLabels")
        field = f"selectors[{i}].matchLabels"
        if not isinstance(labels, Mapping) or not labels:
            raise PluginArgsError(
                field, f"must be a non-empty mapping of label keys to values (got {_quote(labels)})"
            )
        pairs = []
        for key, value in labels.items():
            problem = _key_problem(key) or _value_problem(value)
            if problem is not None:
                raise PluginArgsError(f"{field}.{key}", problem)
            pairs.append((str(key), str(value)))
        out.append(Selector(tuple(pairs), _score(entry.get("score"), f"selectors[{i}].score")))
    return tuple(out)


def _key_problem(key: object) -> str | None:
    if not isinstance(key, str) or not key:
        return f"must be a label key (got {_quote(key)})"
    return label_key_problem(key)


def _value_problem(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return f"must be a label value string; quote it in YAML (got {_quote(value)})"
    return label_value_problem(str(value))
