"""Leader election on a Lease (cluster/kube/election.py, leaselock.py), as client-go runs it.

Tests on `kube_server` run against the emulator and, when its binaries are present
(EVENTSCHED_KUBE_BIN), a real kube-apiserver; those on `apiserver` need the emulator's
failure injection.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest
from kubernetes import client

from eventsched.cluster.kube.election import LeaderElector, LeaseSettings, lease_elector
from eventsched.cluster.kube.leaselock import ElectionRecord, LeaseError, LeaseLock
from eventsched.cluster.kube.rest import Rest
from tests.kube.apiserver import ApiServer
from tests.kube.realserver import LEASE_NAMESPACE, KubeServer

FAST = LeaseSettings(
    lease_duration=3, renew_deadline=2, retry_period=1, resource_namespace=LEASE_NAMESPACE
)
#: Long enough for a few of FAST's retry periods, each jittered up to 2.2 s, on a loaded
#: machine (the wait helpers' defaults, 5 s and 10 s, are not).
PERIODS_TIMEOUT = 20.0
#: A MicroTime as client-go writes it.
MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
#: Times written by another machine whose clock is far behind ours.
LONG_AGO = "2001-01-01T00:00:00.000000Z"


class Candidate:
    """One elector on the test's API server, with what it told its caller and how many
    Lease reads it got answered."""

    def __init__(
        self, api: client.ApiClient, identity: str, settings: LeaseSettings = FAST
    ) -> None:
        self.statuses: list[bool] = []
        self._reads = 0
        self._reads_lock = threading.Lock()
        self.elector: LeaderElector = lease_elector(
            api.configuration,
            settings,
            identity,
            on_status=lambda _name, leading: self.statuses.append(leading),
            observer=self._request,
        )
        self.elector.start()

    def _request(self, _host: str, method: str, code: str, _seconds: float | None) -> None:
        if method == "GET" and code == "200":
            with self._reads_lock:
                self._reads += 1

    @property
    def reads(self) -> int:
        with self._reads_lock:
            return self._reads


@pytest.fixture
def candidates(api_client: client.ApiClient) -> Iterator[list[Candidate]]:
    """Candidates started by the test; each is released afterwards."""
    started: list[Candidate] = []
    yield started
    for candidate in started:
        candidate.elector.release()


def lease(server: KubeServer | ApiServer, name: str = "eventsched") -> dict:
    found = server.get("leases", name, LEASE_NAMESPACE)
    assert found is not None
    return dict(found["spec"])


def other_holder(server: KubeServer, transitions: int, renewed: str = LONG_AGO) -> None:
    """The Lease as another candidate left it: held, 5 s long, its times long ago."""
    server.create(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "eventsched", "namespace": LEASE_NAMESPACE},
            "spec": {
                "holderIdentity": "other",
                "leaseDurationSeconds": 5,
                "acquireTime": LONG_AGO,
                "renewTime": renewed,
                "leaseTransitions": transitions,
            },
        }
    )


def test_a_new_lease_is_created_and_renewed_as_client_go_writes_it(
    kube_server: KubeServer, api_client: client.ApiClient, candidates: list[Candidate]
) -> None:
    a = Candidate(api_client, "a")
    candidates.append(a)
    assert a.elector.leading.wait(10)
    first = lease(kube_server)
    assert first["holderIdentity"] == "a"
    assert first["leaseDurationSeconds"] == 3
    assert first.get("leaseTransitions", 0) == 0
    # The leader renews at once after acquiring (as client-go does), so renewTime may
    # already be past acquireTime (MicroTime strings compare in time order).
    assert MICRO_TIME.match(first["acquireTime"]) and first["renewTime"] >= first["acquireTime"]
    kube_server.wait_for(
        lambda: lease(kube_server)["renewTime"] != first["renewTime"], PERIODS_TIMEOUT
    )
    renewed = lease(kube_server)
    assert MICRO_TIME.match(renewed["renewTime"])
    assert (renewed["holderIdentity"], renewed["acquireTime"]) == ("a", first["acquireTime"])
    assert renewed.get("leaseTransitions", 0) == 0
    assert a.statuses == [False, True]
    assert not a.elector.lost.is_set()


def test_a_lease_is_expired_by_our_clock_of_its_changes_not_by_its_times(
    kube_server: KubeServer, api_client: client.ApiClient, candidates: list[Candidate]
) -> None:
    """Its holder's clock is years behind: while it renews, the lease is held all the same;
    once it stops, the candidate takes it leaseDurationSeconds later, one transition on."""
    other_holder(kube_server, transitions=4)
    renewing = threading.Event()
    renewing.set()

    def renew() -> None:
        second = 0
        while renewing.is_set():
            second += 1
            kube_server.patch(
                "leases",
                "eventsched",
                {
                    "spec": {
                        "renewTime": f"2001-01-01T00:{second // 60:02d}:{second % 60:02d}.000000Z"
                    }
                },
                LEASE_NAMESPACE,
                content_type="application/merge-patch+json",
            )
            renewing.wait(0.3)
            if not renewing.is_set():
                return

    renewer = threading.Thread(target=renew, daemon=True)
    renewer.start()
    try:
        b = Candidate(api_client, "b")
        candidates.append(b)
        kube_server.wait_for(lambda: b.reads >= 4, PERIODS_TIMEOUT)
        assert not b.elector.leading.is_set()
        assert lease(kube_server)["holderIdentity"] == "other"
    finally:
        renewing.clear()
        renewer.join(10)

    assert b.elector.leading.wait(20)
    taken = lease(kube_server)
    assert taken["holderIdentity"] == "b"
    assert taken["leaseTransitions"] == 5
    assert taken["leaseDurationSeconds"] == 3
    assert MICRO_TIME.match(taken["acquireTime"]) and taken["renewTime"] >= taken["acquireTime"]
    assert b.statuses == [False, True]


def test_two_candidates_for_an_expired_lease_one_leads_and_one_transition_is_counted(
    kube_server: KubeServer, api_client: client.ApiClient, candidates: list[Candidate]
) -> None:
    """Both see it expire and write; the later write carries a stale resourceVersion, is
    refused (409) and its candidate stands by."""
    other_holder(kube_server, transitions=7)
    b, c = Candidate(api_client, "b"), Candidate(api_client, "c")
    candidates.extend([b, c])
    kube_server.wait_for(lambda: b.elector.leading.is_set() or c.elector.leading.is_set(), 20)
    leader, standby = (b, c) if b.elector.leading.is_set() else (c, b)
    # The standby has read the new holder's Lease twice since.
    reads = standby.reads
    kube_server.wait_for(lambda: standby.reads >= reads + 2, PERIODS_TIMEOUT)
    assert not standby.elector.leading.is_set()
    taken = lease(kube_server)
    assert taken["holderIdentity"] == leader.elector.identity
    assert taken["leaseTransitions"] == 8
    assert standby.statuses == [False]


def test_a_write_over_a_lease_changed_since_it_was_read_is_a_conflict(
    kube_server: KubeServer, api_client: client.ApiClient
) -> None:
    rest = Rest(api_client.configuration)
    one = LeaseLock(rest, LEASE_NAMESPACE, "race", "one")
    two = LeaseLock(rest, LEASE_NAMESPACE, "race", "two")
    held_by = {name: ElectionRecord(name, 3, LONG_AGO, LONG_AGO) for name in ("one", "two")}
    assert one.get() is None and two.get() is None
    one.create(held_by["one"])
    with pytest.raises(LeaseError) as created_twice:
        two.create(held_by["two"])
    assert created_twice.value.conflict

    assert two.get() == held_by["one"]
    one.update(replace(held_by["one"], renew_time="2001-01-01T00:00:01.000000Z"))
    with pytest.raises(LeaseError) as stale:
        two.update(replace(held_by["two"], leader_transitions=1))
    assert stale.value.conflict
    assert lease(kube_server, "race")["holderIdentity"] == "one"  # nothing overwritten

    two.get()  # read again, the write goes through (the next period's attempt)
    two.update(replace(held_by["two"], leader_transitions=1))
    assert lease(kube_server, "race")["holderIdentity"] == "two"


def test_release_clears_the_holder_and_stops_the_election(
    kube_server: KubeServer, api_client: client.ApiClient
) -> None:
    a = Candidate(api_client, "a")
    assert a.elector.leading.wait(10)
    held = lease(kube_server)
    a.elector.release()
    released = lease(kube_server)
    assert released["holderIdentity"] == ""
    assert released["leaseDurationSeconds"] == 1
    assert released.get("leaseTransitions", 0) == held.get("leaseTransitions", 0)
    assert MICRO_TIME.match(released["renewTime"])
    assert a.statuses == [False, True, False]
    assert not a.elector.leading.is_set() and not a.elector.lost.is_set()


def test_a_standby_takes_a_released_lease_without_waiting_out_its_duration(
    kube_server: KubeServer, api_client: client.ApiClient, candidates: list[Candidate]
) -> None:
    """A 60 s lease: the standby leads long before it could have expired."""
    long_lease = replace(FAST, lease_duration=60)
    a = Candidate(api_client, "a", long_lease)
    assert a.elector.leading.wait(10)
    b = Candidate(api_client, "b", long_lease)
    candidates.append(b)
    kube_server.wait_for(lambda: b.reads >= 2, PERIODS_TIMEOUT)
    assert not b.elector.leading.is_set()
    a.elector.release()
    assert b.elector.leading.wait(30)
    taken = lease(kube_server)
    assert (taken["holderIdentity"], taken["leaseTransitions"]) == ("b", 1)


def test_a_hung_api_server_cannot_hold_a_renewal_past_the_deadline(
    apiserver: ApiServer, api_client: client.ApiClient
) -> None:
    a = Candidate(api_client, "a")
    assert a.elector.leading.wait(10)
    hold = apiserver.hold_next("PUT", r"/leases/", times=1)
    try:
        hold.wait(1, timeout=10)
        assert a.elector.lost.wait(10)
    finally:
        hold.drop()
    assert not a.elector.leading.is_set()
    assert a.statuses == [False, True, False]


def test_failed_lease_reads_at_start_are_retried_until_the_lease_is_taken(
    apiserver: ApiServer, api_client: client.ApiClient, candidates: list[Candidate]
) -> None:
    apiserver.fail_next("GET", r"/leases/", 503, times=2)
    a = Candidate(api_client, "a")
    candidates.append(a)
    assert a.elector.leading.wait(15)
    failed = [r.status for r in apiserver.requests if r.resource == "leases" and r.verb == "get"]
    assert failed[:2] == [503, 503]
    assert not a.elector.lost.is_set()
