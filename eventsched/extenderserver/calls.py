"""Answering kube-scheduler's extender calls on the scheduler's loop thread.

An HTTP handler thread hands a `Call` to the loop (as a task in its inbox) and waits for
its answer. On the loop, the call's pod (and in the `Nodes` form each node) is observed,
the decision is made into an attempt of the usual vocabulary, and the answer goes out
only once that attempt is durable. A bind call's decision (`selected`, `reserved`) is
durable before the Binding is posted on a binder thread; its outcome (`bound` or
`bind_failed`) is durable before the answer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from eventsched.extenderserver.protocol import (
    BindingArgs,
    ExtenderArgs,
    PreemptionArgs,
    error_result,
    filter_result,
    host_priority_list,
    preemption_result,
)
from eventsched.framework import IDENTITY_KEY, Framework
from eventsched.framework.servedpreempt import candidates_record as victims_record
from eventsched.framework.servedpreempt import serve_preempt
from eventsched.framework.servedverbs import (
    ServeError,
    candidates_record,
    serve_filter,
    serve_prioritize,
)
from eventsched.model import Node, Pod
from eventsched.model.accounting import LEGACY_ACCOUNTING, Accounting
from eventsched.model.changes import ClusterChange
from eventsched.model.errors import ManifestError
from eventsched.scheduler import LoopTask
from eventsched.scheduler.attempts import Attempts, Started
from eventsched.scheduler.batch import AttemptSink, Batch
from eventsched.scheduler.bindingcycles import BindingCycles
from eventsched.scheduler.eventhandlers import EventHandlers
from eventsched.scheduler.journal import Journal
from eventsched.scheduler.ports import Cluster
from eventsched.view import ClusterView

log = structlog.get_logger(__name__)

#: How long a handler waits for the loop's answer before it answers Error itself.
ANSWER_TIMEOUT = 30.0
LOG_DOWN = "eventsched extender: the event log cannot be written; nothing was decided"


@dataclass(slots=True)
class Call:
    """One HTTP call, handed from a handler thread to the loop and answered there."""

    verb: str
    args: ExtenderArgs | BindingArgs | PreemptionArgs
    answer: Any = None
    #: False when the call could not be decided (the answer then carries Error).
    ok: bool = True
    done: threading.Event = field(default_factory=threading.Event)

    def reply(self, answer: Any, ok: bool = True) -> None:
        self.answer, self.ok = answer, ok
        self.done.set()


@dataclass(slots=True)
class _Serve:
    """A call, run on the loop."""

    calls: ServedCalls
    call: Call

    def run(self) -> None:
        self.calls.serve(self.call)


@dataclass(slots=True)
class _Bound:
    """A bind call's Binding answered (on a binder thread): back to the loop to log."""

    calls: ServedCalls
    call: Call
    batch: Batch
    status_ok: bool
    message: str

    def run(self) -> None:
        self.calls.bound(self)


class ServedCalls:
    """Decides kube-scheduler's calls with the served profile's framework, on the loop."""

    def __init__(
        self,
        fw: Framework,
        view: ClusterView,
        handlers: EventHandlers,
        attempts: Attempts,
        journal: Journal,
        binding: BindingCycles,
        cluster: Cluster,
        post: Callable[[LoopTask], None],
        ready: Callable[[], bool],
        accounting: Accounting = LEGACY_ACCOUNTING,
    ) -> None:
        #: The served profile's framework.
        self.fw = fw
        self.view = view
        self.handlers = handlers
        self.attempts = attempts
        self.journal = journal
        self.binding = binding
        self.cluster = cluster
        #: Hands a task to the loop thread (Scheduler.post).
        self.post = post
        self.ready = ready
        #: How the pods the calls carry count (the served profile's `Features.accounting`).
        self.accounting = accounting
        #: The identity (StickyNode) the pod's last filter call gave it, for its `bound`.
        self.identities: dict[str, str] = {}
        #: The resourceVersion of each node object a `Nodes` call carried, once observed:
        #: kube-scheduler sends every node on every call, most of them unchanged.
        self.node_versions: dict[str, str] = {}

    def submit(self, call: Call) -> Call:
        """From a handler thread: queue the call for the loop and wait for its answer."""
        self.post(_Serve(self, call))
        if not call.done.wait(ANSWER_TIMEOUT):
            call.reply(error_result(call.verb, "eventsched extender: no answer in time"), False)
        return call

    def _seen(self, raw: Mapping[str, Any]) -> bool:
        """A node object already observed at this resourceVersion (and still in the view)."""
        name, version = raw["metadata"]["name"], _version(raw)
        return (
            bool(version)
            and self.node_versions.get(name) == version
            and (self.view.table.row_of(name) is not None)
        )

    # -- deciding -----------------------------------------------------------------

    def serve(self, call: Call) -> None:
        """On the loop: decide the call and answer it once its decision is durable."""
        if not self.ready():
            call.reply(error_result(call.verb, "eventsched extender is not ready yet"), False)
            return
        try:
            if isinstance(call.args, BindingArgs):
                self._bind(call, call.args)
            elif isinstance(call.args, PreemptionArgs):
                self._preempt(call, call.args)
            else:
                self._decide(call, call.args)
        except Exception as exc:  # the loop must outlive any one call
            log.exception("extender call failed", verb=call.verb)
            call.reply(error_result(call.verb, f"eventsched extender: {exc}"), False)

    def _decide(self, call: Call, args: ExtenderArgs) -> None:
        try:
            pod = Pod.from_manifest(args.pod, "ExtenderArgs.Pod", self.accounting)
            nodes = [
                (Node.from_manifest(n, "ExtenderArgs.Nodes.items"), _version(n))
                for n in args.nodes or ()
                if not self._seen(n)
            ]
        except (ManifestError, ValueError, TypeError) as exc:
            call.reply(error_result(call.verb, f"eventsched extender: {exc}"), False)
            return
        for node, version in nodes:
            self.handlers.node_changed(ClusterChange("MODIFIED", node))
            if version:
                self.node_versions[node.name] = version
        pod = self.handlers.observe_pending(pod)
        names = args.names()
        fw = self.fw
        state = self._attempt(
            pod, call, {"form": args.form, **candidates_record(self.view.table, names)}
        ).state
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

    def _preempt(self, call: Call, args: PreemptionArgs) -> None:
        """kube-scheduler's candidates narrowed by the profile (framework/servedpreempt.py)."""
        try:
            pod = Pod.from_manifest(args.pod, "ExtenderPreemptionArgs.Pod", self.accounting)
        except (ManifestError, ValueError, TypeError) as exc:
            call.reply(error_result(call.verb, f"eventsched extender: {exc}"), False)
            return
        pod = self.handlers.observe_pending(pod)
        record = {"form": args.form, **victims_record(args.candidates)}
        state = self._attempt(pod, call, record).state
        answer = serve_preempt(self.fw, state, pod, self.view.table, args.candidates)
        if answer.error:
            self._answer_when_durable(call, error_result(call.verb, answer.error), ok=False)
        else:
            self._answer_when_durable(call, preemption_result(answer))

    def _attempt(self, pod: Pod, call: Call, extender: Mapping[str, Any]) -> Started:
        return self.attempts.start(self.fw, pod, extender={"verb": call.verb, **extender})

    def _answer_when_durable(self, call: Call, body: Any, ok: bool = True) -> None:
        """The call's events are appended first; an answer never outruns its decision."""
        if not self.journal.flush():
            call.reply(error_result(call.verb, LOG_DOWN), False)
            return
        call.reply(body, ok)

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
        started = self._attempt(pod, call, {"node": args.node})
        sink = started.sink
        identity = self.identities.pop(pod.uid, pod.key)
        sink.record(
            "selected",
            {"score": None, "seed": started.state.seed, "reason": "chosen by kube-scheduler"},
            node=args.node,
        )
        sink.record("reserved", {"plugins": [], "identity": identity}, node=args.node)
        if not self.journal.flush():
            sink.record("unreserved", {"reason": "the event log cannot be written"}, node=args.node)
            call.reply(error_result("bind", LOG_DOWN), False)
            return
        batch = Batch(self.journal.instance)
        bound_sink = AttemptSink(batch, pod, sink.scheduler, sink.attempt)
        self.binding.submit(self._post_binding, call, bound_sink, batch, pod, args.node, identity)

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
        self.post(_Bound(self, call, batch, outcome.ok, outcome.reason))

    def bound(self, done: _Bound) -> None:
        """On the loop: the Binding's outcome joins the log, then the call is answered."""
        self.binding.finished()
        self.journal.pending.extend(done.batch)
        body = {"Error": "" if done.status_ok else done.message}
        self._answer_when_durable(done.call, body)


def _version(raw: Mapping[str, Any]) -> str:
    return str(raw["metadata"].get("resourceVersion") or "")
