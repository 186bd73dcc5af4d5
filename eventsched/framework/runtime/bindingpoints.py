"""The Framework's Reserve, Unreserve, Permit (and WaitOnPermit), PreBind, Bind and
PostBind points: the binding cycle's side of the runtime, apart so that framework.py
holds the scheduling cycle's."""

from __future__ import annotations

import time
from collections.abc import Callable

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.handle import Handle
from eventsched.framework.runtime.guarded import PluginFailed
from eventsched.framework.runtime.instrumented import InstrumentedCalls
from eventsched.framework.runtime.plugins import PluginSet
from eventsched.framework.runtime.timing import ExtensionPointObserver, timed
from eventsched.framework.status import SUCCESS, Code, Status
from eventsched.framework.waiting import WaitingPod
from eventsched.model import Pod

#: kube-scheduler's `maxTimeout` for Permit waits.
MAX_PERMIT_TIMEOUT = 15 * 60.0


class BindingPoints(InstrumentedCalls):
    plugins: PluginSet
    handle: Handle
    observe: ExtensionPointObserver | None
    #: (status code label, seconds) of each WaitOnPermit that waited
    #: (`scheduler_permit_wait_duration_seconds`); None costs nothing.
    observe_permit_wait: Callable[[str, float], None] | None = None

    @timed("Reserve")
    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for plugin in self.plugins.reserve:
            status = self._run(state, "Reserve", plugin.name, plugin.reserve, state, pod, node_name)
            if not status.is_success:
                if status.is_rejected:
                    return status
                return running_error("Reserve", plugin.name, status)
        return SUCCESS

    @timed("Unreserve")
    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Every Reserve plugin's Unreserve, in reverse order; must not fail."""
        for plugin in reversed(self.plugins.reserve):
            self._run(state, "Unreserve", plugin.name, plugin.unreserve, state, pod, node_name)

    @timed("Permit")
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
        return status

    @timed("PreBind")
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

    @timed("Bind")
    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """The first Bind plugin that does not Skip binds the pod."""
        for plugin in self.plugins.bind:
            status = self._run(state, "Bind", plugin.name, plugin.bind, state, pod, node_name)
            if status.is_skip:
                continue
            return status
        return Status(Code.SKIP, ("all bind plugins skipped",))

    @timed("PostBind")
    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for plugin in self.plugins.post_bind:
            self._run(state, "PostBind", plugin.name, plugin.post_bind, state, pod, node_name)


def running_error(point: str, plugin: str, status: Status) -> Status:
    """A plugin's non-rejecting failure as the Error kube-scheduler reports for it:
    `fmt.Errorf("running %s plugin %q: %w", ...)`."""
    return Status(
        Code.ERROR, (f'running {point} plugin "{plugin}": {status.message}',), plugin, status.error
    )
