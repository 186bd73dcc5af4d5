"""Record kube-scheduler v1.28's answers to the preemption scenarios (run by hand).

    python -m tests.differential.preemption.record [--case SLUG ...] [--kube-bin DIR]

One etcd + kube-apiserver and one kube-scheduler (the default profile, DefaultPreemption
enabled, -v=10) serve the whole run; each scenario is set up, its pending pods scheduled
in order and read, and torn down (recorder.py). Writes answers.json next to this file.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from contextlib import contextmanager

from eventsched.benchmarks.kubebinaries import KubeBinaries
from tests.differential.preemption.cases import ANSWERS, all_cases
from tests.differential.preemption.recorder import PreemptionRecorder
from tests.differential.record import (
    DEFAULT_BIN,
    recording,
    scheduler_binaries,
    scheduler_config,
)
from tests.differential.scenario import dump_family


@contextmanager
def preemption_recording(binaries: KubeBinaries, log_name: str) -> Iterator[PreemptionRecorder]:
    """A control plane and kube-scheduler with its default profile, DefaultPreemption
    enabled, and the preemption recorder on them."""
    with recording(
        binaries,
        lambda path, kubeconfig: scheduler_config(path, kubeconfig, [], True),
        log_name,
        PreemptionRecorder,
    ) as recorder:
        yield recorder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential.preemption.record")
    parser.add_argument("--case", action="append", help="only these slugs (no file written)")
    parser.add_argument("--kube-bin", default=DEFAULT_BIN)
    args = parser.parse_args(argv)
    cases = all_cases()
    if args.case:
        cases = [c for c in cases if c["id"].split("/", 1)[1] in args.case]
    found = scheduler_binaries(args.kube_bin)
    if found is None:
        return 2
    binaries, version = found
    started = time.monotonic()
    recorded = []
    with preemption_recording(binaries, "kube-scheduler-preemption.log") as recorder:
        for s in cases:
            recorded.append(recorder.record_or_report(s))
            summary = [
                f"{a['pod']}: {a['node'] or a['message']} victims={a['victims']}"
                for a in recorded[-1]["answer"] or []
            ]
            print(f"{s['id']}: {summary or recorded[-1].get('error')}", flush=True)
        if args.case:
            print(f"(kube-scheduler's log: {recorder.log.path})")
    document = {
        "family": "preemption",
        "kubeScheduler": version,
        "profile": "default-scheduler: kube-scheduler's v1 default plugins, DefaultPreemption enabled",
        "preemption": True,
        "scenarios": recorded,
    }
    if not args.case:
        ANSWERS.write_text(dump_family(document))
    else:
        print(dump_family(document))
    print(f"{len(recorded)} scenarios in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
