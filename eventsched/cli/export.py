"""`eventsched export`: a slice of the log in one file, for explain, replay, query and ui elsewhere.

The driver: choose the batches (events.export), fold the base the slice starts
from as `db prune` folds its base (audit.retention.fold_until), copy the batches
into a new SQLite file (events.export), and say what was written and the hashes
that prove it matches the source.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from eventsched.audit.retention import fold_until
from eventsched.cli.commands import summary
from eventsched.cli.database import open_reader
from eventsched.cli.progress import progress_bar
from eventsched.cli.timebounds import FORMS, time_parser
from eventsched.events import LogBase, LogReader, read_base
from eventsched.events.export import (
    Copied,
    SliceFile,
    batches_of_pod,
    batches_recorded,
    copy_slice,
    recorded_span,
)
from eventsched.events.slices import SliceRange


class ExportRefused(ValueError):
    """Input `export` cannot use; the message is one line naming the option and the fix."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help=summary("export"),
        description="Write a slice of the event log to FILE, an SQLite event log of its own: "
        "whole batches (a batch's hash covers all of its events) from the first to the last "
        "one selected, every batch between them (replay needs the cluster's changes in "
        "between), the view and projections folded up to the first one, and where it came "
        "from. explain, replay, query, ui and sticky list open it with --db FILE; replay "
        "verifies it from the hash of the batch before it to its last batch's hash.",
    )
    p.add_argument(
        "--pod",
        metavar="NAMESPACE/NAME",
        help="the batches from the first to the last holding this pod's events",
    )
    p.add_argument(
        "--since",
        type=time_parser("--since"),
        metavar="TIME",
        help=f"the batches recorded at or after TIME: {FORMS}",
    )
    p.add_argument(
        "--until", type=time_parser("--until"), metavar="TIME", help="... and at or before TIME"
    )
    p.add_argument("--out", required=True, type=Path, metavar="FILE", help="the slice's file")
    p.add_argument("--force", action="store_true", help="replace FILE if it exists")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


@dataclass(frozen=True, slots=True)
class ExportRequest:
    """What to export: a pod's batches, or those recorded in a time range."""

    pod: tuple[str, str] | None
    since: datetime | None
    until: datetime | None

    def describe(self) -> str:
        if self.pod is not None:
            return f"pod {self.pod[0]}/{self.pod[1]}"
        since = "the beginning" if self.since is None else _when(self.since)
        until = "the end" if self.until is None else _when(self.until)
        return f"batches recorded from {since} to {until}"


def request_of(args: argparse.Namespace) -> ExportRequest:
    """--pod, or --since/--until (one or both), checked against each other."""
    if args.pod is not None and (args.since is not None or args.until is not None):
        raise ExportRefused("--pod and --since/--until: give one of the two selections")
    if args.pod is not None:
        namespace, _, name = args.pod.rpartition("/")
        if not name:
            raise ExportRefused(f"--pod {args.pod!r}: give NAMESPACE/NAME (NAME alone: default)")
        return ExportRequest((namespace or "default", name), None, None)
    if args.since is None and args.until is None:
        raise ExportRefused("give --pod NAMESPACE/NAME, or --since TIME and/or --until TIME")
    if args.since is not None and args.until is not None and args.until < args.since:
        raise ExportRefused(
            f"--until {_when(args.until)} is before --since {_when(args.since)}: swap them"
        )
    return ExportRequest(None, args.since, args.until)


def check_out(out: Path, *, force: bool) -> None:
    if out.is_dir():
        raise ExportRefused(f"--out {out}: is a directory; give the path of the file to write")
    if out.exists() and not force:
        raise ExportRefused(
            f"--out {out}: exists; choose another path, or add --force to replace it"
        )


def run(args: argparse.Namespace) -> int:
    try:
        request = request_of(args)
        check_out(args.out, force=args.force)
        reader = open_reader(args.db)
        try:
            copied = export(reader, request, args.out, force=args.force)
        finally:
            reader.close()
    except ExportRefused as exc:
        print(f"eventsched: error: {exc}", file=sys.stderr)
        return 2
    origin = copied.origin
    if args.json:
        out = {"out": str(args.out), "slice": origin.to_state(), "chain": _chain(copied)}
        print(json.dumps(out, indent=2))
    else:
        print(render(copied, args.out))
    return 0 if copied.chain.ok else 1


def export(reader: LogReader, request: ExportRequest, out: Path, *, force: bool) -> Copied:
    """Choose, fold and copy: the slice of `reader`'s log that `request` selects, in `out`."""
    _refuse_the_source(reader, out)
    chosen = choose(reader, request)
    try:
        target = SliceFile(out)
    except OSError as exc:
        raise ExportRefused(f"--out {out}: {exc.strerror}; choose a writable place") from exc
    with target:
        since = read_base(reader) or LogBase.genesis()
        anchor = chosen.anchor.position
        with progress_bar(anchor - since.position, "folding", unit="event") as bar:
            base = fold_until(reader, since, anchor, _advance(bar, since.position))
        with progress_bar(chosen.events, "copying", unit="event") as bar:
            copied = copy_slice(
                reader, target, chosen, base.state, request.describe(), _advance(bar, anchor)
            )
        try:
            target.finish(replace=force)
        except OSError as exc:
            raise ExportRefused(f"--out {out}: {exc.strerror}") from exc
    return copied


def choose(reader: LogReader, request: ExportRequest) -> SliceRange:
    """The batches `request` selects, or refused naming what the log holds instead."""
    if request.pod is not None:
        namespace, name = request.pod
        found = batches_of_pod(reader, namespace, name)
        if found is None:
            raise ExportRefused(
                f"--pod {namespace}/{name}: the event log at {reader.url} has no event for "
                "that pod; check the name (eventsched ui's search lists pods)"
            )
        return found
    found = batches_recorded(reader, request.since, request.until)
    if found is None:
        span = recorded_span(reader)
        holds = (
            "no batch at all"
            if span is None
            else f"batches recorded from {_when(span.first)} to {_when(span.last)}"
        )
        raise ExportRefused(
            f"--since/--until: the event log at {reader.url} recorded no batch "
            f"{request.describe().removeprefix('batches recorded ')}; it holds {holds}"
        )
    return found


def _refuse_the_source(reader: LogReader, out: Path) -> None:
    url = make_url(reader.engine.url)
    if url.get_backend_name() != "sqlite" or not url.database:
        return
    if Path(url.database).resolve() == out.resolve():
        raise ExportRefused(f"--out {out}: is the event log being exported; choose another path")


def _advance(bar: Any, offset: int) -> Callable[[int], None]:
    """Moves `bar` to a log position (counted from `offset`); tqdm redraws at most every 0.1 s."""

    def advance(position: int) -> None:
        bar.update(position - offset - bar.n)

    return advance


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def _chain(copied: Copied) -> dict[str, Any]:
    chain = copied.chain
    return {"ok": chain.ok, "firstBrokenBatch": chain.first_broken_batch, "detail": chain.detail}


def render(copied: Copied, out: Path) -> str:
    o, held = copied.origin, copied.origin.held
    head = o.source_head
    start = (
        f"after batch {held.anchor.batch}, whose hash is {held.anchor_hash}"
        if held.anchor.batch
        else "at the log's first batch"
    )
    lines = [
        f"exported {held.events} events in {held.batches} batches ({o.selection}) of "
        f"{o.source} to {out}",
        f"  batches {held.first_batch}..{held.last_batch}, positions {held.first_position}.."
        f"{held.last_position}; the source's head: batch {head.batch}, position {head.position}",
        f"  starts {start}",
        f"  ends at batch {held.last_batch}, whose hash is {held.last_hash}",
    ]
    if copied.chain.ok:
        lines.append("  hash chain: ok (every hash computed again as it was copied)")
    else:
        chain = copied.chain
        lines.append(
            f"  hash chain: BROKEN at batch {chain.first_broken_batch} in the source: "
            f"{chain.detail} (copied as it is)"
        )
    lines.append(f"open it with: eventsched replay --db {out} (or explain, query, ui)")
    return "\n".join(lines)
