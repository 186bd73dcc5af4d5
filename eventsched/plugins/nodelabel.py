"""NodeLabel (PreFilter + Filter + PreScore + Score): required node labels, and a numeric label as score.

Filter keeps only nodes carrying every required label: those of the args
(`requiredLabels`) and those the pod asks for in its `eventsched.io/requires`
annotation (`accelerator=nvidia-a100,disk=ssd`; a bare `key` asks only that
the label exists). The pod's annotation is parsed once per attempt, in
PreFilter, which is also where a malformed one makes the pod unschedulable
with a message naming the annotation and the fix: a typo in one pod must
never crash the scheduler nor silently match every node.

Score reads the numeric value of one label (`scoreLabel`, e.g.
`priority.lixueduan.com`) and rescales it min-max over the nodes being
scored, so the node with the highest value gets 100 and the lowest 0
(`order: descending` flips it). Nodes without the label, or whose value is
not a number, score 0; which nodes and why is written to the log once per
attempt (see `NodeLabel.score_batch`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from eventsched.framework import (
    LEGACY_FEATURES,
    MAX_NODE_SCORE,
    NODE_ADD,
    NODE_UPDATE,
    SKIP,
    BatchFilterResult,
    ClusterEvent,
    CycleState,
    Features,
    Handle,
    PluginArgsError,
    PreFilterResult,
    Status,
    check_args,
)
from eventsched.model import (
    BoolArray,
    Indexes,
    IntArray,
    NodeTable,
    Pod,
    label_key_problem,
    label_value_problem,
)

NAME = "NodeLabel"
#: The pod annotation listing the labels a node must carry.
REQUIRES_ANNOTATION = "eventsched.io/requires"
KNOWN_ARGS = ("requiredLabels", "scoreLabel", "order")
ORDERS = ("ascending", "descending")
#: Nodes named one by one in the `unscoredNodes` input; the counts cover the rest.
MAX_LISTED_NODES = 20

_FILTER_KEY = "PreFilterNodeLabel"
_SCORE_KEY = "ScoreNodeLabel"
_FORMAT_HINT = (
    "write comma-separated KEY or KEY=VALUE entries, e.g. accelerator=nvidia-a100,disk=ssd"
)

#: A label value read as a number: an optionally signed integer or decimal.
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")


def _quote(value: object) -> str:
    """A value as the config errors print it: strings in double quotes, like `(got "1m")`."""
    return json.dumps(value) if isinstance(value, str) else repr(value)


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """The node must carry label `key`, with exactly `value` unless `value` is None."""

    key: str
    value: str | None = None

    def __str__(self) -> str:
        return self.key if self.value is None else f"{self.key}={self.value}"

    @property
    def missing_reason(self) -> str:
        return f"node(s) didn't have label {self.key}"

    @property
    def mismatch_reason(self) -> str:
        return f"node(s) had label {self.key} with a value other than {self.value}"


def parse_requirement(text: str) -> LabelRequirement:
    """`key` or `key=value` (spaces around either part ignored); ValueError names the problem."""
    key, eq, value = text.partition("=")
    key, value = key.strip(), value.strip()
    problem = label_key_problem(key)
    if problem is not None:
        raise ValueError(problem)
    if not eq:
        return LabelRequirement(key)
    if not value:
        raise ValueError(
            f"empty value for label {key}; write just {key} to require the label with any value"
        )
    if value.startswith("="):
        raise ValueError(f"'==' is not an operator here; write {key}={value.lstrip('=')}")
    problem = label_value_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return LabelRequirement(key, value)


def merge_requirements(
    sources: Sequence[tuple[str, Sequence[LabelRequirement]]],
) -> tuple[LabelRequirement, ...]:
    """All requirements in order, duplicates dropped; a key asked with two values is a ValueError.

    Two values for one key can never both hold, so saying so once beats
    rejecting every node with a reason that hides the contradiction.
    """
    out: list[LabelRequirement] = []
    wanted: dict[str, tuple[str, str]] = {}  # key -> (value, where it was asked)
    for where, requirements in sources:
        for req in requirements:
            if req.value is not None:
                seen = wanted.get(req.key)
                if seen is not None and seen[0] != req.value:
                    raise ValueError(
                        f"label {req.key} is required to be both {seen[0]} ({seen[1]}) and "
                        f"{req.value} ({where}); no node can match both, keep one"
                    )
                wanted[req.key] = (req.value, where)
            if req not in out:
                out.append(req)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class _Required:
    """What PreFilter parsed for this pod: the requirements, or the status refusing the pod."""

    requirements: tuple[LabelRequirement, ...] = ()
    refusal: Status | None = None


@dataclass(frozen=True, slots=True)
class _Numbers:
    """The score label read over the whole table: value per row, and which rows have a number."""

    table: NodeTable
    generation: int
    values: npt.NDArray[np.float64]
    present: BoolArray
    numeric: BoolArray


class NodeLabel:
    """Required labels (Filter) and a numeric label's value (Score); see the module docstring."""

    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(self.name, args, KNOWN_ARGS)
        self.handle = handle
        self.required = merge_args(_required_labels(args.get("requiredLabels")))
        self.score_label = _score_label(args.get("scoreLabel"))
        order = args.get("order", "ascending")
        if order not in ORDERS:
            raise PluginArgsError(
                "order", f"must be one of {', '.join(ORDERS)} (got {_quote(order)})"
            )
        self.descending = order == "descending"
        self._numbers: _Numbers | None = None

    def events_to_register(self) -> Sequence[ClusterEvent]:
        return (NODE_ADD, NODE_UPDATE)

    def annotations_read(self) -> tuple[str, ...]:
        return (REQUIRES_ANNOTATION,)

    # -- filtering --------------------------------------------------------------

    def _parse(self, pod: Pod) -> _Required:
        raw = pod.annotations.get(REQUIRES_ANNOTATION)
        asked: list[LabelRequirement] = []
        if raw is not None:
            for entry in raw.split(","):
                if not entry.strip():
                    continue  # "a,,b" and a trailing comma are harmless
                try:
                    asked.append(parse_requirement(entry))
                except ValueError as exc:
                    return _Required(
                        refusal=Status.unresolvable(
                            f"annotation {REQUIRES_ANNOTATION}: entry {_quote(entry.strip())}: {exc}; "
                            f"{_FORMAT_HINT}"
                        )
                    )
        try:
            merged = merge_requirements(
                [("requiredLabels", self.required), (f"annotation {REQUIRES_ANNOTATION}", asked)]
            )
        except ValueError as exc:
            return _Required(refusal=Status.unresolvable(str(exc)))
        return _Required(merged)

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        required = self._parse(pod)
        if required.refusal is not None:
            return None, required.refusal
        if not required.requirements:
            return None, SKIP
        state.write(_FILTER_KEY, required)
        return None, None

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        required: _Required | None = state.get(_FILTER_KEY)
        if required is None:  # enabled at Filter without PreFilter: parse here, once
            required = self._parse(pod)
            state.write(_FILTER_KEY, required)
        if required.refusal is not None:
            return BatchFilterResult(np.zeros(len(rows), dtype=np.int64), [required.refusal])
        verdict = np.full(len(rows), -1, dtype=np.int64)
        statuses: list[Status] = []
        # Each node is rejected for the first requirement it fails, as upstream reports one reason.
        for req in required.requirements:
            column = table.label_values(req.key)[rows]
            undecided = verdict < 0
            missing = _absent(column)
            _reject(verdict, statuses, undecided & missing, req.missing_reason)
            if req.value is not None:
                _reject(
                    verdict,
                    statuses,
                    undecided & ~missing & (column != req.value),
                    req.mismatch_reason,
                )
        return BatchFilterResult(verdict, statuses)

    # -- scoring ----------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> Status | None:
        if self.score_label is None:
            return SKIP  # the runtime then leaves this plugin out of Score
        return None

    def _read_numbers(self, table: NodeTable) -> _Numbers:
        """The score label parsed for every node, cached until the nodes change (not per pod)."""
        cached = self._numbers
        if (
            cached is not None
            and cached.table is table
            and cached.generation == table.node_generation
        ):
            return cached
        assert self.score_label is not None
        column = table.label_values(self.score_label)
        values = np.zeros(len(column), dtype=np.float64)
        numeric = np.zeros(len(column), dtype=bool)
        parsed: dict[str, float | None] = {}  # nodes share a few values: parse each once
        for row, text in enumerate(column.tolist()):
            if text is None:
                continue
            if text in parsed:
                number = parsed[text]
            else:
                number = parsed[text] = float(text) if _NUMBER.match(text) else None
            if number is not None:
                values[row] = number
                numeric[row] = True
        self._numbers = _Numbers(table, table.node_generation, values, ~_absent(column), numeric)
        return self._numbers

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        """Raw score: the label's value (truncated to an integer for display); 0 when unusable.

        Nodes without the label or with a value that is not a number score 0.
        Why is written once per attempt as one `input_recorded` event (key
        `unscoredNodes`) with counts and the first MAX_LISTED_NODES nodes,
        each with its reason: the runtime logs only numbers for Score, and an
        event per node would put thousands of rows in the log per attempt on
        a large cluster where the label is rolled out to only some nodes.
        The list is a deterministic function of the snapshot, so replay
        recomputes the rest exactly. `input_recorded` rather than
        `state.record`: the closed vocabulary has no decision kind for a
        plugin's notes, and this is what the plugin read from the nodes.
        """
        if self.score_label is None:
            return np.zeros(len(rows), dtype=np.int64)
        numbers = self._read_numbers(table)
        values = numbers.values[rows]
        numeric = numbers.numeric[rows]
        state.write(_SCORE_KEY, (values, numeric))
        if not numeric.all():
            self._record_unscored(state, table, rows, numbers.present[rows], numeric)
        bound = float(2**62)
        return np.where(numeric, np.trunc(np.clip(values, -bound, bound)), 0).astype(np.int64)

    def _record_unscored(
        self,
        state: CycleState,
        table: NodeTable,
        rows: Indexes,
        present: BoolArray,
        numeric: BoolArray,
    ) -> None:
        key = self.score_label
        column = table.label_values(key)  # type: ignore[arg-type]
        bad = np.flatnonzero(~numeric)
        listed = []
        for i in bad[:MAX_LISTED_NODES].tolist():
            row = int(rows[i])
            if present[i]:
                reason = f"label {key}={_quote(column[row])} is not a number; scored 0"
            else:
                reason = f"no label {key}; scored 0"
            listed.append({"node": table.names[row], "reason": reason})
        missing = int((~present).sum())
        not_numeric = int((present & ~numeric).sum())
        state.record_input(
            self.name,
            "unscoredNodes",
            {
                "scoreLabel": key,
                "message": (
                    f"{len(bad)} of {len(rows)} node(s) scored 0: {missing} without label {key}, "
                    f"{not_numeric} with a value that is not a number"
                ),
                "missing": missing,
                "notNumeric": not_numeric,
                "nodes": listed,
            },
        )

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: IntArray, rows: Indexes
    ) -> IntArray:
        """Min-max over the nodes with a number: lowest 0, highest 100 (`descending` flips).

        When every numeric value is equal they all get 100, so a node that
        carries the label still beats nodes that do not (as the well-known
        priority-label example does by lowering the minimum by one).
        """
        cached = state.get(_SCORE_KEY)
        if cached is None or self.score_label is None:
            return np.zeros(len(rows), dtype=np.int64)
        values, numeric = cached
        out = np.zeros(len(rows), dtype=np.int64)
        if not numeric.any():
            return out
        lo, hi = float(values[numeric].min()), float(values[numeric].max())
        if hi == lo:
            out[numeric] = MAX_NODE_SCORE
            return out
        share = (values[numeric] - lo) / (hi - lo)
        if self.descending:
            share = 1.0 - share
        # The epsilon keeps exact shares (0.5 -> 50) from falling a unit short to float error.
        out[numeric] = np.clip(np.floor(share * MAX_NODE_SCORE + 1e-9), 0, MAX_NODE_SCORE)
        return out


_NONE = np.array(None, dtype=object)


def _absent(column: npt.NDArray[np.object_]) -> BoolArray:
    """Rows where the label is absent (None in the table's label column)."""
    return np.asarray(np.equal(column, _NONE), dtype=bool)


def _reject(verdict: IntArray, statuses: list[Status], mask: BoolArray, reason: str) -> None:
    if not mask.any():
        return
    verdict[mask] = len(statuses)
    statuses.append(Status.unresolvable(reason))


def _required_labels(raw: object) -> tuple[LabelRequirement, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise PluginArgsError(
            "requiredLabels", f"must be a list of KEY or KEY=VALUE strings (got {_quote(raw)})"
        )
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, str):
            raise PluginArgsError(
                f"requiredLabels[{i}]", f"must be a KEY or KEY=VALUE string (got {_quote(item)})"
            )
        try:
            out.append(parse_requirement(item))
        except ValueError as exc:
            raise PluginArgsError(
                f"requiredLabels[{i}]", f"{exc}; write KEY or KEY=VALUE (got {_quote(item)})"
            ) from exc
    return tuple(out)


def merge_args(required: tuple[LabelRequirement, ...]) -> tuple[LabelRequirement, ...]:
    """requiredLabels itself must not ask one key for two values; the field path names the second."""
    for i, req in enumerate(required):
        for earlier in required[:i]:
            if (
                earlier.key == req.key
                and None not in (earlier.value, req.value)
                and earlier.value != req.value
            ):
                raise PluginArgsError(
                    f"requiredLabels[{i}]",
                    f"label {req.key} is already required to be {earlier.value} by "
                    f"requiredLabels[{required.index(earlier)}]; no node can match both, keep one",
                )
    return merge_requirements([("requiredLabels", required)])


def _score_label(raw: object) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise PluginArgsError("scoreLabel", f"must be a label key string (got {_quote(raw)})")
    problem = label_key_problem(raw)
    if problem is not None:
        raise PluginArgsError("scoreLabel", f"{problem} (e.g. priority.lixueduan.com)")
    return raw
