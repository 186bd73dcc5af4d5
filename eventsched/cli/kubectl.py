"""`kubectl-eventsched`: eventsched as a kubectl plugin (`kubectl eventsched ...`).

kubectl runs an executable named `kubectl-eventsched` found on PATH for
`kubectl eventsched ARGS`; the package installs one. Two commands:

- `kubectl eventsched explain POD [-n NAMESPACE] [--db URL] [--full] [--json]`: `eventsched explain`.
- `kubectl eventsched open POD [-n NAMESPACE] [--ui-url URL]`: prints the pod's page of
  `eventsched ui` (base URL from --ui-url, else EVENTSCHED_UI_URL, else http://127.0.0.1:8090).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from eventsched.cli.arguments import Parser

DEFAULT_UI_URL = "http://127.0.0.1:8090"


def _pod(text: str, namespace: str | None) -> tuple[str, str]:
    ns, _, name = text.rpartition("/")
    return (ns or namespace or "default"), name


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="kubectl eventsched",
        description="eventsched as a kubectl plugin: explain a pod from the event log, or "
        "print its page on eventsched ui.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    explain = sub.add_parser("explain", help="why a pod landed where it did (eventsched explain)")
    opened = sub.add_parser("open", help="print the URL of a pod's page on eventsched ui")
    for p in (explain, opened):
        p.add_argument("pod", metavar="POD", help="NAME or NAMESPACE/NAME")
        p.add_argument("-n", "--namespace", help="the pod's namespace (default: default)")
    explain.add_argument("--db", metavar="URL", help="event log database (as eventsched --db)")
    explain.add_argument("--full", action="store_true", help="every node's scores, by replay")
    explain.add_argument("--json", action="store_true", help="machine-readable output")
    opened.add_argument(
        "--ui-url",
        metavar="URL",
        help=f"base URL of eventsched ui (default: $EVENTSCHED_UI_URL, else {DEFAULT_UI_URL})",
    )
    return parser


def pod_page(base: str, namespace: str, name: str) -> str:
    from urllib.parse import quote

    return f"{base.rstrip('/')}/pods/{quote(namespace, safe='')}/{quote(name, safe='')}"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    namespace, name = _pod(args.pod, args.namespace)
    if not name:
        print("kubectl eventsched: error: give the pod as NAME or NAMESPACE/NAME", file=sys.stderr)
        return 2
    if args.command == "open":
        base = args.ui_url or os.environ.get("EVENTSCHED_UI_URL") or DEFAULT_UI_URL
        print(pod_page(base, namespace, name))
        return 0
    from eventsched.cli.main import main as eventsched

    forwarded = ["explain", f"{namespace}/{name}"]
    forwarded += ["--full"] if args.full else []
    forwarded += ["--json"] if args.json else []
    forwarded += ["--db", args.db] if args.db else []
    return eventsched(forwarded)


if __name__ == "__main__":
    sys.exit(main())
