"""`eventsched explain NAMESPACE/NAME`: the pod's attempts, as the log recorded them."""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from eventsched.audit import AttemptExplanation, PodExplanation, explain_full, explain_pod
from eventsched.audit.believed import cluster_as_seen
from eventsched.audit.explainnumbers import explain_numbers
from eventsched.audit.viewat import ViewAt
from eventsched.cli.arguments import count
from eventsched.cli.commands import summary
from eventsched.cli.database import open_reader
from eventsched.cli.ganglines import render_gang
from eventsched.cli.gatelines import render_gates
from eventsched.cli.integritylines import CHECK_EVENTS, exit_code, warning_lines
from eventsched.cli.numberlines import render_cluster, render_numbers, render_queue
from eventsched.cli.preemptionlines import render_preempted_by, render_preemption
from eventsched.cli.progress import progress_bar
from eventsched.cli.shadowlines import render_shadow_verdict
from eventsched.events.slices import read_origin
from eventsched.plugins import full_registry
from eventsched.plugins.capacityscheduling.minmax import step_note


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "explain",
        help=summary("explain"),
    )
    p.add_argument(
        "pod", metavar="NAMESPACE/NAME", help="the pod; NAME alone means namespace default"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--full",
        action="store_true",
        help="every node's per-plugin scores, recomputed by replaying the log "
        "(the log keeps the top 10 per attempt)",
    )
    p.add_argument(
        "--max-rejections", type=int, default=20, help="nodes listed per plugin and reason"
    )
    p.add_argument(
        "--no-numbers",
        action="store_true",
        help="leave out the numbers behind each reason and the queue (they fold the log "
        "up to each attempt: seconds on a log of millions of events)",
    )
    p.add_argument(
        "--at",
        type=int,
        metavar="POSITION",
        help="the pod as of this log position (attempts started at or before it) and the "
        "cluster as the scheduler saw it there: each node's allocatable, requested, pods, "
        "taints and labels, with what changed since",
    )
    p.add_argument(
        "--check-events",
        type=count(0),
        default=CHECK_EVENTS,
        metavar="N",
        help="check the hash-chain batches holding the pod's events, newest first, while "
        f"they fit in N events (default {CHECK_EVENTS:,}, about 2 s; 0: all of them)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    namespace, _, name = args.pod.rpartition("/")
    reader = open_reader(args.db)
    try:
        origin = read_origin(reader)
        head = reader.last_position()
        if args.at is not None and not 0 <= args.at <= head:
            print(
                f"eventsched: error: --at {args.at}: the log's positions run from 0 to {head}; "
                "pick one of them (explain --json shows each attempt's startedPosition)",
                file=sys.stderr,
            )
            return 2
        at: int | None = args.at
        budget = args.check_events or None
        explanation = explain_pod(
            reader, namespace or "default", name, until=at, max_checked_events=budget
        )
        if args.full:
            explain_full(reader, full_registry(), explanation)
        views = ViewAt(reader)
        if not args.no_numbers:
            _add_numbers(views, explanation, head if at is None else at)
        seen = cluster_as_seen(views, at, head) if at is not None else None
    finally:
        reader.close()
    if args.json:
        out = explanation.to_dict()
        if seen is not None:
            out["clusterAt"] = asdict(seen)
        if origin is not None:
            out["slice"] = origin.to_state()
        print(json.dumps(out, indent=2, default=str))
    else:
        if origin is not None:
            print(f"From a {origin.describe()}")
        print(render(explanation, args.max_rejections))
        if seen is not None:
            print("\n" + "\n".join(render_cluster(seen)))
    return exit_code(explanation.integrity)


def _add_numbers(views: ViewAt, explanation: PodExplanation, head: int) -> None:
    with progress_bar(head, "folding the log", unit="position") as bar:

        def told(reached: int, wanted: int) -> None:
            bar.update(reached - bar.n)

        views.progress = told
        explain_numbers(explanation, views, full_registry(), head)
        views.progress = None


def render(explanation: PodExplanation, max_rejections: int = 20) -> str:
    lines = [f"Pod {explanation.namespace}/{explanation.name}"]
    unchecked = ": over --check-events (0 checks them all)"
    lines.extend("  " + line for line in warning_lines(explanation.integrity, unchecked))
    lines.append(f"  {len(explanation.attempts)} scheduling attempt(s); {_placement(explanation)}")
    if explanation.gates is not None:
        lines.extend("  " + line for line in render_gates(explanation.gates))
    if explanation.gang is not None:
        lines.extend("  " + line for line in render_gang(explanation.gang))
    for victim in explanation.preempted_by:
        lines.append("  " + render_preempted_by(victim))
    for note in explanation.notes:
        detail = {
            k: v for k, v in note.items() if k not in ("kind", "plugin", "position", "recordedAt")
        }
        lines.append(
            f"  Note from {note['plugin']} at log position {note['position']}: "
            + json.dumps(detail, default=str, sort_keys=True)
        )
    if explanation.numbers_unavailable:
        lines.append(f"  ({explanation.numbers_unavailable})")
    if explanation.queue is not None:
        lines.extend("  " + line for line in render_queue(explanation.queue))
    for number, attempt in enumerate(explanation.attempts, 1):
        lines.append("")
        lines.extend(_render_attempt(number, attempt, max_rejections))
    return "\n".join(lines)


def _placement(explanation: PodExplanation) -> str:
    """Where the pod is: bound by eventsched, or seen on a node another scheduler chose."""
    if explanation.final_node:
        where = f"bound to {explanation.final_node}"
    elif explanation.observed_node:
        where = f"not bound by eventsched; observed on {explanation.observed_node}"
    else:
        where = "not bound"
    return where + ("; removed from the cluster" if explanation.removed else "")


def _render_attempt(number: int, a: AttemptExplanation, max_rejections: int) -> list[str]:
    out = [
        f"Attempt {number} (attempt {a.attempt}, pod uid {a.pod_uid}) at {a.started_at}",
        f"  profile {a.profile}, configuration {a.config_digest}, log position {a.started_position}",
    ]
    if a.prefilter and a.prefilter.get("status", {}).get("code") not in (None, "Success"):
        status = a.prefilter["status"]
        out.append(
            f"  PreFilter: {status.get('plugin', '')} {status['code']}: {', '.join(status['reasons'])}"
        )
    nominated = a.nominated_node
    if nominated is not None:
        verdict = "passes" if nominated.get("passed") else "fails"
        out.append(f"  Nominated node {nominated.get('node')} tried first: {verdict}")
    call = a.extender
    if call is not None:
        out.append(f"  {_call_line(call)}")
    if (nominated is None or not nominated.get("passed")) and (
        call is None or call.get("verb") == "filter"
    ):
        out.append(
            f"  Filter: {a.num_nodes} nodes, evaluated {a.evaluated} from index {a.start_index} "
            f"(looking for {a.num_nodes_to_find}), {a.feasible} feasible"
        )
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    details: dict[tuple[str, str], list[tuple[str, list[str]]]] = defaultdict(list)
    for r in a.rejections:
        grouped[(r.plugin, ", ".join(r.reasons))].append(r.node)
        if r.detail:
            details[(r.plugin, ", ".join(r.reasons))].append((r.node, r.detail))
    for (plugin, reason), nodes in sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = ", ".join(nodes[:max_rejections])
        more = f" and {len(nodes) - max_rejections} more" if len(nodes) > max_rejections else ""
        out.append(f"    {plugin} rejected {len(nodes)} node(s) ({reason}): {shown}{more}")
        for name, lines in details[(plugin, reason)][:max_rejections]:
            out.extend(f"      {name}: {line}" for line in lines)
    if a.absent:
        out.append(
            f"    {a.absent['count']} node(s) left out by PreFilter: {', '.join(a.absent['reasons'])}"
        )
    if a.top:
        weights = ", ".join(f"{p['name']} x{p['weight']}" for p in a.score_plugins)
        out.append(
            f"  Score: {a.scored_nodes} feasible nodes scored ({weights}); top {len(a.top)}:"
        )
        if a.recomputed:
            out.append(f"  ({a.recomputed})")
        if a.score_skipped:
            out.append(f"  (skipped by PreScore this attempt: {', '.join(a.score_skipped)})")
        plugins = [p["name"] for p in a.score_plugins]
        header = ["NODE", "TOTAL", *plugins]
        table = [header]
        for node in a.top:
            cells = [node.node, str(node.total)]
            for plugin in plugins:
                s = node.plugins.get(plugin)
                cells.append(f"{s['weighted']} (raw {s['raw']} → {s['normalized']})" if s else "-")
            table.append(cells)
        widths = [max(len(line[i]) for line in table) for i in range(len(header))]
        for line in table:
            out.append("    " + "  ".join(c.ljust(widths[i]) for i, c in enumerate(line)).rstrip())
    out.extend("  " + line for line in render_numbers(a.numbers))
    if a.selected:
        sel = a.selection or {}
        why = sel.get("reason", "")
        if sel.get("tieCount", 1) > 1:
            by = "heap order" if sel.get("tieBreak") == "heap" else f"seed {sel.get('seed')}"
            why += f" ({by}; tied: {', '.join(sel.get('ties', []))})"
        score = f" with score {sel['score']}" if sel.get("score") is not None else ""
        out.append(f"  Selected {a.selected}{score}: {why}")
    for step in a.steps:
        if step["kind"] == "preempted" and a.preemption is not None:
            out.extend("  " + line for line in render_preemption(a.preemption))
            continue
        out.append("  " + _render_step(step))
        note = step_note(step)
        if note is not None:
            out.append("    " + note)
    if a.shadow is not None:
        out.append("  " + render_shadow_verdict(a.shadow))
    if call is not None and call.get("verb") in ("filter", "prioritize"):
        out.append(f"  {_answered(call, a)}")
    elif a.outcome == "in progress" and (call is None or call.get("verb") != "preempt"):
        out.append("  (no outcome recorded yet)")
    return out


def _call_line(call: Mapping[str, Any]) -> str:
    verb = call.get("verb")
    if verb == "bind":
        return f"Extender bind call from kube-scheduler: bind to {call.get('node')}"
    return (
        f"Extender {verb} call from kube-scheduler: {call.get('count')} candidate node(s) "
        f"({call.get('form')} form)"
    )


def _answered(call: Mapping[str, Any], a: AttemptExplanation) -> str:
    """What the call answered, from its decision: who passed, or who got 10."""
    if call.get("verb") == "filter":
        return f"Answered: {a.feasible} of {call.get('count')} candidate(s) passed"
    if not a.top:
        return "Answered: every candidate 0 (no score)"
    best = max(n.total for n in a.top)
    winners = [n.node for n in a.top if n.total == best]
    return (
        f"Answered: 10 for {', '.join(winners)} (total {best}); "
        f"the others floor(total x 10 / {best})"
    )


def _preempt_answered(step: Mapping[str, Any]) -> str:
    """A preempt call's answer: each candidate kept with its victims, each dropped with why."""
    if step.get("error"):
        return f"Answered: Error: {step['error']}"
    kept = [
        f"{k['node']} (evict {', '.join(k['victims'])}; {k['pdbViolations']} PDB violation(s))"
        for k in step.get("kept", ())
    ]
    dropped = [f"{d['node']} ({d['reason']})" for d in step.get("dropped", ())]
    text = f"Answered: kept {len(kept)} candidate(s)" + (f": {'; '.join(kept)}" if kept else "")
    return text + (f"; dropped {'; '.join(dropped)}" if dropped else "")


#: A recorded input can be large (NetworkTraffic's samples); --json shows it whole.
MAX_VALUE_CHARS = 200


def _assumed_volumes(volumes: Sequence[Mapping[str, Any]]) -> str:
    """VolumeBinding's Reserve: each volume assumed bound to the pod's claim, each claim
    assumed to be provisioned on the node."""
    parts = []
    for volume in volumes:
        claim = volume.get("claimRef") or {}
        claim_name = f"{claim.get('namespace')}/{claim.get('name')}"
        if "selectedNode" in volume:
            parts.append(f"claim {claim_name} provisioned on {volume['selectedNode']}")
        else:
            parts.append(f"volume {volume.get('name')} for claim {claim_name}")
    return ", assuming " + ", ".join(parts) if parts else ""


def _render_step(step: dict) -> str:
    kind = step["kind"]
    node = step.get("node")
    if kind == "reserved":
        return f"Reserved {node}" + _assumed_volumes(step.get("volumes") or ())
    if kind == "permitted":
        return f"Permit: {step.get('decision')}" + (
            f" (waiting: {step['waits']})" if step.get("waits") else ""
        )
    if kind == "bound":
        return f"Bound to {node}" + (" (reconciled on start)" if step.get("reconciled") else "")
    if kind == "bind_failed":
        return f"Binding to {node} failed ({step.get('code')}): {step.get('reason')}"
    if kind == "unreserved":
        return f"Unreserved {node}: {step.get('reason')}"
    if kind == "unschedulable":
        code = step.get("code")
        # The code only when it says more than the word before it.
        what = {"Unschedulable": "Unschedulable", "Error": "Error"}.get(
            str(code), f"Unschedulable ({code})"
        )
        return f"{what}: {step.get('message')} → {step.get('queue')} queue, backoff {step.get('backoffSeconds')}s"
    if kind == "post_filtered":
        status = step.get("status", {})
        reasons = ", ".join(status.get("reasons", []))
        nominated = step.get("nominatedNodeName")
        return (
            f"PostFilter: {status.get('plugin') + ' ' if status.get('plugin') else ''}"
            f"{status.get('code')}"
            + (f": {reasons}" if reasons else "")
            + (f" (nominated node {nominated})" if nominated else "")
        )
    if kind == "preempt_answered":
        return _preempt_answered(step)
    if kind == "input_recorded":
        value = json.dumps(step.get("value"), default=str, sort_keys=True)
        if len(value) > MAX_VALUE_CHARS:
            value = value[: MAX_VALUE_CHARS - 1] + "…"
        return f"Input from {step.get('plugin')}: {step.get('key')} = {value}"
    return f"{kind}: " + json.dumps({k: v for k, v in step.items() if k != "kind"}, default=str)
