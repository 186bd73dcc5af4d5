"""kube-apiserver's audit log, for a control plane started with one (`ControlPlane(audit=True)`).

Every request is logged at the Metadata level (who, which verb on which resource, the
answer's code and the authorizer's decision; no bodies), in JSON lines, in blocking mode:
a request's event is written before the server answers it, so what a client saw answered
is in the file when the client returns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Every request at the Metadata level; the stage each request enters first is left out
#: (ResponseComplete, or ResponseStarted for a watch, follows it).
POLICY: dict[str, Any] = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [{"level": "Metadata"}],
}


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One stage of one request, as the audit log has it."""

    user: str
    verb: str
    uri: str
    stage: str
    #: The resource, with its subresource after a slash (pods/binding); "" for other paths.
    resource: str
    api_group: str
    #: The answer's HTTP status; 0 while a watch is open (stage ResponseStarted has one).
    code: int
    #: The authorizer's "allow" or "forbid".
    decision: str


def event_of(raw: dict[str, Any]) -> AuditEvent:
    ref = raw.get("objectRef") or {}
    resource = ref.get("resource", "")
    if ref.get("subresource"):
        resource += "/" + ref["subresource"]
    return AuditEvent(
        user=raw.get("user", {}).get("username", ""),
        verb=raw.get("verb", ""),
        uri=raw.get("requestURI", ""),
        stage=raw.get("stage", ""),
        resource=resource,
        api_group=ref.get("apiGroup", ""),
        code=int((raw.get("responseStatus") or {}).get("code") or 0),
        decision=(raw.get("annotations") or {}).get("authorization.k8s.io/decision", ""),
    )


@dataclass(frozen=True, slots=True)
class AuditLog:
    """The policy and the log file of one kube-apiserver, in `directory`."""

    directory: Path

    @property
    def policy_file(self) -> Path:
        return self.directory / "audit-policy.yaml"

    @property
    def log_file(self) -> Path:
        return self.directory / "audit.log"

    def flags(self) -> list[str]:
        """kube-apiserver's flags for this log (the policy file is written here)."""
        self.policy_file.write_text(json.dumps(POLICY, indent=2) + "\n")  # JSON is YAML
        return [
            f"--audit-policy-file={self.policy_file}",
            f"--audit-log-path={self.log_file}",
            "--audit-log-format=json",
            "--audit-log-mode=blocking",
            "--audit-log-maxsize=0",
        ]

    def events(self) -> list[AuditEvent]:
        """Every event written so far, in order (a line still being written is left out)."""
        if not self.log_file.is_file():
            return []
        events = []
        for line in self.log_file.read_text().splitlines():
            try:
                raw = json.loads(line)
            except ValueError:
                continue
            events.append(event_of(raw))
        return events
