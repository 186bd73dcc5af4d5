"""The what-if pages: the form, the replay it starts (in memory; it writes nothing),
and the replay's report. A replay covers every namespace's pods, so these pages are
shown to a reader who may see them all (403 otherwise)."""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from eventsched.config.types import ConfigError
from eventsched.ui import whatif
from eventsched.ui.access import Viewer
from eventsched.ui.state import UI
from eventsched.ui.web import BadRequest, Busy, NotFound, page, time_range

#: Largest what-if form accepted.
MAX_FORM_BYTES = 512 * 1024
#: Why a reader needs every namespace here.
EVERY_NAMESPACE = "a what-if replay reschedules every namespace's pods"


def what_if_form(
    ui: UI, request: Request, viewer: Viewer, error: str = "", status: int = 200
) -> Response:
    viewer.require_all(EVERY_NAMESPACE)
    return page(
        request,
        "whatif.html",
        status,
        title="What if",
        files=whatif.config_files(ui.settings.configs),
        error=error,
        form=getattr(request.state, "form", {}),
    )


async def what_if_start(ui: UI, request: Request, viewer: Viewer) -> Response:
    await asyncio.to_thread(viewer.require_all, EVERY_NAMESPACE)
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise BadRequest(f"the form is larger than {MAX_FORM_BYTES} bytes.")
    fields = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
    request.state.form = fields
    try:
        since, until = time_range(fields.get("since", ""), fields.get("until", ""))
        source, config = whatif.load_choice(
            ui.settings.configs, fields.get("config", ""), fields.get("yaml", "")
        )
    except ConfigError as exc:
        where = f"field {exc.field}" if exc.field else "the configuration"
        return what_if_form(ui, request, viewer, f"{exc.source}: {where}: {exc.problem}", 400)
    except BadRequest as exc:
        return what_if_form(ui, request, viewer, str(exc), 400)
    if ui.jobs.running() >= whatif.MAX_RUNNING:
        raise Busy(
            f"{whatif.MAX_RUNNING} what-if replays are running already; "
            "try again when one has finished."
        )
    job = await asyncio.to_thread(ui.jobs.start, source, config, since, until)
    return RedirectResponse(f"/what-if/{job.id}", status_code=303)


def what_if_job(ui: UI, request: Request, viewer: Viewer) -> Response:
    viewer.require_all(EVERY_NAMESPACE)
    job = ui.jobs.get(request.path_params["job"])
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
