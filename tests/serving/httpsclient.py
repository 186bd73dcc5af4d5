"""GET over HTTPS as a test client: a bearer token, a client certificate, or nothing."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass

from tests.serving.certs import Pair


@dataclass(frozen=True)
class Reply:
    code: int
    body: str


def get(port: int, path: str, token: str = "", cert: Pair | None = None) -> Reply:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the self-signed serving certificate
    if cert is not None:
        context.load_cert_chain(cert.crt, cert.key)
    request = urllib.request.Request(f"https://127.0.0.1:{port}{path}")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as r:
            return Reply(r.status, r.read().decode())
    except urllib.error.HTTPError as err:
        return Reply(err.code, err.read().decode())
