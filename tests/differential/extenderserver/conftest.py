"""The extender differential needs the real kube-apiserver, etcd and kube-scheduler v1.28
($EVENTSCHED_KUBE_BIN, as .ci/run sets it): it is not collected without them, since the
in-test API server cannot run kube-scheduler."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from eventsched.benchmarks.controlplane import ControlPlane
from tests.kube.realserver import real_binaries

_binaries = real_binaries()
collect_ignore = (
    []
    if _binaries is not None and _binaries.scheduler is not None
    else [
        "test_extender_differential.py",
        "test_extender_preempt_real.py",
        "test_extender_preempt_calling.py",
        "test_extender_tls_real.py",
    ]
)


@pytest.fixture(scope="module")
def plane() -> Iterator[ControlPlane]:
    """One real control plane per test module."""
    binaries = real_binaries()
    assert binaries is not None and binaries.scheduler is not None
    with ControlPlane(binaries) as cp:
        yield cp
