"""What every page of `eventsched ui` shares around its handler: the Server-Timing
header, and each error as a page of one sentence."""

from __future__ import annotations

import time
from typing import Any

import structlog
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from eventsched.audit import PodNotFound
from eventsched.config.types import ConfigError
from eventsched.events.errors import DatabaseUnavailableError, EventStoreError
from eventsched.ui.access import Forbidden, Unanswered
from eventsched.ui.web import BadRequest, Busy, NotFound, error_page

log = structlog.get_logger(__name__)


class ServerTiming:
    """Adds `Server-Timing: app;dur=MS`: the time from the request to its response headers."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()

        async def timed(message: Any) -> None:
            if message["type"] == "http.response.start":
                ms = (time.perf_counter() - start) * 1000
                headers = list(message.get("headers", []))
                headers.append((b"server-timing", f"app;dur={ms:.2f}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, timed)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        return error_page(
            request,
            405,
            "Read-only",
            f"{request.method} is not allowed here: this page only reads.",
        )
    if exc.status_code == 404:
        return error_page(request, 404, "Not found", f"No page at {request.url.path}.")
    return error_page(request, exc.status_code, "Error", str(exc.detail))


async def error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, PodNotFound | NotFound):
        return error_page(request, 404, "Not found", _sentence(str(exc)))
    if isinstance(exc, Forbidden):
        return error_page(request, 403, "Forbidden", _sentence(str(exc)))
    if isinstance(exc, Unanswered):
        return error_page(
            request,
            503,
            "Authorization unavailable",
            "The API server did not say whether you may see these pods; try again shortly.",
        )
    if isinstance(exc, BadRequest):
        return error_page(request, 400, "Bad request", str(exc))
    if isinstance(exc, Busy):
        return error_page(request, 429, "Busy", str(exc))
    if isinstance(exc, ConfigError):
        return error_page(request, 400, "Bad configuration", _sentence(str(exc)))
    if isinstance(exc, DatabaseUnavailableError | DBAPIError):
        return error_page(
            request,
            503,
            "Database unavailable",
            "The event log's database is not answering; try again once it is back.",
        )
    if isinstance(exc, EventStoreError):  # a read failed: its reason, the password hidden
        return error_page(request, 503, "Database error", _sentence(str(exc)))
    log.exception("page failed", path=request.url.path)
    return error_page(request, 500, "Error", "This page failed; the server's log has the details.")


def _sentence(text: str) -> str:
    text = text.splitlines()[0] if text else ""
    text = text[0].upper() + text[1:] if text else text
    return text if text.endswith(".") else text + "."
