"""What every page shares: the templates, their filters and links, bad-input errors."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from eventsched.audit.numbers import amount
from eventsched.ui.access import SCOPE_KEY

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"


class BadRequest(ValueError):
    """Input a page cannot use; the message is one sentence naming the field (400)."""


class NotFound(LookupError):
    """Nothing in the log under that name (404)."""


class Busy(RuntimeError):
    """Too much running already (429)."""


_DURATION = re.compile(r"(?:\d+(?:\.\d+)?[smhd])+", re.ASCII)
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])", re.ASCII)
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
TIME_FORMS = "a time such as 2026-11-23T10:00:00Z or a duration back from now such as 30m, 2h, 7d"


def parse_time(field: str, text: str, now: datetime | None = None) -> datetime | None:
    """A time-range field: RFC 3339 / ISO 8601 (UTC without an offset) or a duration back."""
    value = text.strip()
    if not value:
        return None
    if _DURATION.fullmatch(value):
        seconds = sum(float(n) * _UNIT[u] for n, u in _PART.findall(value))
        try:
            return (now or datetime.now(UTC)) - timedelta(seconds=seconds)
        except OverflowError:
            raise BadRequest(f"{field}: the duration {value!r} reaches before year 1.") from None
    try:
        moment = datetime.fromisoformat(value.upper())
    except ValueError:
        raise BadRequest(f"{field}: {value!r} is not {TIME_FORMS}.") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def time_range(since: str, until: str) -> tuple[datetime | None, datetime | None]:
    start, end = parse_time("since", since), parse_time("until", until)
    if start is not None and end is not None and end < start:
        raise BadRequest("until: the end of the time range is before its start.")
    return start, end


def pod_url(namespace: str, name: str, tail: str = "") -> str:
    return f"/pods/{quote(namespace or 'default', safe='')}/{quote(name, safe='')}{tail}"


def node_url(node: str) -> str:
    return f"/nodes/{quote(node, safe='')}"


def cluster_url(position: int, explanation: Any = None) -> str:
    """The page of the cluster as the scheduler saw it after `position` (for a pod's attempt)."""
    pod = f"{explanation.namespace}/{explanation.name}" if explanation is not None else ""
    return with_query(f"/cluster-at/{max(position, 0)}", pod=pod)


def gang_url(namespace: str, name: str) -> str:
    return f"/gangs/{quote(namespace, safe='')}/{quote(name, safe='')}"


def with_query(path: str, **params: Any) -> str:
    kept = {k: v for k, v in params.items() if v not in (None, "")}
    return path + ("?" + urlencode(kept) if kept else "")


def when(moment: Any) -> str:
    if isinstance(moment, datetime):
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(moment, str) and moment:
        try:
            return when(datetime.fromisoformat(moment))
        except ValueError:
            return moment
    return str(moment or "")


environment = Environment(
    loader=FileSystemLoader(str(TEMPLATES)),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
environment.filters["when"] = when
environment.globals.update(
    pod_url=pod_url,
    node_url=node_url,
    gang_url=gang_url,
    with_query=with_query,
    cluster_url=cluster_url,
    amount=amount,
)


def _sees(request: Request) -> Callable[[str], bool]:
    """Whether the request's reader may see a namespace's pods: a page naming another pod
    (a victim, a preemptor, a pod ahead in the queue) names it only then."""
    viewer = request.scope.get(SCOPE_KEY)
    return viewer.sees if viewer is not None else lambda namespace: False


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """A rendered template; `title` names the page in the browser's tab."""
    html = environment.get_template(template).render(
        request=request, path=request.url.path, sees=_sees(request), **context
    )
    return HTMLResponse(html, status_code=status)


def error_page(request: Request, status: int, title: str, message: str) -> HTMLResponse:
    return page(request, "error.html", status, title=title, message=message, code=status)
