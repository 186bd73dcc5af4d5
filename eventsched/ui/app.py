"""The routes of `eventsched ui`; each page's content comes from its own module.

Every route answers GET (and HEAD) only, but the what-if form's POST, which
starts a replay in memory and writes nothing. Bad input is one sentence on
an error page: unknown pod or node 404, malformed input 400, the database
unreachable 503.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import structlog
from sqlalchemy.exc import DBAPIError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from eventsched.audit import PodExplanation, PodNotFound, explain_full
from eventsched.audit.believed import cluster_as_seen
from eventsched.audit.explainnumbers import explain_numbers
from eventsched.audit.readonly import read_only_engine
from eventsched.audit.viewat import FoldError
from eventsched.config.types import ConfigError
from eventsched.events.errors import DatabaseUnavailableError, EventStoreError
from eventsched.events.logreader import LogReader
from eventsched.events.slices import SliceOrigin, read_origin
from eventsched.plugins import full_registry
from eventsched.plugins.capacityscheduling.minmax import notes_of
from eventsched.ui import gang as gang_page
from eventsched.ui import integrity as page_integrity
from eventsched.ui import node as node_page
from eventsched.ui import nodelist, pod, reads, search, shadow, shadowoverview, whatif
from eventsched.ui.chain import ChainChecker
from eventsched.ui.folds import SharedFold
from eventsched.ui.serving import ServerTiming, error, http_error
from eventsched.ui.web import STATIC, BadRequest, Busy, NotFound, page, time_range

log = structlog.get_logger(__name__)

#: Largest what-if form accepted.
MAX_FORM_BYTES = 512 * 1024


@dataclass(frozen=True, slots=True)
class Settings:
    url: str
    configs: Path | None = None
    #: Seconds between checks of what was appended to the hash chain.
    chain_interval: float = 10.0


@dataclass(slots=True)
class Overview:
    pending: list[reads.Row]
    recent: list[reads.Row]
    per_minute: list[tuple[str, int, int]]
    rejecters_hour: list[tuple[str, int]]
    rejecters_day: list[tuple[str, int]]
    last_position: int


#: The attempts page's attempts with numbers (each folds the log to its own position).
NUMBERED_ATTEMPTS = 5


class UI:
    """The state the routes share: the log read through a read-only engine, the chain
    check, the what-if jobs."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.engine = read_only_engine(settings.url)
        self.reader = LogReader(self.engine)
        self.chain = ChainChecker(self.reader, settings.chain_interval)
        self.jobs = whatif.Jobs(self.reader, self.engine)
        self.folds = SharedFold(self.reader)
        #: Where the log came from, when it is a slice (`eventsched export`): every page says so.
        self.origin = self._origin()

    def _origin(self) -> SliceOrigin | None:
        try:
            return read_origin(self.reader)
        except EventStoreError as exc:  # the database is down: the pages will say so
            log.warning("could not read whether the log is a slice", error=str(exc))
            return None

    # -- pages ---------------------------------------------------------------------

    def overview(self, request: Request) -> Response:
        now = datetime.now(UTC)
        window = request.query_params.get("shadow", shadowoverview.DEFAULT_WINDOW)
        if window not in shadowoverview.WINDOWS:
            raise BadRequest(f"shadow: the window is one of {', '.join(shadowoverview.WINDOWS)}.")
        data = Overview(
            reads.pending_pods(self.engine),
            reads.recent_outcomes(self.engine),
            reads.outcomes_per_minute(self.engine, now - timedelta(hours=1)),
            reads.top_rejecters(self.engine, now - timedelta(hours=1)),
            reads.top_rejecters(self.engine, now - timedelta(days=1)),
            reads.last_position(self.engine),
        )
        most = max((b + f for _, b, f in data.per_minute), default=0) or 1
        return page(
            request,
            "overview.html",
            title="Overview",
            o=data,
            chain=self.chain.status,
            most=most,
            sh=shadowoverview.load_overview(self.engine, window, now),
            windows=shadowoverview.WINDOWS,
            window=window,
            asked_window="shadow" in request.query_params,
            integrity=page_integrity.of_rows(
                self.reader, data.pending + data.recent, self.chain.status
            ),
        )

    def _numbers(self, explanation: PodExplanation, attempts: int) -> str:
        """The numbers of the `attempts` latest attempts and the queue, from the shared fold;
        or, while its first fold is short of the head, why there are none yet."""
        head = reads.last_position(self.engine)
        with self.folds.views(head) as views:
            if views is None:
                return (
                    f"The numbers behind the reasons and the queue appear once this page's "
                    f"fold of the log reaches position {head:,} (it is at "
                    f"{self.folds.warmed:,}); reload in a few seconds."
                )
            explain_numbers(explanation, views, full_registry(), head, last=attempts)
        return explanation.numbers_unavailable

    def pod_summary(self, request: Request) -> Response:
        explanation = pod.load(self.reader, *self._pod(request))
        folding = self._numbers(explanation, 1)
        decided = shadow.load_pod(self.engine, explanation)
        shadow.mark_attempts(explanation, decided)
        return page(
            request,
            "pod.html",
            title=f"{explanation.namespace}/{explanation.name}",
            s=pod.summarize(explanation, decided),
            folding=folding,
            verdicts=len(decided.verdicts),
            nodes=reads.known_nodes(self.engine),
            integrity=page_integrity.of_pod(explanation, self.chain.status),
        )

    def pod_attempts(self, request: Request) -> Response:
        explanation = pod.load(self.reader, *self._pod(request))
        if request.query_params.get("full") == "1":
            # explain --full: every feasible node's scores, by replaying the log.
            explain_full(self.reader, full_registry(), explanation)
        folding = self._numbers(explanation, NUMBERED_ATTEMPTS)
        decided = shadow.load_pod(self.engine, explanation)
        shadow.mark_attempts(explanation, decided)
        tables = {a.attempt: pod.filter_table(a) for a in explanation.attempts}
        return page(
            request,
            "attempts.html",
            title=f"{explanation.namespace}/{explanation.name}: attempts",
            e=explanation,
            tables=tables,
            notes={a.attempt: notes_of(a.steps) for a in explanation.attempts},
            shadow=decided,
            numbered=min(NUMBERED_ATTEMPTS, len(explanation.attempts)),
            folding=folding,
            nodes=reads.known_nodes(self.engine),
            integrity=page_integrity.of_pod(explanation, self.chain.status),
        )

    def pod_why_not(self, request: Request) -> Response:
        explanation = pod.load(self.reader, *self._pod(request))
        shadow.mark_attempts(explanation, shadow.load_pod(self.engine, explanation))
        node = request.query_params.get("node", "").strip()
        if not node:
            raise BadRequest("node: name the node to ask about (?node=NAME).")
        attempt = request.query_params.get("attempt", "").strip()
        try:
            answer = pod.why_not(self.reader, explanation, attempt, node)
        except LookupError as exc:
            raise NotFound(str(exc)) from exc
        return page(
            request,
            "whynot.html",
            title=f"Why not {node}?",
            e=explanation,
            w=answer,
            integrity=page_integrity.of_pod(explanation, self.chain.status),
        )

    def gang(self, request: Request) -> Response:
        found = gang_page.load(self.reader, *self._pod(request))
        members = [(m.namespace, m.name) for m in found.members]
        integrity = page_integrity.of_pods(self.reader, members, self.chain.status)
        return page(request, "gang.html", title=f"Gang {found.key}", g=found, integrity=integrity)

    def node_list(self, request: Request) -> Response:
        head = reads.last_position(self.engine)
        with self.folds.views(head) as views:
            counted = nodelist.count(views, head, self.folds.warmed)
        listed = nodelist.load(self.engine, counted)
        return page(request, "nodes.html", title=f"Nodes ({len(listed.rows)})", l=listed)

    def node(self, request: Request) -> Response:
        name = request.path_params["node"]
        since, _ = time_range(request.query_params.get("since", "1d"), "")
        found = node_page.load(self.engine, name, since or datetime.min.replace(tzinfo=UTC))
        if found is None:
            raise NotFound(f"the event log has no event for node {name}.")
        # The rejections are counted up to the head: a break anywhere before it counts.
        integrity = page_integrity.of_rows(
            self.reader, found.rows(), self.chain.status, reads.last_position(self.engine)
        )
        return page(request, "node.html", title=f"Node {name}", n=found, integrity=integrity)

    def cluster_at(self, request: Request) -> Response:
        position = int(request.path_params["position"])
        head = reads.last_position(self.engine)
        if position > head:
            raise NotFound(f"the log's positions run from 0 to {head}.")
        with self.folds.views(head) as views:
            if views is None:
                raise Busy(
                    f"this page's fold of the log is at position {self.folds.warmed:,} of "
                    f"{head:,}; reload in a few seconds."
                )
            try:
                seen = cluster_as_seen(views, position, head)
            except FoldError as exc:
                raise BadRequest(f"no view at position {position}: {exc}.") from exc
        ns, _, name = request.query_params.get("pod", "").rpartition("/")
        return page(
            request,
            "cluster.html",
            title=f"The cluster at position {position}",
            c=seen,
            pod=(ns, name) if name else None,
            integrity=page_integrity.of_fold(self.chain.status, head),
        )

    def search(self, request: Request) -> Response:
        query = search.parse(request.query_params)
        rows = reads.search(self.engine, query) if search.asked(query) else []
        more = len(rows) > reads.PAGE_ROWS
        return page(
            request,
            "search.html",
            title="Search",
            q=query,
            rows=rows[: reads.PAGE_ROWS],
            more=more,
            integrity=page_integrity.of_rows(
                self.reader, rows[: reads.PAGE_ROWS], self.chain.status
            )
            if rows
            else None,
            asked=search.asked(query),
            params=dict(request.query_params),
        )

    def what_if_form(self, request: Request, error: str = "", status: int = 200) -> Response:
        return page(
            request,
            "whatif.html",
            status,
            title="What if",
            files=whatif.config_files(self.settings.configs),
            error=error,
            form=getattr(request.state, "form", {}),
        )

    async def what_if_start(self, request: Request) -> Response:
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            raise BadRequest(f"the form is larger than {MAX_FORM_BYTES} bytes.")
        fields = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
        request.state.form = fields
        try:
            since, until = time_range(fields.get("since", ""), fields.get("until", ""))
            source, config = whatif.load_choice(
                self.settings.configs, fields.get("config", ""), fields.get("yaml", "")
            )
        except ConfigError as exc:
            where = f"field {exc.field}" if exc.field else "the configuration"
            return self.what_if_form(request, f"{exc.source}: {where}: {exc.problem}", 400)
        except BadRequest as exc:
            return self.what_if_form(request, str(exc), 400)
        if self.jobs.running() >= whatif.MAX_RUNNING:
            raise Busy(
                f"{whatif.MAX_RUNNING} what-if replays are running already; "
                "try again when one has finished."
            )
        job = await asyncio.to_thread(self.jobs.start, source, config, since, until)
        return RedirectResponse(f"/what-if/{job.id}", status_code=303)

    def what_if_job(self, request: Request) -> Response:
        job = self.jobs.get(request.path_params["job"])
        if job is None:
            raise NotFound("no what-if run with that id (runs are kept in memory, 20 at most).")
        # The thread sets the report before the state: read the state first.
        state = job.state
        report = job.report if state == "done" else None
        chart = whatif.load_chart(report) if report is not None else None
        return page(
            request,
            "whatif_job.html",
            title="What if: " + job.source,
            job=job,
            state=state,
            r=report,
            chart=chart,
        )

    def healthz(self, request: Request) -> Response:
        return PlainTextResponse("ok")

    @staticmethod
    def _pod(request: Request) -> tuple[str, str]:
        return request.path_params["namespace"], request.path_params["name"]


def _threaded(handler: Callable[[Request], Response]) -> Callable[[Request], Any]:
    """Run a blocking page handler on a worker thread (the database calls block)."""

    async def endpoint(request: Request) -> Response:
        return await asyncio.to_thread(handler, request)

    return endpoint


def create_app(
    settings: Settings, *, start_chain_check: bool = True, warm_fold: bool = True
) -> Starlette:
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

    get = ["GET"]
    routes = [
        Route("/", _threaded(ui.overview), methods=get),
        Route("/pods/{namespace}/{name}", _threaded(ui.pod_summary), methods=get),
        Route("/pods/{namespace}/{name}/attempts", _threaded(ui.pod_attempts), methods=get),
        Route("/pods/{namespace}/{name}/why-not", _threaded(ui.pod_why_not), methods=get),
        Route("/gangs/{namespace}/{name}", _threaded(ui.gang), methods=get),
        Route("/nodes", _threaded(ui.node_list), methods=get),
        Route("/nodes/{node}", _threaded(ui.node), methods=get),
        Route("/cluster-at/{position:int}", _threaded(ui.cluster_at), methods=get),
        Route("/search", _threaded(ui.search), methods=get),
        Route("/what-if", _threaded(ui.what_if_form), methods=get),
        Route("/what-if", ui.what_if_start, methods=["POST"]),
        Route("/what-if/{job}", _threaded(ui.what_if_job), methods=get),
        Route("/healthz", ui.healthz, methods=get),
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
    app.state.ui = ui
    app.state.slice = ui.origin
    return app
