"""PreFilter over a profile's plugins (kube-scheduler's `RunPreFilterPlugins`), as each version runs it.

Both versions skip a plugin that answers Skip (its Filter is skipped too), intersect the
node sets the plugins narrow the pod to, and turn a plugin's non-rejecting failure into
"running PreFilter plugin ...". They differ in what stops the loop:

- v1.28 (eventsched's, as it always decided): the first rejection ends it, an empty
  intersection is UnschedulableAndUnresolvable named for the plugin that emptied it.
- v1.34 and later (kubernetes#119770): an Unschedulable plugin no longer stops the others
  (preemption may still help, and the later plugins' state is needed for it): the last
  Unschedulable status is the result. UnschedulableAndUnresolvable still ends the loop
  at once. An empty intersection is UnschedulableAndUnresolvable naming no plugin, the
  narrowing plugins sorted (`sets.List`).

Both return (the merged result, the status, the plugins that narrowed the nodes); the
result is None when the status is not Success (the caller does not read it then).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.interface import PreFilterPlugin
from eventsched.framework.runtime.bindingpoints import running_error
from eventsched.framework.runtime.guarded import PluginFailed
from eventsched.framework.status import SUCCESS, Code, Status
from eventsched.framework.types import PreFilterResult
from eventsched.model import NodeTable, Pod

PreFilterOutcome = tuple[PreFilterResult | None, Status, set[str]]
#: `PluginCaller.call` and `PluginCaller.evaluated`, as the runtime passes them.
Call = Callable[..., Any]
Evaluated = Callable[[str, str, int], None]


def run_pre_filter_plugins(
    plugins: Sequence[PreFilterPlugin],
    call: Call,
    evaluated: Evaluated,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    unschedulable_continues: bool,
) -> PreFilterOutcome:
    """`RunPreFilterPlugins`; `unschedulable_continues`: as v1.34 and later run it."""
    merged: PreFilterResult | None = None
    narrowing: list[str] = []
    last_unschedulable: Status | None = None
    for plugin in plugins:
        name = plugin.name
        try:
            result, status = call(state, "PreFilter", name, plugin.pre_filter, state, pod, table)
        except PluginFailed as failed:
            return None, failed.status, set()
        status = (status or SUCCESS).with_plugin(name)
        if status.is_skip:
            state.skip_filter.add(name)
            continue
        evaluated(name, "PreFilter", 1)
        if not status.is_success:
            if unschedulable_continues:
                if status.code == Code.UNSCHEDULABLE:
                    last_unschedulable = status
                    continue
                if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, status, set()
            elif status.is_rejected:
                return None, status, {name}
            return None, running_error("PreFilter", name, status), set()
        if result is not None and result.node_names is not None:
            narrowing.append(name)
            merged = result.merge(merged) if merged is not None else result
            if not merged.node_names:
                return (
                    None,
                    _empty_intersection(narrowing, name, unschedulable_continues),
                    set(narrowing),
                )
    if last_unschedulable is not None:
        return None, last_unschedulable, set(narrowing)
    return merged, SUCCESS, set(narrowing)


def _empty_intersection(narrowing: list[str], last: str, unnamed: bool) -> Status:
    """The status when the narrowing plugins leave no node in common: v1.28 names the
    plugin that emptied the set, later versions name none."""
    names = sorted(narrowing)
    message = (
        f"node(s) didn't satisfy plugin {names[0]}"
        if len(names) == 1
        else f"node(s) didn't satisfy plugin(s) {go_list(names)} simultaneously"
    )
    return Status.unresolvable(message, plugin="" if unnamed else last)


def go_list(items: Sequence[str]) -> str:
    """How Go's %v prints a sorted []string: [a b c]."""
    return "[" + " ".join(sorted(items)) + "]"
