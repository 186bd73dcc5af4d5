"""Record kube-scheduler v1.28's answers to the preemption scenarios (run by hand).

    python -m tests.differential.preemption.record [--case SLUG ...] [--kube-bin DIR]

One etcd + kube-apiserver and one kube-scheduler (the default profile, DefaultPreemption
enabled, -v=10) serve the whole run; each scenario is set up, its pending pods scheduled
in order and read, and torn down (recorder.py). Writes answers.json next to this file.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from benchmarks.controlplane import ControlPlane, free_port, kube_binaries, spawn_logged
from tests.differential.kubeapi import KubeApi, wait_for
from tests.differential.kubelog import LogReader
from tests.differential.preemption.cases import ANSWERS, all_cases
from tests.differential.preemption.recorder import PreemptionRecorder
from tests.differential.record import DEFAULT_BIN, _answers, scheduler_config
from tests.differential.scenario import dump_family


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential.preemption.record")
    parser.add_argument("--case", action="append", help="only these slugs (no file written)")
    parser.add_argument("--kube-bin", default=DEFAULT_BIN)
    args = parser.parse_args(argv)
    cases = all_cases()
    if args.case:
        cases = [c for c in cases if c["id"].split("/", 1)[1] in args.case]
    binaries = kube_binaries(args.kube_bin)
    if binaries is None or binaries.scheduler is None:
        print(f"no kube-apiserver/kube-scheduler in {args.kube_bin}, or no etcd", file=sys.stderr)
        return 2
    version = subprocess.run(
        [str(binaries.scheduler), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    started = time.monotonic()
    recorded = []
    with ControlPlane(binaries) as cp:
        config = scheduler_config(cp.workdir / "scheduler.json", cp.kubeconfig(), [], True)
        port = free_port()
        log_path = cp.workdir / "kube-scheduler-preemption.log"
        proc = spawn_logged(
            [
                str(binaries.scheduler),
                f"--config={config}",
                f"--secure-port={port}",
                "--bind-address=127.0.0.1",
                f"--client-ca-file={cp.client_ca_file}",
                f"--requestheader-client-ca-file={cp.client_ca_file}",
                "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
                "--authentication-skip-lookup",
                "-v=10",
            ],
            log_path,
        )
        try:
            metrics_url = f"https://127.0.0.1:{port}/metrics"
            wait_for(lambda: _answers(metrics_url), 60, "kube-scheduler's metrics", every=0.2)
            recorder = PreemptionRecorder(
                cp,
                KubeApi(cp.url, cp.admin_token, str(cp.ca_file)),
                LogReader(log_path),
                metrics_url,
            )
            for s in cases:
                recorded.append(recorder.record_or_report(s))
                summary = [
                    f"{a['pod']}: {a['node'] or a['message']} victims={a['victims']}"
                    for a in recorded[-1]["answer"] or []
                ]
                print(f"{s['id']}: {summary or recorded[-1].get('error')}", flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
            if args.case:
                print(f"(kube-scheduler's log: {log_path})")
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
