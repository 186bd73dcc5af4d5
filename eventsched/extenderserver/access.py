"""Who may call the extender's verbs over HTTPS: kube-scheduler, by its client certificate.

kube-scheduler's extender client (pkg/scheduler/extender.go makeTransport) presents what
its `extenders[].tlsConfig` names (certFile/keyFile, trusting caFile) and nothing else:
no bearer token. So a verb is served only to a client whose certificate the handshake
verified against `--client-ca-file`; a certificate another authority signed fails the
handshake before any request is read, and a request without a certificate gets 401
whatever token it carries. A bearer token is not accepted for the verbs on purpose: the
bind verb creates Bindings with the extender's own credentials, and no kube-scheduler
would send one.

/metrics and the probes (GET) are not decided here: they go through the same `Guard` as
`eventsched run`'s (TokenReview, SubjectAccessReview, the always-allowed paths).
"""

from __future__ import annotations

from typing import Any

from eventsched._httpguard import UNAUTHORIZED, Refusal, certificate_user


def verb_refusal(peer_certificate: dict[str, Any] | None) -> Refusal | None:
    """None when the caller presented a client certificate the client CA signed."""
    if peer_certificate and certificate_user(peer_certificate) is not None:
        return None
    return UNAUTHORIZED
