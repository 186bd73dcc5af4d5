"""Calling a scheduler extender as kube-scheduler v1.28 does (`pkg/scheduler/extender.go`).

POST `urlPrefix + "/" + verb` with k8s.io/kube-scheduler/extender/v1 JSON over kept-alive
connections, `httpTimeout` (5 s unless set) for the whole call, TLS as `tlsConfig` says.
Errors carry kube-scheduler's wording, so the FailedScheduling message an extender's
failure causes reads as it would under kube-scheduler.

Every answer (or failure) a decision uses is recorded as `input_recorded` (plugin: the
extender's urlPrefix; key: the verb and the call's number in the attempt), and while
replaying the recorded answer is returned instead of calling: replay never reaches an
extender, and decides exactly as the live attempt did.
"""

from __future__ import annotations

import base64
import ssl
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from eventsched.framework.cycle_state import CycleState
from eventsched.framework.extenders.config import ExtenderConfig
from eventsched.framework.extenders.objects import node_object, pod_object
from eventsched.framework.extenders.preemptargs import (
    PreemptAnswerError,
    preemption_args,
    preemption_result,
)
from eventsched.framework.handle import Handle
from eventsched.framework.preemption.candidates import Candidate
from eventsched.framework.preemption.metavictims import NodeVictims
from eventsched.model import Node, Pod

if TYPE_CHECKING:
    import urllib3

#: CycleState key counting an attempt's extender calls (each recorded under its own key).
CALLS_KEY = "eventsched.io/extender-calls"


class ExtenderError(Exception):
    """The call failed (no answer, a non-200 answer, an `Error` in the answer)."""


@dataclass(slots=True)
class FilterReply:
    """ExtenderFilterResult: the names that passed, and why the others failed."""

    passed: list[str]
    failed: dict[str, str] = field(default_factory=dict)
    unresolvable: dict[str, str] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "failed": self.failed,
            "unresolvable": self.unresolvable,
        }


class HTTPExtender:
    def __init__(self, config: ExtenderConfig) -> None:
        self.config = config
        self.name = config.name
        self.managed = frozenset(r.name for r in config.managed_resources)
        self._http: urllib3.PoolManager | None = None

    # -- what kube-scheduler asks of an extender ------------------------------------

    def is_interested(self, pod: Pod) -> bool:
        """No managed resources: every pod; else a pod that requests one of them."""
        return not self.managed or any(name in self.managed for name in pod.requests)

    @property
    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    @property
    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    @property
    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    @property
    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    def filter(
        self, state: CycleState, handle: Handle, pod: Pod, nodes: Sequence[Node]
    ) -> FilterReply:
        names = [n.name for n in nodes]
        if not self.is_filter:
            return FilterReply(names)
        record = self._recorded(state, handle, "filter", lambda: self._filter(pod, nodes))
        return FilterReply(
            list(record["passed"]), dict(record["failed"]), dict(record["unresolvable"])
        )

    def prioritize(
        self, state: CycleState, handle: Handle, pod: Pod, nodes: Sequence[Node]
    ) -> dict[str, int]:
        """Host to score (0..10 by the protocol; what the extender sent, unchecked as upstream)."""
        if not self.is_prioritizer:
            return {n.name: 0 for n in nodes}
        record = self._recorded(state, handle, "prioritize", lambda: self._prioritize(pod, nodes))
        return {str(host): int(score) for host, score in record["scores"]}

    def process_preemption(
        self, state: CycleState, handle: Handle, pod: Pod, candidates: Sequence[Candidate]
    ) -> list[NodeVictims]:
        """`ProcessPreemption`: the candidates the extender keeps (its NodeNameToMetaVictims,
        in the order it sent them), victims by UID (preemption/extenders.py finds the pods)."""
        record = self._recorded(state, handle, "preempt", lambda: self._preempt(pod, candidates))
        return [NodeVictims.from_record(v) for v in record["kept"]]

    def bind(self, pod: Pod, node: str) -> None:
        """ExtenderBindingArgs; raises ExtenderError with the extender's Error."""
        answer = self._send(
            self.config.bind_verb,
            {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod.uid, "Node": node},
        )
        error = answer.get("Error") if isinstance(answer, dict) else None
        if error:
            raise ExtenderError(str(error))

    # -- the calls ---------------------------------------------------------------

    def _args(self, pod: Pod, nodes: Sequence[Node]) -> dict[str, Any]:
        if self.config.node_cache_capable:
            return {"Pod": pod_object(pod), "Nodes": None, "NodeNames": [n.name for n in nodes]}
        items = [node_object(n) for n in nodes]
        return {
            "Pod": pod_object(pod),
            "Nodes": {"metadata": {}, "items": items},
            "NodeNames": None,
        }

    def _filter(self, pod: Pod, nodes: Sequence[Node]) -> dict[str, Any]:
        answer = self._send(self.config.filter_verb, self._args(pod, nodes))
        if not isinstance(answer, dict):
            raise ExtenderError(f"extender {self.name!r} answered filter with no object")
        if answer.get("Error"):
            raise ExtenderError(str(answer["Error"]))
        given = {n.name for n in nodes}
        if self.config.node_cache_capable and answer.get("NodeNames") is not None:
            passed = [str(n) for n in answer["NodeNames"]]
            for name in passed:
                if name not in given:
                    raise ExtenderError(
                        f'extender "{self.name}" claims a filtered node "{name}" which is not '
                        "found in the input node list"
                    )
        else:
            items = (answer.get("Nodes") or {}).get("items") or []
            passed = [str(i["metadata"]["name"]) for i in items]
        return FilterReply(
            passed,
            {str(k): str(v) for k, v in (answer.get("FailedNodes") or {}).items()},
            {str(k): str(v) for k, v in (answer.get("FailedAndUnresolvableNodes") or {}).items()},
        ).to_record()

    def _prioritize(self, pod: Pod, nodes: Sequence[Node]) -> dict[str, Any]:
        answer = self._send(self.config.prioritize_verb, self._args(pod, nodes))
        if not isinstance(answer, list):
            raise ExtenderError(f"extender {self.name!r} answered prioritize with no list")
        return {"scores": [[str(p["Host"]), int(p["Score"])] for p in answer]}

    def _preempt(self, pod: Pod, candidates: Sequence[Candidate]) -> dict[str, Any]:
        answer = self._send(
            self.config.preempt_verb,
            preemption_args(pod, candidates, self.config.node_cache_capable),
        )
        try:
            kept = preemption_result(self.name, answer)
        except PreemptAnswerError as exc:
            raise ExtenderError(str(exc)) from None
        return {"kept": [k.to_record() for k in kept]}

    def _recorded(
        self, state: CycleState, handle: Handle, verb: str, call: Any
    ) -> Mapping[str, Any]:
        """The answer: called and recorded live, read back from the log while replaying."""
        number = int(state.get(CALLS_KEY, 0)) + 1
        state.write(CALLS_KEY, number)
        key = f"{verb}#{number}"
        if handle.replaying:
            value = handle.recorded_input(self.name, key)
            if value is None:
                raise ExtenderError(f"extender {self.name!r}: no recorded answer for {key}")
        else:
            try:
                value = {"answer": call()}
            except ExtenderError as exc:
                value = {"error": str(exc)}
            state.record_input(self.name, key, value)
        if "error" in value:
            raise ExtenderError(str(value["error"]))
        return value["answer"]

    def _send(self, verb: str, args: Mapping[str, Any]) -> Any:
        import urllib3  # imported by the first call: a profile without extenders never needs it

        url = self.config.url_prefix.rstrip("/") + "/" + verb
        try:
            response = self._pool().request(
                "POST",
                url,
                body=orjson.dumps(args),
                headers={"Content-Type": "application/json"},
                timeout=urllib3.Timeout(total=self.config.http_timeout),
                retries=False,
            )
        except (urllib3.exceptions.TimeoutError, TimeoutError):
            raise ExtenderError(
                f'Post "{url}": context deadline exceeded '
                "(Client.Timeout exceeded while awaiting headers)"
            ) from None
        except urllib3.exceptions.HTTPError as exc:
            raise ExtenderError(f'Post "{url}": {_reason(exc)}') from None
        if response.status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {response.status}")
        try:
            return orjson.loads(response.data)
        except orjson.JSONDecodeError as exc:
            raise ExtenderError(
                f"extender {self.name!r} answered {verb} with bad JSON: {exc}"
            ) from None

    def _pool(self) -> urllib3.PoolManager:
        if self._http is None:
            import urllib3

            self._http = urllib3.PoolManager(maxsize=4, ssl_context=_tls(self.config))
        return self._http


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    text = str(reason or exc)
    if "Connection refused" in text:
        return "connect: connection refused"
    return text


def _tls(config: ExtenderConfig) -> ssl.SSLContext | None:
    """`makeTransport`: HTTPS without a CA is not verified; with one, verified against it."""
    if not config.enable_https and not config.tls_config:
        return None
    tls = config.tls_config
    context = ssl.create_default_context()
    ca = tls.get("caData")
    if tls.get("caFile"):
        context.load_verify_locations(cafile=str(tls["caFile"]))
    elif ca:
        context.load_verify_locations(cadata=base64.b64decode(ca).decode())
    if tls.get("insecure") or (config.enable_https and not (tls.get("caFile") or ca)):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    cert, key = tls.get("certFile"), tls.get("keyFile")
    if tls.get("certData") and tls.get("keyData"):
        cert, key = _written(tls["certData"]), _written(tls["keyData"])
    if cert and key:
        context.load_cert_chain(str(cert), str(key))
    return context


def _written(data: str) -> str:
    """A base64 *Data field as a file (ssl loads client certificates from files only)."""
    with tempfile.NamedTemporaryFile("wb", suffix=".pem", delete=False) as out:
        out.write(base64.b64decode(data))
    return out.name
