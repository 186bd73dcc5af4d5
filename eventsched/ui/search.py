"""The search form: its fields, read from the query string into a SearchQuery."""

from __future__ import annotations

from collections.abc import Mapping

from eventsched.ui.reads import SearchQuery
from eventsched.ui.web import BadRequest, time_range

#: Pages past this are refused: OFFSET reads every row it skips.
MAX_PAGE = 1000


def parse(params: Mapping[str, str]) -> SearchQuery:
    pod = params.get("pod", "").strip()
    namespace, _, name = pod.rpartition("/") if "/" in pod else ("", "", pod)
    since, until = time_range(params.get("since", ""), params.get("until", ""))
    text = params.get("page", "1").strip() or "1"
    if not text.isdigit() or not 1 <= int(text) <= MAX_PAGE:
        raise BadRequest(f"page: must be a whole number from 1 to {MAX_PAGE}, not {text!r}.")
    return SearchQuery(
        namespace=namespace.strip(),
        name=name.strip(),
        uid=params.get("uid", "").strip(),
        node=params.get("node", "").strip(),
        plugin=params.get("plugin", "").strip(),
        since=since,
        until=until,
        page=int(text),
    )


def asked(query: SearchQuery) -> bool:
    """Whether any field was filled (an empty form lists nothing)."""
    return any(
        (query.namespace, query.name, query.uid, query.node, query.plugin, query.since, query.until)
    )
