"""Record scheduler-plugins v0.28.9's answers to the scenarios in cases.py (run by hand).

    python -m tests.differential.schedplugins.record [--case SLUG ... [--merge]] [--kube-bin DIR]
        [--plugins-bin DIR]

One etcd + kube-apiserver (from --kube-bin, /work/shared/kube by default) with
eventsched's CRDs (deploy/crds) applied serves the whole run; each scenario gets a
scheduler-plugins scheduler of its own (`kube-scheduler-plugins[.xz]` from --plugins-bin,
../shared/scheduler-plugins), run with the chart's profile (profile.py, -v=10). Each scenario is recorded as
the preemption suite records its own (preemption/recorder.py: pending pods one after
another, the first FailedScheduling message, nominations, victims and their Events, the
final placements). Writes answers.json next to this file (--case prints instead).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.kubebinaries import find_binary
from tests.differential.kubeapi import KubeApi, wait_for
from tests.differential.kubelog import LogReader
from tests.differential.preemption.recorder import PreemptionRecorder
from tests.differential.record import DEFAULT_BIN, kube_scheduler, scheduler_binaries
from tests.differential.scenario import dump_family
from tests.differential.schedplugins.cases import ANSWERS, all_cases
from tests.differential.schedplugins.profile import CHART_CONFIG, recorder_config

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_PLUGINS_BIN = str(ROOT.parent / "shared" / "scheduler-plugins")
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
#: After the setup and after each pending pod is decided, before the next is created.
#: v0.28.9's CapacityScheduling learns a namespace's quota in its own pod-informer
#: handler, which runs apart from the scheduler's cache and queue handlers: without a
#: pause, a pod's PreFilter may run before that handler has seen the pods placed before it
#: (upstream's race, not a rule; the recorder's cache and sync-probe waits do not cover it).
SETTLE_SECONDS = 1.0


class SettlingRecorder(PreemptionRecorder):
    """Pauses after the setup and after each pending pod (SETTLE_SECONDS)."""

    def setup(self, s: dict[str, Any]) -> None:
        super().setup(s)
        time.sleep(SETTLE_SECONDS)

    def run_pending(
        self, manifest: dict[str, Any], spaces: list[str], hold: bool
    ) -> dict[str, Any]:
        answer = super().run_pending(manifest, spaces, hold)
        time.sleep(SETTLE_SECONDS)
        return answer


def apply_crds(api: KubeApi, plugins_bin: Path) -> None:
    """deploy/crds/*.yaml, and the reference's PodGroup CRD (its Coscheduling waits for
    PodGroups to sync; eventsched's reads labels), each waited for until Established."""
    podgroups = plugins_bin / "crds" / "scheduling.x-k8s.io_podgroups.yaml"
    for file in [*sorted((ROOT / "deploy" / "crds").glob("*.yaml")), podgroups]:
        crd = yaml.safe_load(file.read_text())
        if crd.get("kind") != "CustomResourceDefinition":
            continue
        status, body = api.request("POST", CRD_PATH, crd)
        if status not in (201, 409):
            raise RuntimeError(f"{file.name}: HTTP {status}: {body}")
        path = f"{CRD_PATH}/{crd['metadata']['name']}"

        def established(path: str = path) -> bool:
            conditions = (api.call("GET", path).get("status") or {}).get("conditions") or []
            return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

        wait_for(established, 30, f"{file.name} established")


def merged(document: dict[str, Any], cases: list[dict[str, Any]]) -> dict[str, Any]:
    """answers.json with `document`'s scenarios in place of those of the same id, in the
    order of `cases` (scenarios of cases no longer there are dropped)."""
    known = {s["id"]: s for s in json.loads(ANSWERS.read_text())["scenarios"]}
    known.update({s["id"]: s for s in document["scenarios"]})
    scenarios = [known[c["id"]] for c in cases if c["id"] in known]
    return {**document, "scenarios": scenarios}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential.schedplugins.record")
    parser.add_argument("--case", action="append", help="only these slugs (no file written)")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="with --case: replace those scenarios in answers.json, keep the others",
    )
    parser.add_argument("--kube-bin", default=DEFAULT_BIN)
    parser.add_argument("--plugins-bin", default=DEFAULT_PLUGINS_BIN)
    args = parser.parse_args(argv)
    cases = all_cases()
    if args.case:
        cases = [c for c in cases if c["id"].split("/", 1)[1] in args.case]
    found = scheduler_binaries(args.kube_bin)
    plugins = find_binary(Path(args.plugins_bin), "kube-scheduler-plugins")
    if found is None or plugins is None:
        print(f"no kube-scheduler-plugins in {args.plugins_bin}", file=sys.stderr)
        return 2
    binaries = dataclasses.replace(found[0], scheduler=plugins)
    version = subprocess.run(
        [str(plugins), "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    started = time.monotonic()
    recorded = []
    with ControlPlane(binaries) as cp:
        api = KubeApi(cp.url, cp.admin_token, str(cp.ca_file))
        apply_crds(api, Path(args.plugins_bin))
        log_path = cp.workdir / "kube-scheduler-plugins.log"
        for s in cases:
            # A scheduler of its own per scenario: v0.28.9 keeps what it read of every
            # namespace's quota until it restarts, so one scenario's quotas would count in
            # the next one's sum of mins. Its configuration carries the case's plugin args.
            config = recorder_config(
                cp.workdir / "scheduler-plugins.yaml", cp.kubeconfig(), s.get("pluginArgs")
            )
            with kube_scheduler(cp, binaries, config, log_path) as metrics_url:
                recorder = SettlingRecorder(cp, api, LogReader(log_path), metrics_url)
                recorded.append(recorder.record_or_report(s))
            summary = [
                f"{a['pod']}: {a['node'] or a['message']} victims={a['victims']}"
                for a in recorded[-1]["answer"] or []
            ]
            print(f"{s['id']}: {summary or recorded[-1].get('error')}", flush=True)
        if args.case:
            kept = Path("/tmp/kube-scheduler-plugins.log")
            kept.write_bytes(log_path.read_bytes())
            print(f"(the scheduler's log: {kept})")
    document = {
        "family": "schedplugins",
        "scheduler": f"scheduler-plugins v0.28.9 ({version or 'kube-scheduler-plugins'})",
        "profile": CHART_CONFIG,
        "scenarios": recorded,
    }
    if args.case and args.merge:
        ANSWERS.write_text(dump_family(merged(document, all_cases())))
    elif args.case:
        print(dump_family(document))
    else:
        ANSWERS.write_text(dump_family(document))
    print(f"{len(recorded)} scenarios in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
