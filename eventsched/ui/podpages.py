"""A pod's pages (its summary, its attempts, why not a node) and its gang's: each
shown only to a reader who may get pods in its namespace (403 otherwise)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from eventsched.audit import PodExplanation, explain_full
from eventsched.audit.explainnumbers import explain_numbers
from eventsched.plugins import full_registry
from eventsched.plugins.capacityscheduling.minmax import notes_of
from eventsched.ui import gang as gang_page
from eventsched.ui import integrity as page_integrity
from eventsched.ui import pod, reads, shadow
from eventsched.ui.access import Viewer
from eventsched.ui.state import UI
from eventsched.ui.web import BadRequest, NotFound, page

#: The attempts page's attempts with numbers (each folds the log to its own position).
NUMBERED_ATTEMPTS = 5


def pod_summary(ui: UI, request: Request, viewer: Viewer) -> Response:
    explanation = pod.load(ui.reader, *_pod(request, viewer))
    folding = _numbers(ui, explanation, 1)
    decided = shadow.load_pod(ui.engine, explanation)
    shadow.mark_attempts(explanation, decided)
    return page(
        request,
        "pod.html",
        title=f"{explanation.namespace}/{explanation.name}",
        s=pod.summarize(explanation, decided),
        folding=folding,
        verdicts=len(decided.verdicts),
        nodes=reads.known_nodes(ui.engine),
        integrity=page_integrity.of_pod(explanation, ui.chain.status),
    )


def pod_attempts(ui: UI, request: Request, viewer: Viewer) -> Response:
    explanation = pod.load(ui.reader, *_pod(request, viewer))
    if request.query_params.get("full") == "1":
        # explain --full: every feasible node's scores, by replaying the log.
        explain_full(ui.reader, full_registry(), explanation)
    folding = _numbers(ui, explanation, NUMBERED_ATTEMPTS)
    decided = shadow.load_pod(ui.engine, explanation)
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
        nodes=reads.known_nodes(ui.engine),
        integrity=page_integrity.of_pod(explanation, ui.chain.status),
    )


def pod_why_not(ui: UI, request: Request, viewer: Viewer) -> Response:
    explanation = pod.load(ui.reader, *_pod(request, viewer))
    shadow.mark_attempts(explanation, shadow.load_pod(ui.engine, explanation))
    node = request.query_params.get("node", "").strip()
    if not node:
        raise BadRequest("node: name the node to ask about (?node=NAME).")
    attempt = request.query_params.get("attempt", "").strip()
    try:
        answer = pod.why_not(ui.reader, explanation, attempt, node)
    except LookupError as exc:
        raise NotFound(str(exc)) from exc
    return page(
        request,
        "whynot.html",
        title=f"Why not {node}?",
        e=explanation,
        w=answer,
        integrity=page_integrity.of_pod(explanation, ui.chain.status),
    )


def gang(ui: UI, request: Request, viewer: Viewer) -> Response:
    found = gang_page.load(ui.reader, *_pod(request, viewer))
    members = [(m.namespace, m.name) for m in found.members]
    integrity = page_integrity.of_pods(ui.reader, members, ui.chain.status)
    return page(request, "gang.html", title=f"Gang {found.key}", g=found, integrity=integrity)


def _numbers(ui: UI, explanation: PodExplanation, attempts: int) -> str:
    """The numbers of the `attempts` latest attempts and the queue, from the shared fold;
    or, while its first fold is short of the head, why there are none yet."""
    head = reads.last_position(ui.engine)
    with ui.folds.views(head) as views:
        if views is None:
            return (
                f"The numbers behind the reasons and the queue appear once this page's "
                f"fold of the log reaches position {head:,} (it is at "
                f"{ui.folds.warmed:,}); reload in a few seconds."
            )
        explain_numbers(explanation, views, full_registry(), head, last=attempts)
    return explanation.numbers_unavailable


def _pod(request: Request, viewer: Viewer) -> tuple[str, str]:
    """The namespace and name in the path, once the reader may see that namespace."""
    namespace = request.path_params["namespace"]
    viewer.require(namespace)
    return namespace, request.path_params["name"]
