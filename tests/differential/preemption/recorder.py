"""The recorder's work on one preemption scenario (see record.py for the whole run).

Per scenario: the namespaces, PriorityClasses, budgets (their status written through
/status), nodes and assigned pods (each pod's `status.startTime` written through /status
after creating it) are created and kube-scheduler's cache waited for as `Recorder.setup`
does; then each pending pod in turn is created and watched until decided:

- its first FailedScheduling Event and PodScheduled=False condition give the first
  attempt's message (none when the first attempt bound it);
- `status.nominatedNodeName`, written with that condition, says whether preemption chose
  a node; a nominated pod is then waited for until bound, except a pod the case `hold`s
  (decided once nominated);
- meanwhile the recorder plays the kubelet: a pod with a deletionTimestamp (a victim
  kube-scheduler DELETEd) has its DisruptionTarget condition read, and is deleted with
  gracePeriodSeconds 0, unless it is the victim of a held pod, which stays terminating
  until the next pending pod's first attempt was decided;
- the victims are the pods whose `Preempted` Event names the preemptor as `related`.

A pending pod with `spec.schedulingGates` is created and read once kube-scheduler's log
says a PreEnqueue plugin held it (`gated`: that plugin and the pod's PodScheduled
condition, which the API server writes at creation; `attempted`: whether any
FailedScheduling Event or node came anyway). After the last pending pod, each pod the
scenario's `ungate` names is, in order, patched without its gates and decided as above
(one more answer each, `ungated` true).

After the last pending pod and the ungated ones, each pending pod's node and
nominatedNodeName are read again (`final`; `exists` false for a pending pod preempted in
turn), and everything is deleted. A placed pod's answer and its `final` also hold `total`:
each node's final score in the attempt that placed it (kube-scheduler's -v=10 log), so the
comparison can tell a pick among nodes tied for the top total, which is random.
"""

from __future__ import annotations

import copy
import re
import time
from typing import Any

from tests.differential.kubeapi import GRACE_0, MERGE_PATCH, pending_pods, wait_for
from tests.differential.recorder import Recorder, _check_stored

DECIDE_TIMEOUT = 60.0
#: The condition reason the API server gives a pod created with scheduling gates.
GATED_REASON = "SchedulingGated"
#: v1.28 `runPreEnqueuePlugins` (scheduling_queue.go), at -v=4.
_PRE_ENQUEUE = re.compile(
    r'"Status after running PreEnqueue plugin" pod="([^"]+)" plugin="([^"]+)"'
)
#: How long kube-scheduler's activeQ and backoffQ must stay empty to count as settled.
SETTLED_FOR = 0.3
#: How long to let a preemptor's Preempted Events arrive after the last one seen.
EVENTS_SETTLE = 0.5


class PreemptionRecorder(Recorder):
    # -- one scenario -------------------------------------------------------------------

    def record(self, s: dict[str, Any]) -> dict[str, Any]:
        self.setup(s)
        spaces = _namespaces(s)
        self._spaces = spaces
        self.terminating: dict[str, dict[str, Any]] = {}
        self.held: set[str] = set()
        self.created_at: dict[str, int] = {}
        answers = []
        hold = set(s.get("hold") or [])
        for manifest in s["pending"]:
            if manifest["spec"].get("schedulingGates"):
                answers.append(self.run_gated(manifest))
                continue
            answers.append(self.run_pending(manifest, spaces, manifest["metadata"]["name"] in hold))
        by_name = {m["metadata"]["name"]: m for m in s["pending"]}
        for name in s.get("ungate") or []:
            answers.append(self.run_ungated(by_name[name], spaces))
        self.settle()
        final = {}
        for manifest in s["pending"]:
            meta = manifest["metadata"]
            code, pod = self.api.request(
                "GET", self.api.path("Pod", meta["namespace"], meta["name"])
            )
            exists = code == 200 and not pod["metadata"].get("deletionTimestamp")
            key = f"{meta['namespace']}/{meta['name']}"
            node = pod["spec"].get("nodeName") if exists else None
            final[key] = {
                "exists": exists,
                "node": node,
                "total": self._placing_total(key, self.created_at[key]) if node else {},
                "nominatedNodeName": (pod.get("status") or {}).get("nominatedNodeName")
                if exists
                else None,
            }
        self.teardown(_as_single(s))
        return {**s, "answer": answers, "final": final}

    def record_or_report(self, s: dict[str, Any]) -> dict[str, Any]:
        error = ""
        for _ in range(2):
            try:
                return self.record(s)
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                print(f"{s['id']}: {error}", flush=True)
                try:
                    self.teardown(_as_single(s))
                except Exception as again:
                    print(f"{s['id']}: cleanup failed too: {again}", flush=True)
        return {**s, "answer": None, "final": None, "error": error}

    def _create_pod(self, manifest: dict[str, Any]) -> None:
        """Create an assigned pod, then write its status (startTime) through /status."""
        created = self.api.create({"apiVersion": "v1", "kind": "Pod", **manifest})
        _check_stored(manifest, created)
        status = manifest.get("status")
        if status:
            meta = manifest["metadata"]
            path = self.api.path("Pod", meta.get("namespace"), meta["name"]) + "/status"
            stored = self.api.call("PATCH", path, {"status": status}, MERGE_PATCH)
            for key, value in status.items():
                if stored["status"].get(key) != value:
                    raise RuntimeError(f"pod {meta['name']}: status.{key} not kept: {stored}")

    # -- one pending pod -----------------------------------------------------------------

    def run_pending(
        self, manifest: dict[str, Any], spaces: list[str], hold: bool
    ) -> dict[str, Any]:
        manifest = copy.deepcopy(manifest)
        self.settle()
        offset = self.log.offset()
        self.created_at[f"{manifest['metadata']['namespace']}/{manifest['metadata']['name']}"] = (
            offset
        )
        created = self.api.create({"apiVersion": "v1", "kind": "Pod", **manifest})
        _check_stored(manifest, created)
        return self._decide(created, spaces, hold, offset)

    def run_gated(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """Create a pod with scheduling gates and wait until kube-scheduler's log says a
        PreEnqueue plugin held it; the answer is what the pod shows then (the API server
        wrote its PodScheduled=False SchedulingGated condition at creation)."""
        manifest = copy.deepcopy(manifest)
        meta = manifest["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        self.settle()
        offset = self.log.offset()
        self.created_at[key] = offset
        created = self.api.create({"apiVersion": "v1", "kind": "Pod", **manifest})
        _check_stored(manifest, created)
        found: dict[str, str] = {}

        def gated() -> bool:
            for line in self.log.since(offset).splitlines():
                if (m := _PRE_ENQUEUE.search(line)) and m.group(1) == key:
                    found["plugin"] = m.group(2)
                    return True
            return False

        wait_for(gated, DECIDE_TIMEOUT, f"{key} held by a PreEnqueue plugin")
        pod = self.api.call("GET", self.api.path("Pod", meta["namespace"], meta["name"]))
        status = pod.get("status") or {}
        condition = next(
            (c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), {}
        )
        events = self.api.call(
            "GET",
            f"/api/v1/namespaces/{meta['namespace']}/events?fieldSelector=involvedObject.uid"
            f"%3D{created['metadata']['uid']},reason%3DFailedScheduling",
        )["items"]
        return {
            "pod": key,
            "gated": {
                "plugin": found["plugin"],
                "reason": condition.get("reason"),
                "message": condition.get("message"),
            },
            "attempted": bool(events) or bool(pod["spec"].get("nodeName")),
            "nominatedNodeName": status.get("nominatedNodeName"),
        }

    def run_ungated(self, manifest: dict[str, Any], spaces: list[str]) -> dict[str, Any]:
        """Remove a gated pod's `spec.schedulingGates` and wait for its decision."""
        meta = manifest["metadata"]
        path = self.api.path("Pod", meta["namespace"], meta["name"])
        self.settle()
        offset = self.log.offset()
        pod = self.api.call("PATCH", path, {"spec": {"schedulingGates": None}}, MERGE_PATCH)
        if pod["spec"].get("schedulingGates"):
            raise RuntimeError(f"{meta['name']}: gates kept: {pod['spec']['schedulingGates']}")
        return {**self._decide(pod, spaces, False, offset), "ungated": True}

    def _decide(
        self, created: dict[str, Any], spaces: list[str], hold: bool, offset: int
    ) -> dict[str, Any]:
        """Wait until the pod's first attempt was decided (see the module's docstring);
        `total`: each node's final score in the attempt that placed it (kube-scheduler's
        log since `offset`), which tells a pick among tied nodes."""
        meta = created["metadata"]
        ns, name = meta["namespace"], meta["name"]
        path = self.api.path("Pod", ns, name)
        uid = meta["uid"]
        seen: dict[str, Any] = {}
        window: set[str] = set()
        previous = set(self.held)  # victims of the pod held before this one

        def decided() -> bool:
            window.update(self._kubelet(spaces, hold))
            pod = self.api.call("GET", path)
            if pod["spec"].get("nodeName"):
                seen["node"] = pod["spec"]["nodeName"]
                return True
            status = pod.get("status") or {}
            if "message" not in seen:
                first = self._first_failure(ns, uid, status)
                if first is None:
                    return False
                seen.update(first)
                seen["nominatedNodeName"] = status.get("nominatedNodeName")
                self._release(previous)  # this attempt saw the held victims
            if not status.get("nominatedNodeName"):
                return True
            return hold

        wait_for(decided, DECIDE_TIMEOUT, f"{ns}/{name} decided")
        victims = self._victims(ns, uid, bool(seen.get("nominatedNodeName")), len(window))
        if hold:  # its victims were deleted before its nomination: hold them all
            window.update(self._kubelet(spaces, hold))
        return {
            "pod": f"{ns}/{name}",
            "message": seen.get("message"),
            "condition": seen.get("condition"),
            "nominatedNodeName": seen.get("nominatedNodeName"),
            "victims": sorted(v["pod"] for v in victims),
            "preemptedEvents": victims,
            "disruptionTargets": {
                v["pod"]: self.terminating.get(v["pod"], {}).get("disruptionTarget")
                for v in victims
            },
            "node": seen.get("node"),
            "total": self._placing_total(f"{ns}/{name}", offset) if seen.get("node") else {},
        }

    def _placing_total(self, key: str, offset: int) -> dict[str, int]:
        scored = [a for a in self.log.attempts(offset, key) if a.total]
        return dict(sorted(scored[-1].total.items())) if scored else {}

    def settle(self) -> None:
        """Wait until kube-scheduler's activeQ and backoffQ stay empty (SETTLED_FOR): a pod
        an earlier one's binding or victims woke is tried again before the next step, as
        eventsched's replay runs until idle before each."""
        quiet_since: list[float] = []

        def settled() -> bool:
            self._kubelet(self._spaces, False)
            queues = pending_pods(self.metrics_url)
            if queues.get("active", 0) or queues.get("backoff", 0):
                quiet_since.clear()
                return False
            if not quiet_since:
                quiet_since.append(time.monotonic())
            return time.monotonic() - quiet_since[0] >= SETTLED_FOR

        wait_for(settled, DECIDE_TIMEOUT, "kube-scheduler's activeQ and backoffQ empty", every=0.05)

    def _first_failure(self, ns: str, uid: str, status: dict[str, Any]) -> dict[str, Any] | None:
        conditions = [
            c
            for c in status.get("conditions") or []
            if c.get("type") == "PodScheduled"
            and c.get("status") == "False"
            and c.get("reason") != GATED_REASON  # the API server's, before any attempt
        ]
        if not conditions:
            return None
        events = self.api.call(
            "GET",
            f"/api/v1/namespaces/{ns}/events?fieldSelector=involvedObject.uid%3D{uid},"
            "reason%3DFailedScheduling",
        )["items"]
        if not events:
            return None
        first = min(events, key=lambda e: e.get("eventTime") or e.get("firstTimestamp") or "")
        return {"message": first["message"], "condition": conditions[0]["message"]}

    def _victims(self, ns: str, uid: str, nominated: bool, deleted: int) -> list[dict[str, Any]]:
        """The Preempted Events whose `related` is the preemptor (kube-scheduler writes one
        per victim after deleting it), waited for while a nominated preemptor has fewer
        than the pods deleted while it was pending."""
        want = max(deleted, 1) if nominated else 0
        found: list[dict[str, Any]] = []
        settled_at = time.monotonic() + EVENTS_SETTLE
        deadline = time.monotonic() + 15
        while True:
            now = self._preempted_events(uid)
            if len(now) != len(found):
                found = now
                settled_at = time.monotonic() + EVENTS_SETTLE
            if len(found) >= want and time.monotonic() >= settled_at:
                return found
            if time.monotonic() > deadline:
                raise TimeoutError(f"{ns}: {len(found)} Preempted Events, expected {want}")
            time.sleep(0.05)

    def _preempted_events(self, uid: str) -> list[dict[str, Any]]:
        out = []
        for ns in self._spaces:
            items = self.api.call(
                "GET", f"/api/v1/namespaces/{ns}/events?fieldSelector=reason%3DPreempted"
            )["items"]
            for e in items:
                if (e.get("related") or {}).get("uid") != uid:
                    continue
                involved = e["involvedObject"]
                out.append(
                    {
                        "pod": f"{involved['namespace']}/{involved['name']}",
                        "type": e.get("type"),
                        "action": e.get("action"),
                        "message": e.get("message"),
                        "reportingController": e.get("reportingComponent"),
                    }
                )
        return sorted(out, key=lambda v: str(v["pod"]))

    # -- the kubelet ---------------------------------------------------------------------

    def _kubelet(self, spaces: list[str], hold: bool) -> set[str]:
        """Terminating pods: remember their DisruptionTarget condition, then delete them at
        once (unless held). Returns the pods first seen terminating now."""
        new: set[str] = set()
        for ns in spaces:
            for pod in self.api.call("GET", f"/api/v1/namespaces/{ns}/pods")["items"]:
                meta = pod["metadata"]
                if not meta.get("deletionTimestamp"):
                    continue
                key = f"{ns}/{meta['name']}"
                if key not in self.terminating:
                    new.add(key)
                    self.terminating[key] = {"disruptionTarget": _disruption_target(pod)}
                    if hold:
                        self.held.add(key)
                if key not in self.held:
                    self.api.request("DELETE", self.api.path("Pod", ns, meta["name"]), GRACE_0)
        return new

    def _release(self, keys: set[str]) -> None:
        for key in sorted(keys):
            ns, name = key.split("/", 1)
            self.api.request("DELETE", self.api.path("Pod", ns, name), GRACE_0)
        self.held -= keys


def _disruption_target(pod: dict[str, Any]) -> dict[str, Any] | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "DisruptionTarget":
            return {
                "status": c.get("status"),
                "reason": c.get("reason"),
                "message": c.get("message"),
            }
    return None


def _namespaces(s: dict[str, Any]) -> list[str]:
    found = {"default"} | {n["name"] for n in s["namespaces"]}
    found |= {p["metadata"].get("namespace", "default") for p in [*s["pods"], *s["pending"]]}
    return sorted(found)


def _as_single(s: dict[str, Any]) -> dict[str, Any]:
    """The scenario as `Recorder.teardown` reads it (one `pending` pod, the others among
    `pods`, so that every namespace is emptied)."""
    return {**s, "pods": [*s["pods"], *s["pending"][1:]], "pending": s["pending"][0]}
