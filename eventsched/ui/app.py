"""The routes of `eventsched ui`; each page's content comes from its own module
(podpages, logpages, whatifpages).

Every route answers GET (and HEAD) only, but the what-if form's POST, which
starts a replay in memory and writes nothing. Bad input is one sentence on
an error page: unknown pod or node 404, malformed input 400, a namespace the
reader may not see 403, the database unreachable 503.

Every page is reached through `_threaded` or `_asynchronous`, which hand it the
request's reader (access.Viewer): a page cannot be wired without one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from sqlalchemy.exc import DBAPIError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from eventsched.audit import PodNotFound
from eventsched.config.types import ConfigError
from eventsched.events.errors import DatabaseUnavailableError, EventStoreError
from eventsched.ui import logpages, podpages, whatifpages
from eventsched.ui.access import Forbidden, Readers, Unanswered, Viewer, viewer_of
from eventsched.ui.serving import ServerTiming, error, http_error
from eventsched.ui.state import INSECURE_LOCAL, UI, Access, Settings
from eventsched.ui.web import STATIC, BadRequest, Busy, NotFound

__all__ = ["INSECURE_LOCAL", "Access", "Settings", "create_app"]

Page = Callable[[UI, Request, Viewer], Response]


def _threaded(ui: UI, handler: Page) -> Callable[[Request], Awaitable[Response]]:
    """Run a blocking page handler on a worker thread (the database calls and the
    reviews block), handed the request's reader."""

    async def endpoint(request: Request) -> Response:
        return await asyncio.to_thread(handler, ui, request, viewer_of(request.scope))

    return endpoint


def _asynchronous(
    ui: UI, handler: Callable[[UI, Request, Viewer], Awaitable[Response]]
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return await handler(ui, request, viewer_of(request.scope))

    return endpoint


async def healthz(request: Request) -> Response:
    return PlainTextResponse("ok")


def create_app(
    settings: Settings, *, start_chain_check: bool = True, warm_fold: bool = True
) -> Starlette:
    if settings.access is None:
        raise ValueError("Settings.access: give INSECURE_LOCAL, or a guard and a reviewer")
    access: Access = settings.access
    ui = UI(settings)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if start_chain_check:
            ui.chain.start()
        if warm_fold:
            ui.folds.start()
        try:
            yield
        finally:
            ui.folds.stop()
            ui.chain.stop()
            ui.reader.close()

    def threaded(handler: Page) -> Callable[[Request], Awaitable[Response]]:
        return _threaded(ui, handler)

    get = ["GET"]
    routes = [
        Route("/", threaded(logpages.overview), methods=get),
        Route("/pods/{namespace}/{name}", threaded(podpages.pod_summary), methods=get),
        Route("/pods/{namespace}/{name}/attempts", threaded(podpages.pod_attempts), methods=get),
        Route("/pods/{namespace}/{name}/why-not", threaded(podpages.pod_why_not), methods=get),
        Route("/gangs/{namespace}/{name}", threaded(podpages.gang), methods=get),
        Route("/nodes", threaded(logpages.node_list), methods=get),
        Route("/nodes/{node}", threaded(logpages.node), methods=get),
        Route("/cluster-at/{position:int}", threaded(logpages.cluster_at), methods=get),
        Route("/search", threaded(logpages.search_page), methods=get),
        Route("/what-if", threaded(whatifpages.what_if_form), methods=get),
        Route("/what-if", _asynchronous(ui, whatifpages.what_if_start), methods=["POST"]),
        Route("/what-if/{job}", threaded(whatifpages.what_if_job), methods=get),
        Route("/healthz", healthz, methods=get),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={
            # Each class by name, so ExceptionMiddleware answers them (Exception itself is
            # ServerErrorMiddleware's, which answers and then re-raises to the server).
            **dict.fromkeys(
                (
                    PodNotFound,
                    NotFound,
                    BadRequest,
                    Busy,
                    Forbidden,
                    Unanswered,
                    ConfigError,
                    DatabaseUnavailableError,
                    EventStoreError,
                    DBAPIError,
                ),
                error,
            ),
            HTTPException: http_error,
            Exception: error,
        },
        lifespan=lifespan,
    )
    app.add_middleware(ServerTiming)
    app.add_middleware(Readers, guard=access.guard, reviewer=access.reviewer)
    app.state.ui = ui
    app.state.slice = ui.origin
    return app
