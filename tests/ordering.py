"""The longest test files first, so that two workers finish together.

With `--dist loadfile` a file runs whole on one worker, and files are handed out in the
order they were collected. In name order the suite ended with tests/shadow and tests/ui,
whose tests start real control planes, and one worker ran them alone for the last 4-5
minutes. Handing out the longest files first (longest-processing-time order) leaves the
short ones to fill the end. The list is a measured one (the files' total test time,
pytest --junitxml on 2026-11-28); a file missing from it only runs later, in name order.
The order within a file is unchanged.
"""

from __future__ import annotations

import pytest

#: Longest first (seconds of a run on 3 workers, setup included).
LONGEST_FIRST = (
    "tests/docs/test_samples_b.py",  # 347 s
    "tests/docs/test_samples_a.py",  # 232
    "tests/differential/test_generated_preemption.py",  # 194
    "tests/cli/test_export.py",  # 160
    "tests/differential/test_generated_b.py",  # 148
    "tests/shadow/test_shadow_kube.py",  # 147
    "tests/kube/test_kube_provisioning.py",  # 141
    "tests/differential/test_generated.py",  # 131
    "tests/differential/test_generated_c.py",  # 125
    "tests/cli/test_bench_kube_workload.py",  # 123
    "tests/cli/test_bench_kube.py",  # 114
    "tests/image/test_image.py",  # 116 s of setup on a fresh machine
    "tests/differential/extenderserver/test_extender_differential.py",  # 109
    "tests/cli/test_sticky.py",  # 105
    "tests/benchmarks/test_chaos_runs.py",  # 100
    "tests/cli/test_bench.py",  # 99
    "tests/cli/test_cli.py",  # 94
    "tests/kube/test_kube_runner.py",  # 94
    "tests/ui/test_shadow_pages.py",  # 75
    "tests/audit/test_explain_preemption.py",  # 71
    "tests/crash/test_crash_consistency.py",  # 66
    "tests/kube/test_kube_scheduler.py",  # 65
    "tests/kube/test_election.py",  # 58
    "tests/audit/test_replay.py",  # 57
)
_RANK = {path: rank for rank, path in enumerate(LONGEST_FIRST)}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every worker sorts the same collection the same way (pytest-xdist checks that)."""
    root = config.rootpath
    items.sort(key=lambda item: _RANK.get(item.path.relative_to(root).as_posix(), len(_RANK)))
