"""`eventsched bench`: run the scheduling benchmark under benchmarks/."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from eventsched.cli.database import resolve_url
from eventsched.cli.progress import progress_bar


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="measure scheduling throughput (pods/s) on a generated cluster",
        description="Prints '<N> pods/s' plus events/s and log bytes per pod (with --replay, "
        "also how fast that log replays). Without --db (or EVENTSCHED_DATABASE_URL) a fresh "
        "SQLite file in a temporary directory is used.",
    )
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--pods", type=int, default=5000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--replay",
        action="store_true",
        help="then replay the log the run wrote and print decisions/s and events/s folded "
        "(adds about 60%% to the time of a run; exit 1 if an attempt does not reproduce)",
    )
    p.add_argument(
        "--restart-events",
        type=int,
        metavar="N",
        help="instead: grow a log of N events (copies of a real run, spread over --days) and "
        "measure how long a restart takes to rebuild the scheduler's state from it "
        "(grows an empty log, about 25 minutes for 10,000,000 on PostgreSQL here; a log that "
        "already holds N events, as an earlier run left it, is measured again as it is)",
    )
    p.add_argument("--days", type=int, default=30, help="history the --restart-events log spans")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def load_benchmark(name: str = "scheduling") -> ModuleType:
    """benchmarks/ of a checkout, else the copy shipped inside the wheel."""
    package = Path(__file__).resolve().parent.parent
    for folder in (package / "_benchmarks", package.parent / "benchmarks"):
        path = folder / f"{name}.py"
        if path.is_file():
            spec = importlib.util.spec_from_file_location(f"eventsched_bench_{name}", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # dataclasses look their module up there
            spec.loader.exec_module(module)
            return module
    raise FileNotFoundError(f"benchmarks/{name}.py")


def run(args: argparse.Namespace) -> int:
    benchmark = load_benchmark()
    with tempfile.TemporaryDirectory(prefix="eventsched-bench-") as tmp:
        given = args.db or os.environ.get("EVENTSCHED_DATABASE_URL")
        url = resolve_url(given) if given else f"sqlite:///{tmp}/bench.db"
        if args.restart_events:
            return run_restart(args, url)
        with progress_bar(args.pods, "bench") as bar:

            def progress(done: int) -> None:
                # update() redraws at most every 0.1 s; a refresh per pod (0.2 ms on a
                # terminal) would be counted in the pods/s measured.
                bar.update(done - bar.n)

            result = benchmark.run(args.nodes, args.pods, url, seed=args.seed, on_progress=progress)
        if args.replay:
            with progress_bar(0, "replaying", unit="event") as bar:

                def replaying(position: int, last: int) -> None:
                    bar.total = last
                    bar.update(position - bar.n)  # redraws at most every 0.1 s

                result.replay = benchmark.measure_replay(url, on_progress=replaying)
    print(json.dumps(result.to_dict()) if args.json else result.line())
    return 0 if result.replay is None or result.replay.ok else 1


def run_restart(args: argparse.Namespace, url: str) -> int:
    benchmark = load_benchmark("restart")
    with progress_bar(args.restart_events, "growing the log", unit="event") as bar:
        result = benchmark.run(
            url, args.restart_events, days=args.days, on_progress=lambda n: bar.update(n - bar.n)
        )
    print(json.dumps(result.to_dict()) if args.json else result.line())
    return 0
