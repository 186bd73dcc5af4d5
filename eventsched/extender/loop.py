"""The extender's scheduler: `run`'s loop, log and view, answering kube-scheduler's calls.

The loop thread owns the view and the journal, as in `eventsched run`; an HTTP handler
thread puts a `Call` in the inbox and waits for its answer. The loop logs what the call
carries (the pod, and in the `Nodes` form each node) as observations, decides into an
attempt of the usual vocabulary, and answers only once that attempt is durable. A bind
call's decision (`selected`, `reserved`) is durable before the Binding is posted on a
binder thread; its outcome (`bound` or `bind_failed`) is durable before the answer.

kube-scheduler schedules: pending pods are observed, never queued here.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import structlog

from eventsched.extender.protocol import (
    BindingArgs,
    ExtenderArgs,
    error_result,
    filter_result,
    host_priority_list,
)
from eventsched.framework import IDENTITY_KEY, CycleState, Framework
from eventsched.framework.served import (
    ServeError,
    candidates_record,
    serve_filter,
    serve_prioritize,
)
from eventsched.model import Node, Pod
from eventsched.model.changes import ClusterChange
from eventsched.model.errors import ManifestError
from eventsched.scheduler import Scheduler
from eventsched.scheduler.batch import AttemptSink, Batch

log = structlog.get_logger(__name__)

#: How long a handler waits for the loop's answer before it answers Error itself.
ANSWER_TIMEOUT = 30.0
LOG_DOWN = "eventsched extender: the event log cannot be written; nothing was decided"


@dataclass(slots=True)
class Call:
    """One HTTP call, handed from a handler thread to the loop and answered there."""

    verb: str
    args: ExtenderArgs | BindingArgs
    answer: Any = None
    #: False when the call could not be decided (the answer then carries Error).
    ok: bool = True
    done: threading.Event = field(default_factory=threading.Event)

    def reply(self, answer: Any, ok: bool = True) -> None:
        self.answer, self.ok = answer, ok
        self.done.set()


@dataclass(slots=True)
class Bound:
    """A bind call's Binding answered (on a binder thread): back to the loop to log."""

    call: Call
    sink: AttemptSink
    batch: Batch
    node: str
    status_ok: bool
    message: str
    code: int | None


class ExtenderScheduler(Scheduler):
    """A Scheduler whose work comes from kube-scheduler's calls, for its first profile."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.served: Framework = next(iter(self.frameworks.values()))
        #: The identity (StickyNode) the pod's last filter call gave it, for its `bound`.
        self.identities: dict[str, str] = {}
        self.calls = 0
        #: The resourceVersion of each node object a `Nodes` call carried, once observed:
        #: kube-scheduler sends every node on every call, most of them unchanged.
        self.node_versions: dict[str, str] = {}

    def _seen(self, raw: Mapping[str, Any]) -> bool:
        """A node object already observed at this resourceVersion (and still in the view)."""
        name, version = raw["metadata"]["name"], _version(raw)
        return (
            bool(version)
            and self.node_versions.get(name) == version
            and (self.view.table.row_of(name) is not None)
        )

    # -- the loop's messages -----------------------------------------------------

    def _handle(self, item: Any) -> None:
        if isinstance(item, Call):
            self._serve(item)
        elif isinstance(item, Bound):
            self._bound(item)
        else:
            super()._handle(item)

    def _pod_changed(self, change: ClusterChange) -> None:
        pod = change.obj
        if change.type != "DELETED" and isinstance(pod, Pod) and not pod.node_name:
            self._observe_pending(pod)  # kube-scheduler schedules it: observed, not queued
            return
        super()._pod_changed(change)

    def _observe_pending(self, pod: Pod) -> Pod:
        pod = pod.keeping_annotations(self.annotation_keys)
        self._observe(
            "pod_observed",
            f"pod/{pod.uid}",
            pod.to_record(),
            known=pod.uid in self.view.pods,
            pod=pod,
        )
        return self.view.pods.get(pod.uid, pod)

    def submit(self, call: Call) -> Call:
        """From a handler thread: queue the call for the loop and wait for its answer."""
        self._post(call)
        if not call.done.wait(ANSWER_TIMEOUT):
            call.reply(error_result(call.verb, "eventsched extender: no answer in time"), False)
        return call

    def _post(self, item: Call | Bound) -> None:
        """Into the loop's inbox, beside the cluster's changes and binding answers."""
        self.inbox.put(cast(Any, item))

    # -- deciding -----------------------------------------------------------------

    def _serve(self, call: Call) -> None:
        if not self.ready:
            call.reply(error_result(call.verb, "eventsched extender is not ready yet"), False)
            return
        try:
            if isinstance(call.args, BindingArgs):
                self._bind(call, call.args)
            else:
                self._decide(call, call.args)
        except Exception as exc:  # the loop must outlive any one call
            log.exception("extender call failed", verb=call.verb)
            call.reply(error_result(call.verb, f"eventsched extender: {exc}"), False)

    def _decide(self, call: Call, args: ExtenderArgs) -> None:
        try:
            pod = Pod.from_manifest(args.pod, "ExtenderArgs.Pod")
            nodes = [
                (Node.from_manifest(n, "ExtenderArgs.Nodes.items"), _version(n))
                for n in args.nodes or ()
                if not self._seen(n)
            ]
        except (ManifestError, ValueError, TypeError) as exc:
            call.reply(error_result(call.verb, f"eventsched extender: {exc}"), False)
            return
        for node, version in nodes:
            self._node_changed(ClusterChange("MODIFIED", node))
            if version:
                self.node_versions[node.name] = version
        pod = self._observe_pending(pod)
        names = args.names()
        fw = self.served
        _, state = self._attempt(
            pod, call, {"form": args.form, **candidates_record(self.view.table, names)}
        )
        if call.verb == "filter":
            answer = serve_filter(fw, state, pod, self.view.table, names)
            identity = state.get(IDENTITY_KEY)
            if identity is not None:
                self.identities[pod.uid] = identity
            body: Any = filter_result(args, answer)
        else:
            try:
                body = host_priority_list(serve_prioritize(fw, state, pod, self.view.table, names))
            except ServeError as exc:
                body = error_result(call.verb, str(exc))
        self._answer_when_durable(call, body)

    def _attempt(
        self, pod: Pod, call: Call, extender: Mapping[str, Any]
    ) -> tuple[AttemptSink, CycleState]:
        fw = self.served
        attempt = secrets.token_hex(8)
        seed = self.rng.getrandbits(63)
        sink = AttemptSink(self.journal.pending, pod, fw.name, attempt)
        self.calls += 1
        sink.record(
            "attempt_started",
            {
                "attempts": 1,
                "startIndex": 0,
                "seed": seed,
                "configDigest": self.digests[fw.name],
                "nodes": len(self.view.table),
                "extender": {"verb": call.verb, **extender},
            },
        )
        return sink, CycleState(attempt, seed, sink)

    def _answer_when_durable(self, call: Call, body: Any) -> None:
        """The call's events are appended first; an answer never outruns its decision."""
        if not self._flush():
            call.reply(error_result(call.verb, LOG_DOWN), False)
            return
        call.reply(body)

    # -- binding ------------------------------------------------------------------

    def _bind(self, call: Call, args: BindingArgs) -> None:
        key = f"{args.pod_namespace}/{args.pod_name}"
        pod = self.view.pods.get(args.pod_uid)
        if pod is None:
            # kube-scheduler may bind through the extender without filtering through it (a
            # bind-only extender, or a pod of another of its profiles): the Binding needs
            # only the pod's name and uid, and the decision names them.
            pod = Pod(uid=args.pod_uid, namespace=args.pod_namespace, name=args.pod_name)
        elif pod.key != key:
            message = f"eventsched extender: uid {args.pod_uid} is {pod.key}, not {key}"
            call.reply(error_result("bind", message), False)
            return
        if self.view.table.row_of(args.node) is None:
            call.reply(
                error_result("bind", f"eventsched extender: node {args.node} is not known"), False
            )
            return
        sink, state = self._attempt(pod, call, {"node": args.node})
        identity = self.identities.pop(pod.uid, pod.key)
        sink.record(
            "selected",
            {"score": None, "seed": state.seed, "reason": "chosen by kube-scheduler"},
            node=args.node,
        )
        sink.record("reserved", {"plugins": [], "identity": identity}, node=args.node)
        if not self._flush():
            sink.record("unreserved", {"reason": "the event log cannot be written"}, node=args.node)
            call.reply(error_result("bind", LOG_DOWN), False)
            return
        batch = Batch(self.options.instance)
        bound_sink = AttemptSink(batch, pod, sink.scheduler, sink.attempt)
        self.bindings += 1
        self.binder.submit(self._post_binding, call, bound_sink, batch, pod, args.node, identity)

    def _post_binding(
        self, call: Call, sink: AttemptSink, batch: Batch, pod: Pod, node: str, identity: str
    ) -> None:
        """On a binder thread: the Binding through the cluster adapter."""
        outcome = self.cluster.bind(pod, node)
        if outcome.ok:
            sink.record("bound", {"identity": identity, "code": outcome.code}, node=node)
        else:
            sink.record(
                "bind_failed",
                {"code": outcome.code, "reason": outcome.reason, "final": outcome.final},
                node=node,
            )
            sink.record("unreserved", {"reason": f"binding failed: {outcome.reason}"}, node=node)
        self._post(Bound(call, sink, batch, node, outcome.ok, outcome.reason, outcome.code))

    def _bound(self, done: Bound) -> None:
        self.bindings -= 1
        self.journal.pending.extend(done.batch)
        body = {"Error": "" if done.status_ok else done.message}
        self._answer_when_durable(done.call, body)


def _version(raw: Mapping[str, Any]) -> str:
    return str(raw["metadata"].get("resourceVersion") or "")
