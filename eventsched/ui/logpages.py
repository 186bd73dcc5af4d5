"""The pages over the whole log: the overview, search, the nodes, the cluster at a
position. Each lists only the pods of namespaces its reader may see; what sums over
every namespace (the overview's counts and shadow tallies, a node's rejections, the
cluster at a position) is shown to a reader who may see them all."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from starlette.requests import Request
from starlette.responses import Response

from eventsched.audit.believed import cluster_as_seen
from eventsched.audit.viewat import FoldError
from eventsched.ui import integrity as page_integrity
from eventsched.ui import node as node_page
from eventsched.ui import nodelist, reads, search, shadowoverview
from eventsched.ui.access import Viewer
from eventsched.ui.state import UI
from eventsched.ui.web import BadRequest, Busy, NotFound, page, time_range


@dataclass(slots=True)
class Overview:
    pending: list[reads.Row]
    recent: list[reads.Row]
    per_minute: list[tuple[str, int, int]]
    rejecters_hour: list[tuple[str, int]]
    rejecters_day: list[tuple[str, int]]
    last_position: int


def overview(ui: UI, request: Request, viewer: Viewer) -> Response:
    now = datetime.now(UTC)
    window = request.query_params.get("shadow", shadowoverview.DEFAULT_WINDOW)
    if window not in shadowoverview.WINDOWS:
        raise BadRequest(f"shadow: the window is one of {', '.join(shadowoverview.WINDOWS)}.")
    every = viewer.sees_all()
    data = Overview(
        viewer.visible(reads.pending_pods(ui.engine)),
        viewer.visible(reads.recent_outcomes(ui.engine)),
        reads.outcomes_per_minute(ui.engine, now - timedelta(hours=1)) if every else [],
        reads.top_rejecters(ui.engine, now - timedelta(hours=1)) if every else [],
        reads.top_rejecters(ui.engine, now - timedelta(days=1)) if every else [],
        reads.last_position(ui.engine),
    )
    most = max((b + f for _, b, f in data.per_minute), default=0) or 1
    return page(
        request,
        "overview.html",
        title="Overview",
        o=data,
        chain=ui.chain.status,
        most=most,
        sh=shadowoverview.load_overview(ui.engine, window, now) if every else None,
        windows=shadowoverview.WINDOWS,
        window=window,
        asked_window="shadow" in request.query_params,
        integrity=page_integrity.of_rows(ui.reader, data.pending + data.recent, ui.chain.status),
    )


def node_list(ui: UI, request: Request, viewer: Viewer) -> Response:
    # Nodes are not namespaced: every reader sees them and how full they are (no pod).
    head = reads.last_position(ui.engine)
    with ui.folds.views(head) as views:
        counted = nodelist.count(views, head, ui.folds.warmed)
    listed = nodelist.load(ui.engine, counted)
    return page(request, "nodes.html", title=f"Nodes ({len(listed.rows)})", l=listed)


def node(ui: UI, request: Request, viewer: Viewer) -> Response:
    name = request.path_params["node"]
    since, _ = time_range(request.query_params.get("since", "1d"), "")
    found = node_page.load(ui.engine, name, since or datetime.min.replace(tzinfo=UTC))
    if found is None:
        raise NotFound(f"the event log has no event for node {name}.")
    found.placed = viewer.visible(found.placed)
    if not viewer.sees_all():
        found.rejections = []  # counted over every namespace's pods
    # The rejections are counted up to the head: a break anywhere before it counts.
    integrity = page_integrity.of_rows(
        ui.reader, found.rows(), ui.chain.status, reads.last_position(ui.engine)
    )
    return page(request, "node.html", title=f"Node {name}", n=found, integrity=integrity)


def cluster_at(ui: UI, request: Request, viewer: Viewer) -> Response:
    viewer.require_all("the cluster at a position shows every namespace's pods")
    position = int(request.path_params["position"])
    head = reads.last_position(ui.engine)
    if position > head:
        raise NotFound(f"the log's positions run from 0 to {head}.")
    with ui.folds.views(head) as views:
        if views is None:
            raise Busy(
                f"this page's fold of the log is at position {ui.folds.warmed:,} of "
                f"{head:,}; reload in a few seconds."
            )
        try:
            seen = cluster_as_seen(views, position, head)
        except FoldError as exc:
            raise BadRequest(f"no view at position {position}: {exc}.") from exc
    ns, _, pod_name = request.query_params.get("pod", "").rpartition("/")
    return page(
        request,
        "cluster.html",
        title=f"The cluster at position {position}",
        c=seen,
        pod=(ns, pod_name) if pod_name else None,
        integrity=page_integrity.of_fold(ui.chain.status, head),
    )


def search_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    query = search.parse(request.query_params)
    asked = search.asked(query)
    rows = viewer.visible(reads.search(ui.engine, query)) if asked else []
    shown = rows[: reads.PAGE_ROWS]
    return page(
        request,
        "search.html",
        title="Search",
        q=query,
        rows=shown,
        more=len(rows) > reads.PAGE_ROWS,
        integrity=page_integrity.of_rows(ui.reader, shown, ui.chain.status) if rows else None,
        asked=asked,
        params=dict(request.query_params),
    )
