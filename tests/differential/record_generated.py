"""Record kube-scheduler v1.28's answers to the breadth suite (`generated.py`), resumably.

    python -m tests.differential.record_generated [--start S] [--count N] [--batch B]

Scenarios gen/S .. gen/N-1 that have no line in answers/generated/chunk-*.jsonl yet (or
whose line's digest no longer matches the generator) are recorded in order, B per control
plane (one etcd, kube-apiserver and kube-scheduler serve a batch; each batch starts a
fresh one, so the -v=10 log stays small). Each answer is appended to its chunk file as soon
as it is read, so stopping the command (or losing the machine) loses at most the scenario
under way; running it again goes on from there (a scenario recorded again is appended
too: the last line of an id counts). Two runs over disjoint ranges (--start, --count) may
record side by side: each has its own control plane and chunk files. Scenarios from
gen/4000 on (generated_preemption.py) are recorded in batches of their own by the
preemption recorder, kube-scheduler running its default profile with DefaultPreemption
(their answer: each pending pod's answer and `final`). No ablations are
recorded: every plugin of kube-scheduler's default profile is in eventsched's
`default_profile()`, so there is nothing to explain away (record.py records them for the
families).

With --kubernetes-version V (1.34, 1.37): that version's reference binaries, into
answers/v<V>/generated/; only the scenarios before gen/4000 (the preemption recorder reads
v1.28's preemption messages and Events).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

from eventsched.benchmarks.kubebinaries import KubeBinaries
from tests.differential.generated import (
    COUNT,
    DIRECTORY,
    answer_line,
    chunk_of,
    chunk_path,
    digest,
    generate_one,
    recorded,
    scheduler_document,
)
from tests.differential.generated_preemption import PREEMPTION_START, is_preemption
from tests.differential.preemption.record import preemption_recording
from tests.differential.record import recording, version_binaries
from tests.differential.recorder import Recorder
from tests.differential.scenario import LEGACY_VERSION, UPSTREAM_DEFAULTS, answers_dir


def pending_scenarios(start: int, count: int, directory: Path) -> list[dict[str, Any]]:
    """gen/start .. gen/count-1 without an up-to-date recorded line."""
    done = recorded(directory)
    out = []
    for index in range(start, count):
        s = generate_one(index)
        line = done.get(s["id"])
        if line is None or line["digest"] != digest(s) or line.get("answer") is None:
            out.append(s)
    return out


def write_config(path: Path, kubeconfig: Path) -> Path:
    document = scheduler_document()
    document["clientConnection"] = {"kubeconfig": str(kubeconfig), "qps": 500, "burst": 1000}
    document["leaderElection"] = {"leaderElect": False}
    path.write_text(json.dumps(document, indent=2) + "\n")  # JSON is YAML
    return path


def record_batch(binaries: KubeBinaries, batch: list[dict[str, Any]], directory: Path) -> None:
    with recording(binaries, write_config, "kube-scheduler-generated.log", Recorder) as recorder:
        for s in batch:
            done = recorder.record_or_report(s, ablate=False)
            answer = done["answer"]
            _append(s, answer, str(done.get("error") or ""), directory)
            shown = (answer or {}).get("node") or (answer or {}).get("message")
            print(f"{s['id']}: {shown or done.get('error')}", flush=True)


def record_preemption_batch(
    binaries: KubeBinaries, batch: list[dict[str, Any]], directory: Path
) -> None:
    """Preemption scenarios (gen/PREEMPTION_START on): kube-scheduler's default profile with
    DefaultPreemption, the preemption recorder; the answer is its pods' answers and
    `final`."""
    with preemption_recording(binaries, "kube-scheduler-generated-preemption.log") as recorder:
        for s in batch:
            done = recorder.record_or_report(s)
            answer = None
            if done.get("answer") is not None:
                answer = {"answer": done["answer"], "final": done["final"]}
            _append(s, answer, str(done.get("error") or ""), directory)
            shown = [
                f"{a['pod']}: {'gated' if 'gated' in a else a.get('node') or a.get('nominatedNodeName')}"
                f"{' victims=' + ','.join(a['victims']) if a.get('victims') else ''}"
                for a in done.get("answer") or []
            ]
            print(f"{s['id']}: {'; '.join(shown) or done.get('error')}", flush=True)


def _append(s: dict[str, Any], answer: Any, error: str, directory: Path) -> None:
    index = int(s["id"].split("/")[1])
    with chunk_path(chunk_of(index), directory).open("a") as out:
        out.write(answer_line(s, answer, error) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential.record_generated")
    parser.add_argument("--count", type=int, default=COUNT, help="record gen/0 .. gen/N-1")
    parser.add_argument("--start", type=int, default=0, help="begin at gen/START")
    parser.add_argument("--batch", type=int, default=250, help="scenarios per control plane")
    parser.add_argument("--kube-bin", default=None, help="default: /work/shared/kube (v1.28)")
    parser.add_argument(
        "--kubernetes-version",
        choices=sorted(UPSTREAM_DEFAULTS),
        default=None,
        help="record this version's reference kube-scheduler into answers/v<V>/generated/",
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C: the control plane's context stops etcd, kube-apiserver
    # and kube-scheduler instead of leaving them running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    version = args.kubernetes_version or LEGACY_VERSION
    if version != LEGACY_VERSION and args.count > PREEMPTION_START:
        print(
            f"at {version}, gen/{PREEMPTION_START} on (preemption) are not recorded: "
            f"give --count {PREEMPTION_START} or less",
            file=sys.stderr,
        )
        return 2
    found = version_binaries(args.kubernetes_version, args.kube_bin)
    if found is None:
        return 2
    binaries, _version = found
    if args.out is None:
        args.out = DIRECTORY if version == LEGACY_VERSION else answers_dir(version) / "generated"
    args.out.mkdir(parents=True, exist_ok=True)
    todo = pending_scenarios(args.start, args.count, args.out)
    print(f"{len(todo)} of gen/{args.start}..gen/{args.count - 1} to record", flush=True)
    started = time.monotonic()
    for first in range(0, len(todo), args.batch):
        batch = todo[first : first + args.batch]
        plain = [s for s in batch if not is_preemption(int(s["id"].split("/")[1]))]
        if plain:
            record_batch(binaries, plain, args.out)
        if len(plain) < len(batch):
            record_preemption_batch(binaries, batch[len(plain) :], args.out)
        print(
            f"recorded {first + len(todo[first : first + args.batch])} in "
            f"{time.monotonic() - started:.0f} s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
