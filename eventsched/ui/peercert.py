"""uvicorn's HTTP/1.1 protocol, with each request told its connection's client certificate.

uvicorn puts no TLS details in the ASGI scope. This protocol reads the certificate
the handshake verified (the server's context asks for one with CERT_OPTIONAL when
`--client-ca-file` is given) from its transport once, and puts it in every scope
of the connection under access.PEER_CERTIFICATE_KEY (None: the client sent none).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from eventsched.ui.access import PEER_CERTIFICATE_KEY


class PeerCertificateProtocol(H11Protocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        ssl_object = transport.get_extra_info("ssl_object")
        certificate = (ssl_object.getpeercert() or None) if ssl_object is not None else None
        app = self.app

        async def with_certificate(scope: Any, receive: Any, send: Any) -> None:
            scope[PEER_CERTIFICATE_KEY] = certificate
            await app(scope, receive, send)

        self.app = with_certificate
