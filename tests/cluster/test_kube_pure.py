"""The Kubernetes adapter's pure parts: Event bodies, the status patch, the rate limiter, leases."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from eventsched.cluster.kube.election import LeaseSettings
from eventsched.cluster.kube.ratelimit import TokenBucket
from eventsched.cluster.kube.recorder import event_body, pod_reference, unschedulable_patch
from eventsched.model import Pod

NOW = datetime(2026, 11, 23, 10, 0, 0, 123456, tzinfo=UTC)
POD = Pod(uid="u-1", namespace="shop", name="web-1", scheduler_name="eventsched")


def test_event_body_is_client_gos_events_v1_event() -> None:
    body = event_body(
        POD,
        "Normal",
        "Scheduled",
        "Binding",
        "Successfully assigned shop/web-1 to node-a",
        "eventsched",
        "eventsched-host",
        NOW,
    )
    nanos = int(NOW.timestamp() * 1_000_000) * 1000
    assert body == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"web-1.{nanos:x}", "namespace": "shop"},
        "eventTime": "2026-11-23T10:00:00.123456Z",
        "reportingController": "eventsched",
        "reportingInstance": "eventsched-host",
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": {
            "kind": "Pod",
            "namespace": "shop",
            "name": "web-1",
            "uid": "u-1",
            "apiVersion": "v1",
        },
        "note": "Successfully assigned shop/web-1 to node-a",
        "type": "Normal",
    }
    assert "related" not in body


def test_event_body_names_the_related_pod() -> None:
    """A victim's Preempted Event: `related` is the preemptor's reference, with its version."""
    preemptor = Pod(uid="u-2", namespace="shop", name="big", scheduler_name="eventsched")
    related = pod_reference(preemptor, "42")
    body = event_body(
        POD,
        "Normal",
        "Preempted",
        "Preempting",
        "Preempted by a pod on node node-a",
        "eventsched",
        "eventsched-host",
        NOW,
        "7",
        related,
    )
    assert body["regarding"] == pod_reference(POD, "7")
    assert body["related"] == {
        "kind": "Pod",
        "namespace": "shop",
        "name": "big",
        "uid": "u-2",
        "apiVersion": "v1",
        "resourceVersion": "42",
    }


def test_first_failure_sets_the_condition_with_a_fresh_transition_time() -> None:
    patch = unschedulable_patch(None, "0/3 nodes are available: 3 Insufficient cpu.", None, NOW)
    assert patch == {
        "status": {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/3 nodes are available: 3 Insufficient cpu.",
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-11-23T10:00:00Z",
                }
            ]
        }
    }


def test_same_failure_again_patches_nothing() -> None:
    current = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/3 nodes are available: 3 Insufficient cpu.",
        "lastTransitionTime": "2026-11-23T09:00:00Z",
    }
    assert unschedulable_patch(current, current["message"], None, NOW) is None


def test_same_failure_with_a_nomination_to_write_patches_only_that() -> None:
    """`updatePod`: the nomination alone is reason enough to patch; "" clears it (null)."""
    current = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "m",
        "lastTransitionTime": "2026-11-23T09:00:00Z",
    }
    for nomination, written in (("node-a", "node-a"), ("", None)):
        patch = unschedulable_patch(current, "m", nomination, NOW)
        assert patch is not None and patch["status"]["nominatedNodeName"] == written
        assert patch["status"]["conditions"][0]["lastTransitionTime"] == "2026-11-23T09:00:00Z"


def test_new_message_keeps_the_transition_time_while_status_stays_false() -> None:
    current = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "old",
        "lastTransitionTime": "2026-11-23T09:00:00Z",
    }
    patch = unschedulable_patch(current, "new", "node-b", NOW)
    assert patch is not None
    condition = patch["status"]["conditions"][0]
    assert condition["message"] == "new"
    assert condition["lastTransitionTime"] == "2026-11-23T09:00:00Z"
    assert patch["status"]["nominatedNodeName"] == "node-b"


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_token_bucket_allows_a_burst_then_paces_at_qps() -> None:
    t = FakeClock()
    bucket = TokenBucket(10, 3, clock=t.clock, sleep=t.sleep)
    waits = [bucket.acquire() for _ in range(5)]
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert waits[3] == pytest.approx(0.1)
    assert waits[4] == pytest.approx(0.1)
    t.now += 10  # idle refills, up to the burst only
    assert [bucket.acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.acquire() > 0


def test_token_bucket_without_limit_never_waits() -> None:
    t = FakeClock()
    bucket = TokenBucket(-1, 0, clock=t.clock, sleep=t.sleep)
    assert all(bucket.acquire() == 0 for _ in range(1000))
    assert t.slept == []


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        (LeaseSettings(lease_duration=10, renew_deadline=10), "leaderElection.leaseDuration"),
        (LeaseSettings(renew_deadline=2, retry_period=2), "leaderElection.renewDeadline"),
        (LeaseSettings(retry_period=0), "leaderElection.retryPeriod"),
        (LeaseSettings(resource_namespace=""), "leaderElection.resourceNamespace"),
    ],
)
def test_lease_settings_the_client_library_would_exit_on_are_refused(
    settings: LeaseSettings, field: str
) -> None:
    assert field in [f for f, _ in settings.problems()]


def test_default_lease_settings_are_usable() -> None:
    assert LeaseSettings().problems() == []
