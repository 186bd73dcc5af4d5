"""Write the docs' sample outputs from real runs: `python docs/samples/generate.py`.

Each sample is one or more shell lines (`eventsched` commands on the
examples, `sqlite3`, `kill`) run in a temporary directory holding a fresh
SQLite log `eventsched.db`, exactly as the docs show them; the NetworkTraffic
sample also gets a real Prometheus (tests/promharness.py), the shadow's the real
kube-apiserver and kube-scheduler (shadow_run.py; skipped without $EVENTSCHED_KUBE_BIN). Name samples to
make only those. The cookbook's SQL is read from `queries/`, as the page and
tests/cli/test_query.py read it. With `--check` nothing is written: the samples are made again and compared with
the ones in the repository after masking what changes from run to run
(times, uids, counts, rates); a test runs it, so a sample cannot drift from
what the commands print.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# The test suite's helpers: the cookbook's SQL files, a real Prometheus for NetworkTraffic.
sys.path.insert(0, str(ROOT))
from tests.cookbook import cookbook  # noqa: E402

#: Where the Kubernetes binaries are, for the shadow's samples (benchmarks/kubebinaries.py).
KUBE_BIN = "EVENTSCHED_KUBE_BIN"
#: The window NetworkTraffic's sample asks Prometheus about, in seconds.
PROMETHEUS_WINDOW = 5

Compare = Literal["text", "header", "rows"]


@dataclass(frozen=True)
class Sample:
    """Shell lines run in order in the log's directory, and what they printed.

    `transcript` shows each line as `$ line` before its output (a console session);
    otherwise the sample is the output alone, for a page that writes the command.
    `compare` is how `--check` compares it: the masked `text`, its `header` line only
    (rows depend on the run: ties broken at random, waiting times), or a table's
    `rows` in any order (counts that tie in one run reorder rows).
    """

    lines: tuple[str, ...]
    transcript: bool = True
    stderr: bool = False
    compare: Compare = "text"


@dataclass(frozen=True)
class Log:
    """Samples made in order on one fresh SQLite log, after `eventsched db upgrade` and
    `setup` (run, not shown)."""

    samples: dict[str, Sample]
    setup: tuple[str, ...] = ()
    #: The log's directory gets `networktraffic.yaml`: the example profile pointed at a
    #: real Prometheus that scrapes an exporter with known traffic per node.
    prometheus: bool = False
    #: The setup runs the real kube-apiserver and kube-scheduler ($EVENTSCHED_KUBE_BIN, kept
    #: in its environment); without them the log's samples are left as they are.
    kube: bool = False


def output(line: str, *, stderr: bool = False) -> Sample:
    return Sample((line,), transcript=False, stderr=stderr)


def query(name: str, compare: Compare = "rows") -> Sample:
    sql = cookbook(name, "sqlite")
    return Sample((f"eventsched query {shlex.quote(sql.strip())}",), False, compare=compare)


#: Kill a run mid-way, on a positive signal: once its log says 500 pods were bound.
KILL_MID_RUN = (
    'eventsched simulate --nodes 100 --pods 3000 --progress-every 0 & until [ "$(sqlite3 eventsched.db '
    '"SELECT COUNT(*) FROM events WHERE kind = \'bound\'" 2>/dev/null)" -gt 500 ] '
    "2>/dev/null; do sleep 0.1; done; kill -9 $!"
)
EDIT_A_ROW = (
    'sqlite3 eventsched.db "DROP TRIGGER events_no_update; '
    "UPDATE events SET data = json_set(data, '$.allocatable.cpu', 500) WHERE position = 5\""
)
#: Edit the unschedulable event a slice holds (its triggers dropped first, as above).
EDIT_A_SLICE = (
    'sqlite3 elsewhere/slice.db "DROP TRIGGER events_no_update; UPDATE events SET data = '
    "json_set(data, '$.message', 'fits nowhere') WHERE kind = 'unschedulable'\""
)

#: Move shop/checkout's binding to another node behind the triggers' back.
MOVE_A_BINDING = (
    'sqlite3 eventsched.db "DROP TRIGGER events_no_update; '
    "UPDATE events SET node = 'worker-3' WHERE kind = 'bound' AND name = 'checkout'\""
)

#: The plugin pages' samples: each plugin's example, on a log of its own.
PLUGIN_SAMPLES: dict[str, tuple[tuple[str, ...], Compare]] = {
    "nodelabel": (
        (
            "eventsched simulate --config examples/profiles/nodelabel.yaml examples/nodelabel/",
            "eventsched explain default/train-a100",
            "eventsched explain default/web",
        ),
        "text",
    ),
    "pinnedhost": (
        (
            "eventsched simulate --config examples/profiles/pinnedhost.yaml examples/pinnedhost/",
            "eventsched explain default/batch",
            'eventsched query --format json "SELECT plugin, data FROM events '
            "WHERE kind = 'input_recorded' AND name = 'typo'\"",
        ),
        "text",
    ),
    "randomscore": (
        (
            "eventsched simulate --config examples/profiles/randomscore.yaml examples/randomscore/",
            "eventsched explain default/web-0",
        ),
        "header",
    ),
    "importancesort": (
        (
            "eventsched simulate --config examples/profiles/importancesort.yaml "
            "examples/importancesort/",
            "eventsched explain default/checkout-api",
        ),
        "text",
    ),
    "coscheduling": (
        (
            "eventsched simulate --config examples/profiles/coscheduling.yaml "
            "examples/coscheduling/",
            "eventsched explain shop/train-0",
        ),
        "text",
    ),
    "capacityscheduling": (
        (
            "eventsched simulate --config examples/profiles/capacityscheduling.yaml "
            "examples/capacityscheduling/",
            "eventsched explain team-a/a-2",
        ),
        "text",
    ),
    "noderesourcetopology": (
        (
            "eventsched simulate --config examples/profiles/noderesourcetopology.yaml "
            "examples/noderesourcetopology/",
            "eventsched explain default/analytics",
            "eventsched explain default/db",
        ),
        "text",
    ),
    "stickynode": (
        (
            "eventsched simulate --config examples/profiles/stickynode.yaml "
            "examples/stickynode/cluster.yaml",
            "eventsched sticky list",
            "eventsched simulate --config examples/profiles/stickynode.yaml "
            "examples/stickynode/cluster.yaml examples/stickynode/more-nodes.yaml",
            "eventsched explain shop/db-0",
            "eventsched sticky forget shop/StatefulSet/db/0",
        ),
        "text",
    ),
    "networktraffic": (
        (
            "eventsched simulate --config networktraffic.yaml examples/networktraffic/",
            "eventsched explain default/web-1",
        ),
        "text",
    ),
}

CONFIG_HEAD = (
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n"
    "profiles:\n"
    "  - schedulerName: eventsched"
)

LOGS = [
    # The home page: the example cluster, simulated twice, explained, replayed.
    Log(
        {
            "simulate.txt": output("eventsched simulate examples/cluster"),
            "simulate-again.txt": output("eventsched simulate examples/cluster", stderr=True),
            "explain.txt": output("eventsched explain default/too-big"),
            "replay.txt": output("eventsched replay"),
            "query.txt": output(
                "eventsched query 'SELECT kind, COUNT(*) AS events FROM decisions "
                "GROUP BY kind ORDER BY events DESC, kind'"
            ),
        }
    ),
    # The query cookbook: the example cluster twice, then Coscheduling with its profile.
    Log(
        {
            "query-moved.txt": query("moved", "header"),
            "query-rejecter.txt": query("top-rejecter", "header"),
            "query-unschedulable-time.txt": query("unschedulable-time", "header"),
            "query-configurations.txt": query("configurations"),
            "query-under-configuration.txt": query("under-configuration"),
            "query-winning-scores.txt": query("winning-scores"),
        },
        setup=(
            "eventsched simulate examples/cluster/",
            "eventsched simulate examples/cluster/",
            "eventsched simulate --config examples/profiles/coscheduling.yaml "
            "examples/coscheduling/",
        ),
    ),
    # The numbers page: the cluster as the scheduler saw it, the queue and numbers in SQL.
    Log(
        {
            # Which pods share a node varies from run to run (ties are broken by seed).
            "explain-at.txt": Sample(
                ("eventsched explain shop/checkout --at 40",), compare="header"
            ),
            "query-pod-queue.txt": output(
                "eventsched query 'SELECT namespace, name, queue, reason, priority, place "
                "FROM pod_queue ORDER BY queue, place'"
            ),
            "query-resource-rejections.txt": output(
                "eventsched query 'SELECT name, node, resource, request, allocatable "
                "FROM resource_rejections ORDER BY position, node'"
            ),
        },
        setup=("eventsched simulate examples/cluster/",),
    ),
    # The query cookbook's preemption views: the preemption example, where two pods preempt.
    Log(
        {
            "query-preemptions.txt": query("preemptions"),
            "query-preemption-victims.txt": query("preemption-victims"),
            "explain-preemption.txt": Sample(
                ("eventsched explain shop/payments", "eventsched explain jobs/report-1")
            ),
        },
        setup=("eventsched simulate examples/preemption/",),
    ),
    # The audit page's gates: a pod held by two gates, lifted one after the other (chains_run.py).
    Log(
        {
            "explain-gates.txt": Sample(("eventsched explain default/train",)),
            "query-scheduling-gates.txt": query("scheduling-gates"),
        },
        setup=(f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'chains_run.py'))} gates",),
    ),
    # The audit page's gang: ml/ring stuck, explained while its scheduler runs (chains_run.py).
    Log(
        {
            "explain-gang.txt": Sample(
                (
                    f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'chains_run.py'))} "
                    "gang 'eventsched explain ml/ring-0' 'eventsched explain ml/ring-2'",
                ),
                transcript=False,
            ),
        }
    ),
    # The audit page: replay, counterfactual replay, then an edited row.
    Log(
        {
            "audit-replay.txt": Sample(("eventsched replay",)),
            "audit-counterfactual.txt": Sample(
                ("eventsched replay --config examples/profiles/most-allocated.yaml",),
                compare="header",
            ),
            "audit-edit.txt": Sample((EDIT_A_ROW, "eventsched replay"), compare="header"),
        },
        setup=("eventsched simulate examples/cluster",),
    ),
    # The audit page: a binding moved behind the triggers' back, as each reader says it.
    Log(
        {
            "integrity-unchecked.txt": Sample(
                ("eventsched explain default/too-big --check-events 1 | head -3",)
            ),
            "integrity-explain.txt": Sample(
                (MOVE_A_BINDING, "eventsched explain shop/checkout | head -4")
            ),
            "integrity-json.txt": Sample(
                ("eventsched explain shop/checkout --json | jq .integrity",)
            ),
            "integrity-query.txt": Sample(
                (
                    'eventsched query "SELECT position, name, node FROM placements '
                    "WHERE namespace = 'shop' ORDER BY position\"",
                    "eventsched query 'SELECT node, COUNT(*) AS pods FROM placements "
                    "GROUP BY node ORDER BY node'",
                ),
                stderr=True,
            ),
            "integrity-replay.txt": Sample(("eventsched replay",)),
        },
        setup=("eventsched simulate examples/cluster",),
    ),
    # The audit and retention pages: a run killed mid-way, another one, replay, prune.
    Log(
        {
            "audit-kill.txt": Sample(
                (KILL_MID_RUN, "eventsched simulate examples/cluster", "eventsched replay"),
                stderr=True,
                compare="header",
            ),
            "prune.txt": Sample(
                (
                    "sleep 2",
                    "eventsched db prune --before 1s --dry-run",
                    "eventsched db prune --before 1s",
                    "eventsched replay",
                    "eventsched query \"SELECT position, data->>'throughPosition' AS through "
                    "FROM decisions WHERE kind = 'maintenance' AND data->>'action' = 'pruned'\"",
                )
            ),
        }
    ),
    # The export page: a pod's slice, taken to another directory and opened there; then
    # an edited one, and refused input. The source log is the example cluster, twice.
    Log(
        {
            "export.txt": Sample(
                (
                    "eventsched export --pod default/too-big --out slice.db",
                    "mkdir elsewhere && mv slice.db elsewhere/",
                    "cd elsewhere && eventsched replay --db slice.db",
                    "cd elsewhere && eventsched explain --db slice.db default/too-big | head -4",
                    'cd elsewhere && eventsched query --db slice.db "SELECT json_extract(state, '
                    "'$.source') AS source, json_extract(state, '$.selection') AS selection "
                    "FROM snapshots WHERE projection = 'log-slice/v1'\"",
                    "eventsched export --since 1h --out last-hour.db --json | head -5",
                )
            ),
            "export-edit.txt": Sample((EDIT_A_SLICE, "eventsched replay --db elsewhere/slice.db")),
            "export-refused.txt": Sample(
                (
                    "eventsched export --pod default/nobody --out x.db",
                    "eventsched export --since 2h --until 3h --out x.db",
                    "eventsched export --since 1h --out elsewhere/slice.db",
                    "eventsched simulate --db elsewhere/slice.db examples/cluster",
                ),
                stderr=True,
            ),
        },
        setup=("eventsched simulate examples/cluster", "eventsched simulate examples/cluster"),
    ),
    # The extender page: kube-scheduler's calls for one pod, explained and replayed.
    Log(
        {
            "extender-explain.txt": output("eventsched explain default/train"),
            "extender-replay.txt": output("eventsched replay"),
        },
        setup=(f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'extender_calls.py'))}",),
    ),
    # The shadow: `eventsched shadow` beside the real kube-scheduler, twice (shadow_run.py):
    # with kube-scheduler's configuration (eventsched.db), with bin packing
    # (most-allocated.db). Which node kube-scheduler picks among equals is random.
    Log(
        {
            "query-shadow-verdicts.txt": query("shadow-verdicts", "header"),
            "query-shadow-differ.txt": Sample(
                (
                    "eventsched query --db sqlite:///most-allocated.db --max-width 0 "
                    + shlex.quote(cookbook("shadow-differ", "sqlite").strip()),
                ),
                transcript=False,
                compare="header",
            ),
            "explain-shadow.txt": Sample(
                (
                    "eventsched explain default/pod-00002",
                    "eventsched explain --db sqlite:///most-allocated.db default/pod-00001",
                    "eventsched replay --db sqlite:///most-allocated.db",
                ),
                compare="header",
            ),
        },
        setup=(f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'shadow_run.py'))}",),
        kube=True,
    ),
    # Refused input: one line naming the field (configuration page, query page), and the
    # views a query may name.
    Log(
        {
            "config-errors.txt": Sample(
                (
                    "eventsched config check range.yaml",
                    "eventsched config check typo.yaml",
                    "eventsched config check extenders.yaml",
                    "eventsched config check binders.yaml",
                ),
                transcript=False,
                stderr=True,
            ),
            "query-refused.txt": Sample(('eventsched query "DELETE FROM snapshots"',), stderr=True),
            "query-views.txt": Sample(("eventsched query --list-views",)),
            "simulate-symlink-loop.txt": Sample(("eventsched simulate manifests",), stderr=True),
            "versions-refused.txt": Sample(
                (
                    "eventsched simulate --kubernetes-version 1.27 examples/cluster",
                    "eventsched simulate --feature-gates PodLevelResource=true examples/cluster",
                    "eventsched simulate --feature-gates InPlacePodVerticalScaling=false "
                    "examples/cluster",
                ),
                stderr=True,
            ),
            "query-unknown-view.txt": Sample(
                ('eventsched query "SELECT * FROM decision"',), stderr=True
            ),
        },
        setup=(
            f"printf '%s\\n' {shlex.quote(CONFIG_HEAD)} '    pluginConfig:' "
            "'      - name: NetworkTraffic' "
            "'        args: {address: \"http://prometheus:9090\", timeRange: 1m}' > range.yaml",
            f"printf '%s\\n' {shlex.quote(CONFIG_HEAD)} '    plugins:' '      score:' "
            "'        enabled:' '          - name: NodeAfinity' > typo.yaml",
            f"printf '%s\\n' {shlex.quote(CONFIG_HEAD)} 'extenders:' "
            "'  - urlPrefix: http://127.0.0.1:8888/' '    prioritizeVerb: prioritize' "
            "> extenders.yaml",
            "mkdir manifests && cp examples/cluster/nodes.yaml manifests/ "
            "&& ln -s .. manifests/all",
            f"printf '%s\\n' {shlex.quote(CONFIG_HEAD)} 'extenders:' "
            "'  - {urlPrefix: \"http://a:8888/\", bindVerb: bind}' "
            "'  - {urlPrefix: \"http://b:8888/\", bindVerb: bind}' > binders.yaml",
        ),
    ),
    # simulate on a large manifest, stderr in a pipe: what it loads, and progress lines
    # (their count and figures depend on the machine: the first line of each is compared).
    Log(
        {
            "simulate-progress.txt": Sample(
                ("eventsched simulate large.yaml --progress-every 0.1 > summary.txt",),
                stderr=True,
                compare="header",
            )
        },
        setup=(
            f"{shlex.quote(sys.executable)} -c "
            + shlex.quote(
                "import sys, yaml; from eventsched.cluster.generate import generate_manifests; "
                "yaml.dump_all(generate_manifests(500, 6000, 0), sys.stdout, "
                "Dumper=getattr(yaml, 'CSafeDumper', yaml.SafeDumper), sort_keys=False)"
            )
            + " > large.yaml",
        ),
    ),
    # CapacityScheduling with an ElasticQuota whose min is above its max: the warning too.
    Log(
        {
            "plugin-capacityscheduling-min-above-max.txt": Sample(
                (
                    "eventsched simulate --config examples/profiles/capacityscheduling.yaml "
                    "examples/capacityscheduling-min-above-max/",
                    "eventsched explain team-a/b",
                ),
                stderr=True,
            )
        }
    ),
    *[
        Log(
            {f"plugin-{name}.txt": Sample(lines, compare=compare)},
            prometheus=name == "networktraffic",
        )
        for name, (lines, compare) in PLUGIN_SAMPLES.items()
    ],
]

#: Files whose fenced blocks must show a masked prefix of a sample.
QUOTED = {ROOT / "README.md": "simulate.txt"}


def make(names: set[str] | None = None) -> dict[str, str]:
    """Every sample (or those named), each log made afresh in a temporary directory."""
    made: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        prometheus_url = None
        for log in LOGS:
            if names is not None and not names & log.samples.keys():
                continue
            if log.kube and not os.environ.get(KUBE_BIN):
                print(
                    f"skipped {', '.join(log.samples)}: the real kube-scheduler is needed "
                    f"(${KUBE_BIN})",
                    file=sys.stderr,
                )
                continue
            if log.prometheus and prometheus_url is None:
                prometheus_url = stack.enter_context(_prometheus())
            made.update(_run_on_a_fresh_log(log, prometheus_url))
    return made


@contextlib.contextmanager
def _prometheus() -> Iterator[str]:
    from tests.promharness import running_prometheus

    with tempfile.TemporaryDirectory() as home, running_prometheus(Path(home)) as prom:
        yield prom.url


def _run_on_a_fresh_log(log: Log, prometheus_url: str | None) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        (where / "bin").mkdir()
        wrapper = where / "bin" / "eventsched"
        wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m eventsched.cli.main "$@"\n')
        wrapper.chmod(0o755)
        (where / "examples").symlink_to(ROOT / "examples")
        if prometheus_url is not None:
            profile = (ROOT / "examples" / "profiles" / "networktraffic.yaml").read_text()
            profile = re.sub(r"address: \S+", f"address: {prometheus_url}", profile)
            profile = re.sub(r"timeRange: \d+", f"timeRange: {PROMETHEUS_WINDOW}", profile)
            (where / "networktraffic.yaml").write_text(profile)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("EVENTSCHED_") or (log.kube and k == KUBE_BIN)
        }
        env.update(
            COLUMNS="100",
            PATH=f"{where / 'bin'}{os.pathsep}{env.get('PATH', '')}",
            PYTHONPATH=str(ROOT),
        )
        for line in ("eventsched db upgrade", *log.setup):
            _sh(line, where, env, stderr=False)
        made = {}
        for name, sample in log.samples.items():
            parts = []
            for line in sample.lines:
                printed = _sh(line, where, env, stderr=sample.stderr)
                parts.append(f"$ {line}\n{printed}" if sample.transcript else printed)
            made[name] = "".join(parts)
        return made


def _sh(line: str, where: Path, env: dict[str, str], *, stderr: bool) -> str:
    done = subprocess.run(
        ["sh", "-c", line],
        cwd=where,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if stderr else subprocess.DEVNULL,
        text=True,
        timeout=300,
        check=False,
    )
    return done.stdout


def mask(text: str) -> str:
    """What stays the same from run to run: no times, uids, hashes or numbers, nor the
    temporary directory a log is made in or the host a slice was exported on."""
    text = re.sub(r"/tmp/tmp\w+", "<dir>", text)
    text = re.sub(r"\(on [^)]+\)", "(on <host>)", text)
    text = re.sub(r'"host": "[^"]*"', '"host": "<host>"', text)
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+(?:\+00:00|Z)?", "<time>", text)
    text = re.sub(r"\b[0-9a-f]{8}-[0-9a-f-]{27}\b", "<uid>", text)
    text = re.sub(r"\b[0-9a-f]{16,}\b", "<hex>", text)
    text = re.sub(r"\d+(?:\.\d+)?", "0", text)
    text = re.sub(r"[ ]+", " ", text)
    # A value cut with … at a fixed width ends elsewhere once its numbers are masked
    # (a longer number before the cut): compare such a line up to a fixed length.
    return re.sub(r"^(.{0,100}).*…$", r"\1…", text, flags=re.M)


def compared(sample: Sample, text: str) -> str:
    """What `--check` compares of a sample (see `Sample.compare`), masked."""
    if sample.compare == "rows":
        lines = text.splitlines(keepends=True)
        return mask("".join(lines[:1])) + "".join(sorted(mask(line) for line in lines[2:]))
    if sample.compare == "header":
        # Each command's first line of output (a query's header line: the rule under it
        # is as wide as the widest row).
        kept, take = [], True
        for line in text.splitlines(keepends=True):
            if sample.transcript and line.startswith("$ "):
                kept.append(line)
                take = True
            elif take:
                kept.append(line)
                take = False
        text = "".join(kept)
    return mask(text)


def quoted_blocks(path: Path) -> list[str]:
    """The fenced blocks of `path` that name no language (output, not code)."""
    blocks: list[str] = []
    lines: list[str] | None = None
    language = ""
    for line in path.read_text().splitlines(keepends=True):
        if not line.startswith("```"):
            if lines is not None:
                lines.append(line)
        elif lines is None:
            lines, language = [], line[3:].strip()
        else:
            if not language:
                blocks.append("".join(lines))
            lines = None
    return blocks


def check(made: dict[str, str]) -> list[str]:
    problems = []
    samples = {name: sample for log in LOGS for name, sample in log.samples.items()}
    for name, text in made.items():
        kept = (HERE / name).read_text()
        was, now = compared(samples[name], kept), compared(samples[name], text)
        if was != now:
            diff = difflib.unified_diff(
                was.splitlines(), now.splitlines(), "kept", "now", n=1, lineterm=""
            )
            problems.append(
                f"docs/samples/{name} differs from what the command prints now "
                "(masked: times, uids and numbers as 0):\n" + "\n".join(diff)
            )
    for path, name in QUOTED.items():
        if name not in made:
            continue
        sample = mask(made[name])
        if not any(mask(b.replace("  ...\n", "")) in sample for b in quoted_blocks(path)):
            problems.append(f"{path.name} shows no block of docs/samples/{name} as it is now")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    parser.add_argument("names", nargs="*", help="only these samples (e.g. plugin-nodelabel.txt)")
    args = parser.parse_args()
    made = make(set(args.names) if args.names else None)
    if args.check:
        problems = check(made)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    for name, text in made.items():
        (HERE / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
