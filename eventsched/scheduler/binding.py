"""The binding cycle, run on a binder thread: WaitOnPermit, PreBind, Bind.

It touches neither cache nor queue: it returns a `BindingDone` that the
scheduling loop appends to the log and applies, so state changes happen in
log order. PostBind and the `Scheduled` event run after `bound` is durable.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from eventsched.framework import IDENTITY_KEY, Code, CycleState, Framework, QueuedPodInfo, Status
from eventsched.framework.extenders.cycle import bind_with_extender, binder_extender
from eventsched.framework.runtime.bindingpoints import running_error
from eventsched.scheduler.batch import AttemptSink, Batch
from eventsched.scheduler.ports import BindOutcome

log = structlog.get_logger(__name__)


class BindError(Exception):
    """Carries the API's answer through a Bind plugin's Error status."""

    def __init__(self, outcome: BindOutcome) -> None:
        self.outcome = outcome
        super().__init__(outcome.reason)


def bind_status(outcome: BindOutcome) -> Status:
    if outcome.ok:
        return Status()
    return Status(Code.ERROR, (outcome.reason,), error=BindError(outcome))


@dataclass(slots=True)
class BindingDone:
    fw: Framework
    state: CycleState
    info: QueuedPodInfo
    node: str
    ok: bool
    #: Retrying cannot help (the pod is gone, or was bound elsewhere).
    final: bool
    batch: Batch
    #: The pod's FailedScheduling message: the failed status's, as kube-scheduler's
    #: failure handler gives it (`failure_message`).
    message: str = ""
    #: The API's status code when a Binding was answered; None when Bind never reached it.
    code: int | None = None


def run_binding_cycle(
    fw: Framework,
    state: CycleState,
    info: QueuedPodInfo,
    node: str,
    waited: bool,
    instance: str,
) -> BindingDone:
    pod = info.pod
    batch = Batch(instance)
    sink = AttemptSink(batch, pod, fw.name, state.attempt)
    # From here on the attempt's plugins record into this cycle's own batch: the
    # scheduling cycle's batch is appended already, and the loop has moved on.
    state.sink = sink
    binder = None
    prebound = False
    bind_reached = False
    try:
        status = Status()
        if waited:
            status = fw.wait_on_permit(pod)
            decision = "approve" if status.is_success else _refusal(status)
            sink.record(
                "permitted",
                {"decision": decision, "status": status.to_record(), "afterWait": True},
                node=node,
                plugin=status.plugin or None,
            )
        if status.is_success:
            status = fw.run_pre_bind(state, pod, node)
            prebound = status.is_success and bool(fw.plugins_at("preBind"))
        binder = binder_extender(fw, pod) if status.is_success else None
        bind_reached = status.is_success
        if binder is not None:
            status = bind_with_extender(binder, pod, node)
        elif status.is_success:
            status = fw.run_bind(state, pod, node)
    except Exception as exc:  # never lose a binding cycle's outcome
        log.exception("binding cycle failed", pod=pod.key, node=node)
        status = Status.as_error(exc)
    if status.is_success:
        bound: dict[str, object] = {"code": 201}
        identity = state.get(IDENTITY_KEY, pod.key)
        if identity != pod.key:  # else namespace/name, as readers of `bound` take it
            bound["identity"] = identity
        if binder is not None:
            bound["extender"] = binder.name  # the extender bound it, not DefaultBinder
        sink.record("bound", bound, node=node)
        return BindingDone(fw, state, info, node, True, False, batch)
    if prebound:
        # Only before a failed Bind: a `bound` says PreBind succeeded already, and the
        # row (about 300 bytes with its index entries) was a sixteenth of the log.
        sink.record("prebound", {}, node=node)
    outcome = status.error.outcome if isinstance(status.error, BindError) else None
    final = outcome.final if outcome else False
    sink.record(
        "bind_failed",
        {
            "code": outcome.code if outcome else None,
            "reason": status.message,
            "final": final,
            "status": status.to_record(),
        },
        node=node,
        plugin=status.plugin or None,
    )
    fw.run_unreserve(state, pod, node)
    sink.record("unreserved", {"reason": f"binding cycle failed: {status.message}"}, node=node)
    return BindingDone(
        fw,
        state,
        info,
        node,
        False,
        final,
        batch,
        failure_message(status, bind_plugin=bind_reached and binder is None),
        outcome.code if outcome else None,
    )


def failure_message(status: Status, *, bind_plugin: bool) -> str:
    """What kube-scheduler v1.28 says of a failed binding cycle: the status's message, a
    Bind plugin's wrapped as RunBindPlugins wraps it (`running Bind plugin "DefaultBinder":
    <the API's message>`). PreBind's status is wrapped already, and a binding extender's
    error is given as it is (`extendersBinding`)."""
    if bind_plugin and status.plugin:
        return running_error("Bind", status.plugin, status).message
    return status.message


def _refusal(status: Status) -> str:
    return "timeout" if "rejected due to timeout" in status.message else "deny"
