"""The binding cycle's extension points: Reserve, Unreserve, Permit (and WaitOnPermit),
PreBind, Bind and PostBind, each a loop over its plugins. The Framework holds one
`BindingPoints` and delegates to it (timing each point as it times its own), so that
framework.py holds the scheduling cycle's points."""

from __future__ import annotations

import time

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.handle import Handle
from eventsched.framework.runtime.guarded import PluginFailed
from eventsched.framework.runtime.instrumented import PluginCaller
from eventsched.framework.runtime.observers import PermitWaitObserver
from eventsched.framework.runtime.plugins import PluginSet
from eventsched.framework.status import SUCCESS, Code, Status
from eventsched.framework.waiting import WaitingPod
from eventsched.model import Pod

#: kube-scheduler's `maxTimeout` for Permit waits.
MAX_PERMIT_TIMEOUT = 15 * 60.0


class BindingPoints:
    """One profile's binding-cycle plugins run in order, each call through the profile's
    `PluginCaller`; Permit's waits are parked in the handle's waiting map."""

    __slots__ = ("_call", "_run", "handle", "observe_permit_wait", "plugins")

    def __init__(
        self,
        plugins: PluginSet,
        handle: Handle,
        calls: PluginCaller,
        observe_permit_wait: PermitWaitObserver | None = None,
    ) -> None:
        self.plugins = plugins
        self.handle = handle
        #: The caller's methods, looked up once: every plugin call goes through them.
        self._call = calls.call
        self._run = calls.run
        #: (status code label, seconds) of each WaitOnPermit that waited; None costs nothing.
        self.observe_permit_wait = observe_permit_wait

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for plugin in self.plugins.reserve:
            status = self._run(state, "Reserve", plugin.name, plugin.reserve, state, pod, node_name)
            if not status.is_success:
                if status.is_rejected:
                    return status
                return running_error("Reserve", plugin.name, status)
        return SUCCESS

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Every Reserve plugin's Unreserve, in reverse order; must not fail."""
        for plugin in reversed(self.plugins.reserve):
            self._run(state, "Unreserve", plugin.name, plugin.unreserve, state, pod, node_name)

    def run_permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> tuple[Status, dict[str, float]]:
        """Permit in order. Wait from any plugin parks the pod in the waiting map."""
        waits: dict[str, float] = {}
        for plugin in self.plugins.permit:
            name = plugin.name
            try:
                status, timeout = self._call(
                    state, "Permit", name, plugin.permit, state, pod, node_name
                )
            except PluginFailed as failed:
                return failed.status, waits
            status = (status or SUCCESS).with_plugin(name)
            if status.is_success:
                continue
            if status.is_rejected:
                return status, waits
            if status.is_wait:
                waits[name] = min(max(float(timeout), 0.0), MAX_PERMIT_TIMEOUT)
                continue
            return running_error("Permit", name, status), waits
        if waits:
            self.handle.waiting_pods.add(
                WaitingPod(pod, node_name, waits, clock=self.handle.monotonic)
            )
            return Status(
                Code.WAIT, ("one or more plugins asked to wait and no plugin rejected pod",)
            ), waits
        return SUCCESS, waits

    def wait_on_permit(self, pod: Pod) -> Status:
        waiting = self.handle.waiting_pods.get(pod.uid)
        if waiting is None:
            return SUCCESS
        started = time.perf_counter()
        try:
            status = waiting.wait()
        finally:
            self.handle.waiting_pods.remove(pod.uid)
        if self.observe_permit_wait is not None:
            self.observe_permit_wait(status.code.label, time.perf_counter() - started)
        if not status.is_success and not status.is_rejected:
            # Upstream wraps what is not a rejection (only v1.37's preemption of a waiting
            # pod ends a wait so): "waiting on permit for pod: preempted".
            return Status.as_error(f"waiting on permit for pod: {status.message}", status.plugin)
        return status

    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for plugin in self.plugins.pre_bind:
            status = self._run(
                state, "PreBind", plugin.name, plugin.pre_bind, state, pod, node_name
            )
            if status.is_skip:
                continue
            if status.is_rejected:
                return status
            if not status.is_success:
                return running_error("PreBind", plugin.name, status)
        return SUCCESS

    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The first Bind plugin that does not Skip binds the pod."""
        for plugin in self.plugins.bind:
            status = self._run(state, "Bind", plugin.name, plugin.bind, state, pod, node_name)
            if status.is_skip:
                continue
            return status
        return Status(Code.SKIP, ("all bind plugins skipped",))

    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for plugin in self.plugins.post_bind:
            self._run(state, "PostBind", plugin.name, plugin.post_bind, state, pod, node_name)


def running_error(point: str, plugin: str, status: Status) -> Status:
    """A plugin's non-rejecting failure as the Error kube-scheduler reports for it:
    `fmt.Errorf("running %s plugin %q: %w", ...)`."""
    return Status(
        Code.ERROR, (f'running {point} plugin "{plugin}": {status.message}',), plugin, status.error
    )
